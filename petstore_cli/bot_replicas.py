"""The lease of a bot process and, for Matrix, the shared record of answered messages: wired from ``[bot] state``.

Every bot process holds (or waits for) the lease of its account in the state database; with PostgreSQL shared by
several processes, exactly one answers and runs the background work (:class:`petstore_bot.replicas.Leadership`),
and another takes over when it dies. With the default SQLite in each process's own state dir, every process is
alone with its lease (as one bot always was).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from petstore_api.errors import ConfigError
from petstore_bot.replicas import Leadership, Reach, Replicas
from petstore_state import Database, StateError
from petstore_state.claims import Claims
from petstore_state.lease import open_lease

__all__ = ["Replication", "open_replication"]


@dataclass
class Replication:
    """A bot process's lease (``leadership``) and, when it answers a chat, its ``replicas`` (who answers what)."""

    leadership: Leadership
    replicas: Replicas | None

    async def around(
        self, run: Callable[[asyncio.Event], Awaitable[None]], stop: asyncio.Event, *, reach: Reach | None = None
    ) -> None:
        """``run(stop)`` (a transport) with the lease held beside it (only while ``reach``, the transport's, is up:
        a process that cannot reach its chat server does not hold it); when either ends, both end and the lease's
        connection is closed."""
        holding = asyncio.create_task(self.leadership.run(stop, reach=reach))
        try:
            await run(stop)
        finally:
            stop.set()
            await holding
            self.leadership.lease.close()


def open_replication(state: str | None, *, state_dir: Path, name: str, database: Database | None = None) -> Replication:
    """The lease ``name`` (a bot account) in the ``[bot] state`` database (unset: SQLite in ``state_dir``) and,
    given that ``database`` (a transport that syncs every message to every process: Matrix), the claims of that
    account in it. ConfigError, in one line without a password, when the database cannot be used."""
    try:
        lease = open_lease(state, state_dir=state_dir, name=name)
    except StateError as exc:
        raise ConfigError(str(exc)) from None
    leadership = Leadership(lease)
    if database is None:
        return Replication(leadership=leadership, replicas=None)
    try:
        replicas = Replicas(lease=lease, claims=Claims(database, scope=name))
    except StateError as exc:
        lease.close()
        raise ConfigError(str(exc)) from None
    leadership.add("pruning of old claims", replicas.prune)
    return Replication(leadership=leadership, replicas=replicas)

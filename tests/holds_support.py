"""Held writes on the real store for tests of sessions and cores built by hand: a SQLite state file in the test's
directory, the bots' seal, decided by a role book (no in-memory twin: the rules are the store's port's own)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from petstore_bot.pending import StoredPending, room_approvers
from petstore_bot.roles import RoleBook
from petstore_bot.seal import Seal, load_key
from petstore_state import Database, open_database
from petstore_state.pending import PendingStore


def held_writes(
    database: Database,
    *,
    roles: RoleBook,
    seal: Seal,
    clock: Callable[[], float] = time.time,
    approvers: dict[str, Sequence[str] | None] | None = None,
) -> StoredPending:
    """The bots' port on ``database`` with its own ``clock``, sealing with ``seal``, deciding by ``roles``."""
    store = PendingStore(database, clock=clock)
    pending = StoredPending(store, audit=None, seal=seal, approvers=room_approvers(approvers or {}))
    return pending.governed_by(roles)


@contextmanager
def sqlite_holds(tmp_path: Path, *, roles: RoleBook, clock: Callable[[], float] = time.time) -> Iterator[StoredPending]:
    """:func:`held_writes` on a fresh SQLite state file in ``tmp_path``, closed after."""
    database = open_database(f"sqlite:///{tmp_path / 'holds.sqlite3'}", state_dir=tmp_path)
    try:
        seal = Seal(load_key(setting=None, state_dir=tmp_path))
        yield held_writes(database, roles=roles, seal=seal, clock=clock)
    finally:
        database.close()

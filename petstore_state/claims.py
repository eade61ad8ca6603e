"""Which chat messages are answered, shared by the replicas of a bot: each message answered once, none lost.

The replica holding the lease (:mod:`petstore_state.lease`) claims a message before it handles it (in a
transaction that checks, in the database itself, that it still holds the lease: its
:class:`~petstore_state.lease.Fence`) and marks it answered once its reply went out; the others wait on their copy
of the message until it is answered, and answer it themselves if they take the lease first. A claim left by a
replica that died (claimed, never answered) is taken over by the next holder: only the holder claims, so the claim
of another holder is a former one's.

One table, ``lease_claims``: ``(scope, event_id)`` (``scope`` names the bot account), who claimed it, ``claimed`` or
``answered``, and when (rows older than a day are pruned by the holder).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from .db import Database, Transaction
from .lease import Fence

__all__ = ["Claims"]

_SCHEMA = [
    "CREATE TABLE IF NOT EXISTS lease_claims ("
    " scope TEXT NOT NULL, event_id TEXT NOT NULL, holder TEXT NOT NULL, state TEXT NOT NULL,"
    " at DOUBLE PRECISION NOT NULL, PRIMARY KEY (scope, event_id))",
    "CREATE INDEX IF NOT EXISTS lease_claims_at ON lease_claims (at)",
]
_CLAIMED, _ANSWERED = "claimed", "answered"


class Claims:
    """The claims of one bot account (``scope``) in a state database."""

    def __init__(self, database: Database, *, scope: str) -> None:
        self._db = database
        self._scope = scope
        database.ensure_schema("lease_claims", _SCHEMA)

    async def claim(self, event_id: str, *, holder: str, fence: Fence | None = None) -> bool | None:
        """``holder`` is to answer ``event_id``: False when it is answered already (by anyone), None when
        ``fence`` (the lease's, :meth:`Lease.fence`) says ``holder`` no longer holds the lease."""

        def claim(tx: Transaction) -> bool | None:
            if fence is not None and tx.one(f"SELECT 1 WHERE {fence.sql}", fence.params) is None:
                return None
            inserted = tx.execute(
                "INSERT INTO lease_claims (scope, event_id, holder, state, at) VALUES (?, ?, ?, ?, ?)"
                " ON CONFLICT (scope, event_id) DO NOTHING",
                (self._scope, event_id, holder, _CLAIMED, time.time()),
            )
            if inserted == 1:
                return True
            row = tx.one(
                "SELECT holder, state FROM lease_claims WHERE scope = ? AND event_id = ?", (self._scope, event_id)
            )
            if row is None or row[1] == _ANSWERED:
                return False
            if row[0] == holder:
                return True
            taken = tx.execute(
                "UPDATE lease_claims SET holder = ?, at = ? WHERE scope = ? AND event_id = ? AND state = ?"
                " AND holder = ?",
                (holder, time.time(), self._scope, event_id, _CLAIMED, row[0]),
            )
            return taken == 1

        return await self._db.run(claim)

    async def still_mine(self, event_id: str, *, holder: str, fence: Fence) -> bool:
        """Whether ``holder`` may send its answer to ``event_id`` now, just before it does: its claim stands (no
        later holder took it over, nobody answered it) and ``fence`` holds, in one transaction."""
        row = await self._db.run(
            lambda tx: tx.one(
                "SELECT 1 FROM lease_claims WHERE scope = ? AND event_id = ? AND holder = ? AND state = ?"
                f" AND {fence.sql}",
                (self._scope, event_id, holder, _CLAIMED, *fence.params),
            )
        )
        return row is not None

    async def answered(self, event_ids: Sequence[str], *, holder: str) -> None:
        """``event_ids`` are answered (or need no answer): no replica answers them again."""

        def mark(tx: Transaction) -> None:
            for event_id in event_ids:
                tx.execute(
                    "INSERT INTO lease_claims (scope, event_id, holder, state, at) VALUES (?, ?, ?, ?, ?)"
                    " ON CONFLICT (scope, event_id) DO UPDATE SET state = excluded.state, holder = excluded.holder",
                    (self._scope, event_id, holder, _ANSWERED, time.time()),
                )

        await self._db.run(mark)

    async def is_answered(self, event_id: str) -> bool:
        row = await self._db.run(
            lambda tx: tx.one(
                "SELECT 1 FROM lease_claims WHERE scope = ? AND event_id = ? AND state = ?",
                (self._scope, event_id, _ANSWERED),
            )
        )
        return row is not None

    async def prune(self, *, older_than: float = 86_400.0) -> int:
        """Forget claims older than ``older_than`` seconds (no sync brings such messages again); how many."""
        cutoff = time.time() - older_than
        return await self._db.run(
            lambda tx: tx.execute("DELETE FROM lease_claims WHERE scope = ? AND at < ?", (self._scope, cutoff))
        )

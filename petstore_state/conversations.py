"""What the bots remember of each conversation, shared by their processes: each person's rate window, and each
conversation's ``$last`` (the id of the pet from its most recent /add or /get).

``conversation_rate`` holds one row per user: the times of their accepted commands within the window (JSON) and
whether they have been told they are over it since their last accepted one. A check reads and writes that row in one
transaction (``SELECT ... FOR UPDATE`` on PostgreSQL, SQLite's write lock), so two replicas counting the same person
cannot both let a command through past the limit. ``conversation_last`` holds one row per (where, user).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .db import Database, Transaction

__all__ = ["Admission", "ConversationStore", "slide"]

_SCHEMA = [
    """CREATE TABLE IF NOT EXISTS conversation_rate (
        user_id TEXT PRIMARY KEY,
        stamps TEXT NOT NULL,
        warned BIGINT NOT NULL DEFAULT 0,
        updated DOUBLE PRECISION NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS conversation_last (
        location TEXT NOT NULL,
        user_id TEXT NOT NULL,
        pet_id BIGINT NOT NULL,
        updated DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (location, user_id)
    )""",
]


@dataclass(frozen=True, slots=True)
class Admission:
    """A rate check's answer: ``admitted`` (it counts now), else whether this is the first refusal since the
    person's last accepted command (``first_refusal``: tell them once)."""

    admitted: bool
    first_refusal: bool = False


class ConversationStore:
    """The ``conversation_*`` tables of a state database (see the module docstring)."""

    def __init__(self, database: Database, *, clock: Callable[[], float] = time.time) -> None:
        self.database = database
        self.clock = clock
        database.ensure_schema("conversations", _SCHEMA)

    async def admit(self, user: str, *, count: int, seconds: float) -> Admission:
        """Count a command of ``user`` if fewer than ``count`` were accepted in the last ``seconds``."""
        now = self.clock()
        return await self.database.run(lambda tx: _admit(tx, user, count=count, seconds=seconds, now=now))

    async def last_pet(self, *, where: str, user: str) -> int | None:
        row = await self.database.run(
            lambda tx: tx.one("SELECT pet_id FROM conversation_last WHERE location = ? AND user_id = ?", (where, user))
        )
        return None if row is None else int(row[0])  # type: ignore[call-overload]

    async def remember_pet(self, *, where: str, user: str, pet_id: int) -> None:
        now = self.clock()
        await self.database.run(
            lambda tx: tx.execute(
                "INSERT INTO conversation_last (location, user_id, pet_id, updated) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (location, user_id) DO UPDATE SET pet_id = excluded.pet_id, updated = excluded.updated",
                (where, user, pet_id, now),
            )
        )

    async def purge(self, *, older_than: float) -> int:
        """Forget rate windows and ``$last`` untouched for ``older_than`` seconds; returns the rows deleted."""
        cutoff = self.clock() - older_than

        def purge(tx: Transaction) -> int:
            rate = tx.execute("DELETE FROM conversation_rate WHERE updated < ?", (cutoff,))
            return rate + tx.execute("DELETE FROM conversation_last WHERE updated < ?", (cutoff,))

        return await self.database.run(purge)


def slide(
    stamps: Sequence[float], *, warned: bool, now: float, count: int, seconds: float
) -> tuple[list[float], Admission]:
    """The one rule of a rate window (the stored one here, the bot's in-memory one too): the times of a person's
    accepted commands within ``seconds`` of ``now``, with ``now`` among them when fewer than ``count`` were, and the
    answer (``warned``: they were told of the limit since their last accepted command)."""
    kept = [stamp for stamp in stamps if now - stamp < seconds]
    if len(kept) < count:
        return [*kept, now], Admission(admitted=True)
    return kept, Admission(admitted=False, first_refusal=not warned)


def _admit(tx: Transaction, user: str, *, count: int, seconds: float, now: float) -> Admission:
    tx.execute(
        "INSERT INTO conversation_rate (user_id, stamps, warned, updated) VALUES (?, '[]', 0, ?) "
        "ON CONFLICT (user_id) DO NOTHING",
        (user, now),
    )
    lock = " FOR UPDATE" if tx.dialect == "postgresql" else ""
    row = tx.one(f"SELECT stamps, warned FROM conversation_rate WHERE user_id = ?{lock}", (user,))
    assert row is not None
    stamps = [float(t) for t in json.loads(str(row[0]))]
    kept, admission = slide(stamps, warned=bool(row[1]), now=now, count=count, seconds=seconds)
    tx.execute(
        "UPDATE conversation_rate SET stamps = ?, warned = ?, updated = ? WHERE user_id = ?",
        (json.dumps(kept), 0 if admission.admitted else 1, now, user),
    )
    return admission

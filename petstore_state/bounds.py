"""How many schedules or watches a room and a bot may have, checked in the transaction that adds one.

:func:`check_room_and_total` counts a table's rows of one service, in one room and in all, inside the transaction
that inserts the next row, and raises :class:`LimitReached` when either count is at its limit. On SQLite the
transaction holds the database's write lock from its start (``BEGIN IMMEDIATE``); on PostgreSQL it first takes a
transaction advisory lock of that table: either way two processes adding at once are counted one after the other, so
neither slips past the limit (and two schedules cannot draw the same number).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Literal

from .db import Transaction

__all__ = ["DEFAULT", "LimitReached", "Limits", "check_room_and_total"]


@dataclass(frozen=True, slots=True)
class Limits:
    """At most ``per_room`` in one room and ``total`` in all rooms of one service (one bot)."""

    per_room: int = 10
    total: int = 100


#: The limits of a store opened without any (``[bot] max_..._per_room`` and ``max_...``'s defaults).
DEFAULT = Limits()


class LimitReached(Exception):
    """An add refused: the room (``scope="room"``) or the bot (``"bot"``) has ``limit`` already."""

    def __init__(self, *, scope: Literal["room", "bot"], limit: int) -> None:
        super().__init__(f"the {scope} has {limit} already, the most it may have")
        self.scope: Literal["room", "bot"] = scope
        self.limit = limit


def check_room_and_total(tx: Transaction, *, table: str, service: str, room: str, limits: Limits) -> None:
    """Inside the adding transaction: LimitReached when ``room`` or the service has its limit of ``table`` rows
    (``table``: one of this package's, with ``service`` and ``room`` columns)."""
    if tx.dialect == "postgresql":
        key = int.from_bytes(hashlib.sha256(f"petstore bounds {table}".encode()).digest()[:8], "big", signed=True)
        tx.execute("SELECT pg_advisory_xact_lock(?)", (key,))
    in_room = tx.one(f"SELECT COUNT(*) FROM {table} WHERE service = ? AND room = ?", (service, room))
    if in_room is not None and int(str(in_room[0])) >= limits.per_room:
        raise LimitReached(scope="room", limit=limits.per_room)
    total = tx.one(f"SELECT COUNT(*) FROM {table} WHERE service = ?", (service,))
    if total is not None and int(str(total[0])) >= limits.total:
        raise LimitReached(scope="bot", limit=limits.total)

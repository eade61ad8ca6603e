"""Schedules: a read command run in a room as the person who set it up, at the times its rhythm names.

Each schedule keeps its next run (a UTC instant, seconds since the epoch). A run is claimed by moving
``next_run`` from the value read to the next one in one statement (:meth:`ScheduleStore.claim`): whoever moves it
runs it, so a run happens once even with several bot processes on one store. The rhythm is stored as typed
(``every weekday at 09:00``); what it means is the command layer's (``bot_commands.every``). A room and the bot
have at most so many schedules (:class:`~petstore_state.bounds.Limits`, counted in the adding transaction).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from .bounds import DEFAULT, Limits, check_room_and_total
from .db import Database, Transaction

__all__ = ["Schedule", "ScheduleStore"]

_SCHEMA = [
    """CREATE TABLE IF NOT EXISTS schedule_entries (
        id BIGINT NOT NULL PRIMARY KEY, service TEXT NOT NULL, room TEXT NOT NULL, creator TEXT NOT NULL,
        rhythm TEXT NOT NULL, command TEXT NOT NULL, next_run DOUBLE PRECISION NOT NULL,
        created_at DOUBLE PRECISION NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS schedule_entries_due ON schedule_entries (service, next_run)",
]
_COLUMNS = "id, room, creator, rhythm, command, next_run, created_at"


@dataclass(frozen=True, slots=True)
class Schedule:
    """One schedule: ``command`` (``/list pending``) in ``room`` as ``creator``, ``rhythm`` as typed."""

    id: int
    room: str
    creator: str
    rhythm: str
    command: str
    next_run: float
    created_at: float


class ScheduleStore:
    """The schedules of one service in a state :class:`~petstore_state.db.Database`, at most ``limits`` of them."""

    def __init__(self, database: Database, *, service: str, limits: Limits = DEFAULT) -> None:
        self.db = database
        self.service = service
        self.limits = limits
        database.ensure_schema("schedules", _SCHEMA)

    async def add(self, *, room: str, creator: str, rhythm: str, command: str, next_run: float) -> Schedule:
        """A new schedule, numbered after the highest one (numbers are short: people type them); LimitReached
        when the room or the bot has its most already."""

        def work(tx: Transaction) -> Schedule:
            check_room_and_total(tx, table="schedule_entries", service=self.service, room=room, limits=self.limits)
            row = tx.one("SELECT COALESCE(MAX(id), 0) + 1 FROM schedule_entries")
            assert row is not None
            made = Schedule(
                id=int(str(row[0])),
                room=room,
                creator=creator,
                rhythm=rhythm,
                command=command,
                next_run=next_run,
                created_at=time.time(),
            )
            tx.execute(
                f"INSERT INTO schedule_entries (service, {_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (self.service, made.id, room, creator, rhythm, command, next_run, made.created_at),
            )
            return made

        return await self.db.run(work)

    async def of_room(self, room: str) -> list[Schedule]:
        rows = await self.db.run(
            lambda tx: tx.all(
                f"SELECT {_COLUMNS} FROM schedule_entries WHERE service = ? AND room = ? ORDER BY id",
                (self.service, room),
            )
        )
        return [_schedule(row) for row in rows]

    async def get(self, schedule_id: int) -> Schedule | None:
        row = await self.db.run(
            lambda tx: tx.one(
                f"SELECT {_COLUMNS} FROM schedule_entries WHERE service = ? AND id = ?", (self.service, schedule_id)
            )
        )
        return None if row is None else _schedule(row)

    async def remove(self, schedule_id: int) -> bool:
        return await self.db.run(
            lambda tx: (
                tx.execute("DELETE FROM schedule_entries WHERE service = ? AND id = ?", (self.service, schedule_id))
                == 1
            )
        )

    async def due(self, now: float) -> list[Schedule]:
        """Schedules whose next run is at or before ``now``, the most overdue first."""
        rows = await self.db.run(
            lambda tx: tx.all(
                f"SELECT {_COLUMNS} FROM schedule_entries WHERE service = ? AND next_run <= ? ORDER BY next_run, id",
                (self.service, now),
            )
        )
        return [_schedule(row) for row in rows]

    async def next_due(self) -> float | None:
        """The earliest next run of any schedule (None when there is none)."""
        row = await self.db.run(
            lambda tx: tx.one("SELECT MIN(next_run) FROM schedule_entries WHERE service = ?", (self.service,))
        )
        return None if row is None or row[0] is None else float(str(row[0]))

    async def claim(self, schedule: Schedule, *, next_run: float) -> bool:
        """Move ``schedule``'s next run on to ``next_run`` if it is still the one read: True means the caller runs
        (or skips) this run, and no one else does."""
        return await self.db.run(
            lambda tx: (
                tx.execute(
                    "UPDATE schedule_entries SET next_run = ? WHERE service = ? AND id = ? AND next_run = ?",
                    (next_run, self.service, schedule.id, schedule.next_run),
                )
                == 1
            )
        )


def _schedule(row: tuple[object, ...]) -> Schedule:
    schedule_id, room, creator, rhythm, command, next_run, created_at = row
    return Schedule(
        id=int(str(schedule_id)),
        room=str(room),
        creator=str(creator),
        rhythm=str(rhythm),
        command=str(command),
        next_run=float(str(next_run)),
        created_at=float(str(created_at)),
    )

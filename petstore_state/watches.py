"""Watches: which rooms want new pets announced, the cursor of each (service, filter), and the announcements due.

A filter is a status (``available``...) or ``""`` for every pet. One cursor per (service, filter) whatever the
number of rooms: the highest pet id seen and the URL of the page it was on (the service orders pets by id and
pages with an opaque cursor in ``Link: rel="next"``; resuming at that page costs one request a poll). A poll's
new pets become announcements (one per room and pet, a pet announced in a room once even when two of its
filters match it) in the same transaction that moves the cursor, so a restart between the two loses nothing;
an announcement is marked sent once the room has it (a Matrix send repeats idempotently by its key). A room and the
bot have at most so many watches (:class:`~petstore_state.bounds.Limits`, counted in the adding transaction).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass

from .bounds import DEFAULT, Limits, check_room_and_total
from .db import Database, Transaction

__all__ = ["Announcement", "Cursor", "NewPet", "WatchStore"]

_SCHEMA = [
    """CREATE TABLE IF NOT EXISTS watch_rooms (
        service TEXT NOT NULL, status TEXT NOT NULL, room TEXT NOT NULL,
        created_by TEXT NOT NULL, created_at DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (service, status, room))""",
    """CREATE TABLE IF NOT EXISTS watch_cursors (
        service TEXT NOT NULL, status TEXT NOT NULL, last_id BIGINT NOT NULL, resume_url TEXT,
        polled_at DOUBLE PRECISION NOT NULL, PRIMARY KEY (service, status))""",
    """CREATE TABLE IF NOT EXISTS watch_outbox (
        service TEXT NOT NULL, room TEXT NOT NULL, pet_id BIGINT NOT NULL, status TEXT NOT NULL,
        pet TEXT NOT NULL, created_at DOUBLE PRECISION NOT NULL, sent_at DOUBLE PRECISION,
        PRIMARY KEY (service, room, pet_id))""",
    "CREATE INDEX IF NOT EXISTS watch_outbox_unsent ON watch_outbox (sent_at, created_at)",
]
#: Sent announcements are kept this long (a pet matched by a second filter later is still not told twice).
KEEP_SENT = 7 * 86_400.0


@dataclass(frozen=True, slots=True)
class Cursor:
    """Where a filter's polls have got to: the highest pet id seen and the page to start the next poll at."""

    last_id: int
    resume_url: str | None


@dataclass(frozen=True, slots=True)
class NewPet:
    """A pet a poll found, as the service sent it (``record``: its JSON object)."""

    id: int
    record: dict[str, object]


@dataclass(frozen=True, slots=True)
class Announcement:
    """A new pet to post in a room (``status``: the filter that matched it, ``""`` for every pet)."""

    service: str
    room: str
    pet_id: int
    status: str
    pet: dict[str, object]

    @property
    def key(self) -> str:
        """Stable id of this announcement (a Matrix transaction id: the homeserver keeps one event per key)."""
        digest = hashlib.sha256(f"{self.service} {self.room}".encode()).hexdigest()[:16]
        return f"petstore-watch-{digest}-{self.pet_id}"


class WatchStore:
    """The watches in a state :class:`~petstore_state.db.Database`, at most ``limits`` of them."""

    def __init__(self, database: Database, *, service: str, limits: Limits = DEFAULT) -> None:
        self.db = database
        self.service = service
        self.limits = limits
        database.ensure_schema("watches", _SCHEMA)

    # -- rooms ---------------------------------------------------------------------------------------------

    async def add(self, *, status: str, room: str, by: str) -> bool:
        """Watch ``status`` in ``room``; False when it already was; LimitReached when the room or the bot has its
        most watches already."""

        def work(tx: Transaction) -> bool:
            if tx.one(
                "SELECT 1 FROM watch_rooms WHERE service = ? AND status = ? AND room = ?", (self.service, status, room)
            ):
                return False
            check_room_and_total(tx, table="watch_rooms", service=self.service, room=room, limits=self.limits)
            return (
                tx.execute(
                    "INSERT INTO watch_rooms (service, status, room, created_by, created_at) VALUES (?, ?, ?, ?, ?)"
                    " ON CONFLICT (service, status, room) DO NOTHING",
                    (self.service, status, room, by, time.time()),
                )
                == 1
            )

        return await self.db.run(work)

    async def remove(self, *, status: str, room: str) -> bool:
        """Stop watching ``status`` in ``room``; False when it was not watched."""
        return await self.db.run(
            lambda tx: (
                tx.execute(
                    "DELETE FROM watch_rooms WHERE service = ? AND status = ? AND room = ?",
                    (self.service, status, room),
                )
                == 1
            )
        )

    async def of_room(self, *, room: str) -> list[str]:
        """The filters ``room`` watches, in order (``""``, every pet, first)."""
        rows = await self.db.run(
            lambda tx: tx.all(
                "SELECT status FROM watch_rooms WHERE service = ? AND room = ? ORDER BY status", (self.service, room)
            )
        )
        return [str(row[0]) for row in rows]

    async def filters(self) -> list[str]:
        """The distinct filters some room watches on ``service``: one poll each."""
        rows = await self.db.run(
            lambda tx: tx.all(
                "SELECT DISTINCT status FROM watch_rooms WHERE service = ? ORDER BY status", (self.service,)
            )
        )
        return [str(row[0]) for row in rows]

    # -- cursors -------------------------------------------------------------------------------------------

    async def cursor(self, *, status: str) -> Cursor | None:
        row = await self.db.run(
            lambda tx: tx.one(
                "SELECT last_id, resume_url FROM watch_cursors WHERE service = ? AND status = ?", (self.service, status)
            )
        )
        return None if row is None else Cursor(last_id=_int(row[0]), resume_url=_text(row[1]))

    async def start(self, *, status: str, cursor: Cursor) -> Cursor:
        """Set the filter's cursor unless it has one (a first watch of it); the cursor in force."""

        def work(tx: Transaction) -> Cursor:
            tx.execute(
                "INSERT INTO watch_cursors (service, status, last_id, resume_url, polled_at) VALUES (?, ?, ?, ?, ?)"
                " ON CONFLICT (service, status) DO NOTHING",
                (self.service, status, cursor.last_id, cursor.resume_url, time.time()),
            )
            row = tx.one(
                "SELECT last_id, resume_url FROM watch_cursors WHERE service = ? AND status = ?", (self.service, status)
            )
            assert row is not None
            return Cursor(last_id=_int(row[0]), resume_url=_text(row[1]))

        return await self.db.run(work)

    async def record(self, *, status: str, seen: Cursor, found: Sequence[NewPet], resume_url: str | None) -> int:
        """A poll's result: announcements of the pets in ``found`` above ``seen`` for every room watching, and the
        cursor moved past them, in one transaction. Nothing when the cursor is no longer ``seen`` (another poller
        got there first). Returns the number of announcements queued."""
        fresh = [pet for pet in found if pet.id > seen.last_id]
        last_id = max([seen.last_id, *(pet.id for pet in fresh)])

        def work(tx: Transaction) -> int:
            moved = tx.execute(
                "UPDATE watch_cursors SET last_id = ?, resume_url = ?, polled_at = ?"
                " WHERE service = ? AND status = ? AND last_id = ?",
                (last_id, resume_url or seen.resume_url, time.time(), self.service, status, seen.last_id),
            )
            if moved != 1 or not fresh:
                return 0
            rooms = [
                str(row[0])
                for row in tx.all(
                    "SELECT room FROM watch_rooms WHERE service = ? AND status = ?", (self.service, status)
                )
            ]
            queued, now = 0, time.time()
            for pet in sorted(fresh, key=lambda pet: pet.id):
                for room in rooms:
                    queued += tx.execute(
                        "INSERT INTO watch_outbox (service, room, pet_id, status, pet, created_at)"
                        " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (service, room, pet_id) DO NOTHING",
                        (self.service, room, pet.id, status, json.dumps(pet.record, ensure_ascii=False), now),
                    )
            return queued

        return await self.db.run(work)

    # -- the outbox ----------------------------------------------------------------------------------------

    async def unsent(self, *, limit: int = 100) -> list[Announcement]:
        """Announcements not yet posted, oldest first (by pet id within a room)."""
        rows = await self.db.run(
            lambda tx: tx.all(
                "SELECT room, pet_id, status, pet FROM watch_outbox WHERE service = ? AND sent_at IS NULL"
                " ORDER BY created_at, room, pet_id LIMIT ?",
                (self.service, limit),
            )
        )
        return [
            Announcement(
                service=self.service, room=str(room), pet_id=_int(pet_id), status=str(status), pet=json.loads(str(pet))
            )
            for room, pet_id, status, pet in rows
        ]

    async def sent(self, announcement: Announcement) -> None:
        """``announcement`` is in its room; sent ones older than KEEP_SENT are dropped on the way."""

        def work(tx: Transaction) -> None:
            now = time.time()
            tx.execute(
                "UPDATE watch_outbox SET sent_at = ? WHERE service = ? AND room = ? AND pet_id = ?",
                (now, announcement.service, announcement.room, announcement.pet_id),
            )
            tx.execute("DELETE FROM watch_outbox WHERE sent_at < ?", (now - KEEP_SENT,))

        await self.db.run(work)


def _int(value: object) -> int:
    assert isinstance(value, int)
    return value


def _text(value: object) -> str | None:
    return None if value is None else str(value)

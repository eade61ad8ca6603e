"""The SQLite backend behind the :class:`~.storage.Store` interface.

Wraps the synchronous :class:`~.store.PetStore` (which the sandbox and tests also use
directly) and runs every call on one dedicated thread (:class:`~.sqlite_thread.SqliteThread`):
the event loop never waits on SQLite, and the one connection is only ever used from that thread. Several processes
(``--workers``) share the file through WAL; ``BEGIN IMMEDIATE`` serialises their writes.

A store opened by :meth:`SqliteStore.open` (the service's) checks that its path still names the file it opened
before every write and every health check (a file moved or deleted away would otherwise take acknowledged pets with
it), and before a read when the last check is more than :data:`READ_CHECK_INTERVAL` seconds old (a ``stat`` a read
cost more than SQLite's own work on a page: the system call hands the interpreter to the other thread and back), so
a read in that moment after the file was moved may still be answered from the file moved away. While the path names
nothing (or cannot be read) every call checks again and raises :class:`~.records.StoreUnavailable` (503), as does
SQLite failing to read or lock the file; when a file is at the path again, it is (re)opened and used.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from .records import Created, Idempotency, Page, PetRecord, StoreUnavailable
from .sqlite_thread import SqliteThread
from .store import PetStore

__all__ = ["READ_CHECK_INTERVAL", "SqliteStore"]

T = TypeVar("T")
#: Seconds a read may rely on the last check that the path names the file opened.
READ_CHECK_INTERVAL = 0.1


class SqliteStore:
    """:class:`~.storage.Store` over a :class:`PetStore`, off the event loop."""

    def __init__(self, pets: PetStore, *, thread: SqliteThread | None = None) -> None:
        self.pets = pets
        self._thread = thread or SqliteThread()
        #: (device, inode) of the file opened, for a store that watches its path; else None.
        self._opened: tuple[int, int] | None = None
        #: When the path last named the file in use (``time.monotonic``; written on the SQLite thread).
        self._checked_at = float("-inf")

    @classmethod
    async def open(cls, path: str | Path) -> SqliteStore:
        """The service's store on ``path``, which it watches (see the module's docstring)."""
        thread = SqliteThread()
        try:
            pets = await thread.run(lambda: PetStore(path))
            opened = await thread.run(lambda: _identity(Path(path)))
        except BaseException:
            thread.stop()
            raise
        store = cls(pets, thread=thread)
        store._opened = opened
        return store

    def _run(self, call: Callable[[], T], *, read: bool = False) -> asyncio.Future[T]:
        """``call`` on the SQLite thread, checked (:meth:`_checked`): a future, awaited by the caller (a coroutine
        of its own here would cost every request one more)."""
        return self._thread.run(lambda: self._checked(call, read=read))

    def _checked(self, call: Callable[[], T], *, read: bool) -> T:
        """``call`` on the SQLite thread, after checking the file (a ``read`` only when the last check is old);
        SQLite unable to use it is StoreUnavailable."""
        try:
            if self._opened is not None and not (read and time.monotonic() - self._checked_at < READ_CHECK_INTERVAL):
                self._follow_path()
            return call()
        except sqlite3.OperationalError as exc:
            raise StoreUnavailable(f"SQLite: {exc}") from None

    def _follow_path(self) -> None:
        try:
            now = _identity(self.pets.path)
        except OSError as exc:
            self._checked_at = float("-inf")  # the next read checks again
            raise StoreUnavailable(f"the database file {self.pets.path}: {exc.strerror or exc}") from None
        if now == self._opened:
            self._checked_at = time.monotonic()
            return
        try:
            reopened = PetStore(self.pets.path)
        except sqlite3.Error as exc:
            self._checked_at = float("-inf")
            raise StoreUnavailable(f"the database file {self.pets.path} cannot be opened: {exc}") from None
        self.pets.close()
        self.pets, self._opened = reopened, now
        self._checked_at = time.monotonic()

    async def list_page(self, *, limit: int, status: str | None, after_id: int | None) -> Page:
        return await self._run(lambda: self.pets.list_page(limit=limit, status=status, after_id=after_id), read=True)

    async def get_pet(self, *, pet_id: int) -> PetRecord | None:
        return await self._run(lambda: self.pets.get_record(pet_id), read=True)

    async def create_pet(
        self, *, name: str, category_id: int, status: str | None, idempotency: Idempotency | None
    ) -> Created:
        if idempotency is None:
            pet = await self._run(lambda: self.pets.create_record(name=name, category_id=category_id, status=status))
            return Created(status_code=201, body=pet.json(), replayed=False)
        return await self._run(
            lambda: self.pets.create_pet_once(
                idempotency=idempotency, name=name, category_id=category_id, status=status
            )
        )

    async def list_orders(self) -> bytes:
        return b"[]"

    async def seed_sample(self) -> int:
        return await self._run(lambda: self.pets.seed_sample())

    async def health_check(self) -> None:
        await self._run(lambda: self.pets.ping())

    def pool_stats(self) -> None:
        """No pool: one connection, on one thread."""
        return None

    async def close(self) -> None:
        await self._thread.run(self.pets.close)
        self._thread.stop()  # nothing is queued any more: the thread ends at once


def _identity(path: Path) -> tuple[int, int]:
    """(device, inode) of the file at ``path``; OSError when there is none."""
    found = os.stat(path)
    return found.st_dev, found.st_ino

"""The SQLite backend behind the :class:`~.storage.Store` interface.

Wraps the synchronous :class:`~.store.PetStore` (which the sandbox and tests also use
directly) and runs every write and health check on one dedicated thread (:class:`~.sqlite_thread.SqliteThread`), so
the event loop never waits for a write (nor for another process's). A read (a page, a pet) runs at once on the event
loop, as the floor's reads do, when that thread is not using the connection (its lock is taken without waiting) and
the file was checked within :data:`READ_CHECK_INTERVAL`; else it is handed to the thread. The hand-off and the
wake-ups it costs were more than SQLite's own work on a page: reads on the loop answered ~9 % more GETs a second on
a loaded 2-core machine (bench/README.md). Under WAL a read does not wait for writers. Several processes
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
from collections.abc import Callable, Iterator
from contextlib import contextmanager
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
        with _unavailable():
            if self._opened is not None and not (read and self._fresh()):
                self._follow_path()
            return call()

    def _fresh(self) -> bool:
        """Whether a read may rely on the last check of the file (or there is none to make)."""
        return self._opened is None or time.monotonic() - self._checked_at < READ_CHECK_INTERVAL

    async def _read(self, call: Callable[[PetStore], T]) -> T:
        """A read: at once, on the event loop, when the store's thread is not using the connection and the last
        check of the file is fresh; else on the store's thread (which checks the file first). The thread's hand-off
        and its wake-ups cost a read more than SQLite's own work on a page (measured: bench/README.md)."""
        pets = self.pets
        if self._fresh() and pets.lock.acquire(blocking=False):
            try:
                if pets is self.pets:  # not replaced by a reopened file meanwhile (that one is the thread's to check)
                    with _unavailable():
                        return call(pets)
            finally:
                pets.lock.release()
        return await self._run(lambda: call(self.pets), read=True)

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
        replaced, self.pets, self._opened = self.pets, reopened, now
        replaced.close()  # after the swap: a read on the loop that holds the old one finishes first
        self._checked_at = time.monotonic()

    async def list_page(self, *, limit: int, status: str | None, after_id: int | None) -> Page:
        return await self._read(lambda pets: pets.list_page(limit=limit, status=status, after_id=after_id))

    async def get_pet(self, *, pet_id: int) -> PetRecord | None:
        return await self._read(lambda pets: pets.get_record(pet_id))

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


@contextmanager
def _unavailable() -> Iterator[None]:
    """SQLite unable to use the file is StoreUnavailable (503)."""
    try:
        yield
    except sqlite3.OperationalError as exc:
        raise StoreUnavailable(f"SQLite: {exc}") from None


def _identity(path: Path) -> tuple[int, int]:
    """(device, inode) of the file at ``path``; OSError when there is none."""
    found = os.stat(path)
    return found.st_dev, found.st_ino

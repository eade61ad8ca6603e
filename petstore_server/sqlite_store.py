"""The SQLite backend behind the :class:`~.storage.Store` interface.

Wraps the synchronous :class:`~.store.PetStore` (which the sandbox and tests also use
directly) and runs every call on one dedicated thread (:class:`~.sqlite_thread.SqliteThread`):
the event loop never waits on SQLite, and the one connection is only ever used from that thread. Several processes
(``--workers``) share the file through WAL; ``BEGIN IMMEDIATE`` serialises their writes.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from .records import Created, Idempotency, Page, PetRecord
from .sqlite_thread import SqliteThread
from .store import PetStore

__all__ = ["SqliteStore"]

T = TypeVar("T")


class SqliteStore:
    """:class:`~.storage.Store` over a :class:`PetStore`, off the event loop."""

    def __init__(self, pets: PetStore, *, thread: SqliteThread | None = None) -> None:
        self.pets = pets
        self._thread = thread or SqliteThread()

    @classmethod
    async def open(cls, path: str | Path) -> SqliteStore:
        thread = SqliteThread()
        try:
            pets = await thread.run(lambda: PetStore(path))
        except BaseException:
            thread.stop()
            raise
        return cls(pets, thread=thread)

    async def _run(self, call: Callable[[], T]) -> T:
        return await self._thread.run(call)

    async def list_page(self, *, limit: int, status: str | None, after_id: int | None) -> Page:
        return await self._run(lambda: self.pets.list_page(limit=limit, status=status, after_id=after_id))

    async def get_pet(self, *, pet_id: int) -> PetRecord | None:
        return await self._run(lambda: self.pets.get_record(pet_id))

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
        return await self._run(self.pets.seed_sample)

    async def health_check(self) -> None:
        await self._run(self.pets.ping)

    async def close(self) -> None:
        await self._run(self.pets.close)
        self._thread.stop()  # nothing is queued any more: the thread ends at once

"""The storage interface the app is written against, and how ``--db`` picks an implementation.

``--db`` (or ``PETSTORE_SERVER_DB``) is a file path or ``sqlite:///path`` (``sqlite:////abs/path``) for SQLite, or
``postgresql://user@host:port/db`` (libpq URI; query parameters such as ``options`` pass through)
for PostgreSQL; :mod:`petstore_os.db_url` parses it.
"""

from __future__ import annotations

from typing import Protocol

from petstore_os.db_url import StoreTarget

from .records import Created, Idempotency, Page, PetRecord

__all__ = ["Store", "open_store"]


class Store(Protocol):
    """Pets and idempotency records. Every method is async and never blocks the event loop.

    A database that does not answer (down, restarting, its file gone) raises
    :class:`~.records.StoreUnavailable` from any method, in seconds, not after a long timeout.

    A create returns only after its pet is committed (the 201-after-commit rule); ids grow in
    commit order, so a cursor (``after_id``) never skips a pet committed later.
    """

    async def list_page(self, *, limit: int, status: str | None, after_id: int | None) -> Page: ...

    async def get_pet(self, *, pet_id: int) -> PetRecord | None: ...

    async def create_pet(
        self, *, name: str, category_id: int, status: str | None, idempotency: Idempotency | None
    ) -> Created:
        """Insert and commit; with ``idempotency``, replay the first outcome for a known key
        (raising :class:`~.records.IdempotencyConflict` for another fingerprint)."""
        ...

    async def list_orders(self) -> bytes:
        """The orders listing as a JSON array (no operation creates orders: ``[]``)."""
        ...

    async def seed_sample(self) -> int:
        """Insert the sample pets into an empty store; returns how many were inserted."""
        ...

    async def health_check(self) -> None:
        """Return when the database answers; raise otherwise."""
        ...

    def pool_stats(self) -> tuple[int, int] | None:
        """(connections in use, requests waiting for one) of a connection pool; None without a pool."""
        ...

    async def close(self) -> None: ...


async def open_store(target: StoreTarget) -> Store:
    """An open store for ``target``, its schema created or upgraded to the current version."""
    if target.backend == "postgresql":
        from .pg_store import PostgresStore

        return await PostgresStore.open(target.location)
    from .sqlite_store import SqliteStore

    return await SqliteStore.open(target.location)

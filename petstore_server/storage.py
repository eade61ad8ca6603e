"""The storage interface the app is written against, and how ``--db`` picks an implementation.

``--db`` (or ``PETSTORE_SERVER_DB``) is a file path or ``sqlite:///path`` (``sqlite:////abs/path``) for SQLite, or
``postgresql://user@host:port/db`` (libpq URI; query parameters such as ``options`` pass through)
for PostgreSQL.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, Protocol

from .records import Created, Idempotency, Page, PetRecord

__all__ = ["Backend", "Store", "StoreTarget", "open_store", "parse_db", "redact", "url_password"]

Backend = Literal["sqlite", "postgresql"]
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]{0,30}")


class Store(Protocol):
    """Pets and idempotency records. Every method is async and never blocks the event loop.

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

    async def close(self) -> None: ...


@dataclass(frozen=True, slots=True)
class StoreTarget:
    """A parsed ``--db``: which backend, and its file path or connection URI."""

    backend: Backend
    location: str


def parse_db(value: str) -> StoreTarget:
    """``--db`` as a target; a URI with any other scheme is a ValueError, whose message never holds the URI (it
    may hold a password)."""
    if value.startswith(("postgresql://", "postgres://")):
        return StoreTarget("postgresql", value)
    if value.startswith("sqlite:///"):
        return StoreTarget("sqlite", value.removeprefix("sqlite:///"))
    if value.startswith("sqlite://") or ("://" in value and not value.startswith("file:")):
        scheme = value.split("://", 1)[0]
        named = f"scheme {scheme}://" if _SCHEME.fullmatch(scheme) and scheme != "sqlite" else "address"
        raise ValueError(f"unknown database {named}: use a file path, sqlite:///PATH or postgresql://user@host:port/db")
    return StoreTarget("sqlite", value)


def url_password(location: str) -> str | None:
    """The password a database URL holds (in its user part or a ``password`` parameter), as written; else None."""
    return next(iter(_passwords(location)), None)


def redact(text: str, location: str) -> str:
    """``text`` (an error message about ``location``) with every form of the URL's password replaced by ``***``."""
    for secret in sorted(_passwords(location), key=len, reverse=True):
        text = text.replace(secret, "***")
    return text


def _passwords(location: str) -> list[str]:
    """Every form of the password in ``location``: as written (percent-encoded) and decoded."""
    from urllib.parse import unquote

    if "://" not in location:
        return []
    rest = location.split("://", 1)[1]
    userinfo = rest.partition("/")[0].rpartition("@")[0]  # libpq ends the user part at the first "/" or last "@"
    written = [userinfo.partition(":")[2]] if ":" in userinfo else []
    for item in rest.partition("?")[2].split("&"):
        name, _, value = item.partition("=")
        if unquote(name) == "password":
            written.append(value)
    return sorted({form for raw in written for form in (raw, unquote(raw)) if form}, key=len, reverse=True)


async def open_store(target: StoreTarget) -> Store:
    """An open store for ``target``, its schema created or upgraded to the current version."""
    if target.backend == "postgresql":
        from .pg_store import PostgresStore

        return await PostgresStore.open(target.location)
    from .sqlite_store import SqliteStore

    return await SqliteStore.open(target.location)

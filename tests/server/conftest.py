"""Fixtures for the service tests: an in-process app over a temp store, on each backend.

``backend`` runs a test on SQLite and on PostgreSQL (its own schema, dropped afterwards).
``served`` is the :class:`~petstore_server.storage.Store` the app uses; ``store`` writes pets
behind the service's back (the synchronous SQLite store, or a plain PostgreSQL connection).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
from pg_support import PgServer, SyncPgPets, schema_url, start_pg_server

from petstore_server.app import create_app
from petstore_server.pg_store import PostgresStore
from petstore_server.sqlite_store import SqliteStore
from petstore_server.storage import Store
from petstore_server.store import PetStore

from .support import AUTH, BASE, KEY, OTHER_KEY


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    with start_pg_server() as server:
        yield server


@pytest.fixture
def pg_url(pg_server: PgServer) -> Iterator[str]:
    with schema_url(pg_server) as url:
        yield url


@pytest.fixture(params=["sqlite", "postgresql"])
def backend(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
async def served(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> AsyncIterator[Store]:
    store: SqliteStore | PostgresStore
    if backend == "sqlite":
        store = SqliteStore(PetStore(tmp_path / "pets.db"))
    else:
        store = await PostgresStore.open(request.getfixturevalue("pg_url"))
    await store.seed_sample()
    yield store
    await store.close()


@pytest.fixture
def store(served: Store, request: pytest.FixtureRequest) -> Iterator[PetStore | SyncPgPets]:
    if isinstance(served, SqliteStore):
        yield served.pets
        return
    pets = SyncPgPets(request.getfixturevalue("pg_url"))
    yield pets
    pets.close()


@pytest.fixture
def app(served: Store):
    return create_app(served, api_keys=[KEY, OTHER_KEY])


@pytest.fixture
async def client(app) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url=BASE, headers=AUTH) as http:
        yield http


@pytest.fixture
async def anon(app) -> AsyncIterator[httpx.AsyncClient]:
    """A client that sends no Authorization header."""
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE) as http:
        yield http


@pytest.fixture
def db_target(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    """``--db`` for a server subprocess: a SQLite file, or a PostgreSQL URL on a fresh schema."""
    return str(tmp_path / "pets.db") if backend == "sqlite" else request.getfixturevalue("pg_url")

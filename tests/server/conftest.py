"""Fixtures for the service tests: an in-process app over a temp store."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest

from petstore_server.app import create_app
from petstore_server.store import PetStore

from .support import AUTH, BASE, KEY, OTHER_KEY


@pytest.fixture
def store(tmp_path: Path) -> Iterator[PetStore]:
    pets = PetStore(tmp_path / "pets.db")
    pets.seed_sample()
    yield pets
    pets.close()


@pytest.fixture
def app(store: PetStore):
    return create_app(store, api_keys=[KEY, OTHER_KEY])


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

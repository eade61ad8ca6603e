"""Fixtures for the client tests: the real service in-process, mock transports, a sleep recorder."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from api_support import BASE, CANARY, Handler, SleepRecorder
from faultserver import FaultServer

from petstore_api import PetStoreClient, RetryPolicy, Timeouts


@pytest.fixture
def sleeps() -> SleepRecorder:
    return SleepRecorder()


@pytest.fixture
def retry(sleeps: SleepRecorder) -> RetryPolicy:
    """Deterministic policy: no jitter, recorded sleeps."""
    return RetryPolicy(attempts=3, backoff=0.25, backoff_max=4.0, retry_after_cap=10.0, jitter=False, sleep=sleeps)


@pytest.fixture
async def mock_client(retry: RetryPolicy) -> AsyncIterator[Callable[..., PetStoreClient]]:
    """Factory: a client over ``httpx.MockTransport(handler)``; closed at teardown."""
    made: list[PetStoreClient] = []

    def make(handler: Handler, **kwargs: Any) -> PetStoreClient:
        kwargs.setdefault("base_url", BASE)
        kwargs.setdefault("api_key", CANARY)
        kwargs.setdefault("retry", retry)
        client = PetStoreClient(transport=httpx.MockTransport(handler), **kwargs)
        made.append(client)
        return client

    yield make
    for client in made:
        await client.aclose()


# -- the real service ------------------------------------------------------


@pytest.fixture
def service(tmp_path: Path) -> Iterator[Any]:
    from petstore_server.app import create_app
    from petstore_server.store import PetStore

    store = PetStore(tmp_path / "pets.db")
    try:
        yield create_app(store, api_keys=[CANARY]), store
    finally:
        store.close()


@pytest.fixture
async def client(service: Any, retry: RetryPolicy) -> AsyncIterator[PetStoreClient]:
    app, _ = service
    async with PetStoreClient(base_url=BASE, api_key=CANARY, transport=httpx.ASGITransport(app=app), retry=retry) as c:
        yield c


# -- a misbehaving server on a loopback socket -----------------------------


@pytest.fixture(scope="session")
def faults() -> Iterator[FaultServer]:
    server = FaultServer().start()
    yield server
    server.stop()


@pytest.fixture
def fast() -> Timeouts:
    return Timeouts(connect=1.0, read=0.5, write=1.0, pool=1.0, total=2.0)

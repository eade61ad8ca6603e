"""Fixtures for the client tests: the real service in-process, mock transports, a sleep recorder."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from petstore_api import PetStoreClient, RetryPolicy, Timeouts

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/faultserver.py

from faultserver import FaultServer  # noqa: E402

CANARY = "sk-CANARY-1234567890abcdef"
BASE = "http://127.0.0.1/v1"
PET = {"id": 1, "name": "Rex", "categoryId": 3, "status": "available"}

Handler = Callable[[httpx.Request], httpx.Response]


class SleepRecorder:
    """Stands in for asyncio.sleep: records each requested delay, sleeps not at all."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


@pytest.fixture
def sleeps() -> SleepRecorder:
    return SleepRecorder()


@pytest.fixture
def retry(sleeps: SleepRecorder) -> RetryPolicy:
    """Deterministic policy: no jitter, recorded sleeps."""
    return RetryPolicy(attempts=3, backoff=0.25, backoff_max=4.0, retry_after_cap=10.0, jitter=False, sleep=sleeps)


class Script:
    """A MockTransport handler that answers from a list, one reply per request, and records requests."""

    def __init__(self, *replies: httpx.Response | Exception | Handler) -> None:
        self.replies = list(replies)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        reply = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
        if isinstance(reply, Exception):
            raise reply
        if callable(reply) and not isinstance(reply, httpx.Response):
            return reply(request)
        return reply


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


def jresp(status: int, data: Any, **headers: str) -> httpx.Response:
    headers = {"Content-Type": "application/json", **headers}
    return httpx.Response(status, content=json.dumps(data).encode(), headers=headers)


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

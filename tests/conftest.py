"""Shared fixtures: a command session over the real sandbox service, in-process (tests/commands, tests/faces).

``transport.requests`` counts what was sent, so tests can prove bad input sends nothing.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from bot_commands.commands import default_registry
from bot_commands.policy import Policy
from bot_commands.results import EnvInfo
from bot_commands.session import CommandSession
from petstore_api.client import PetStoreClient
from petstore_api.masking import mask_secret
from petstore_server.sandbox import Sandbox

BASE = "http://sandbox.localhost/v1"


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """Two test processes a core for ``-n auto``: most of the suite's time is spent waiting on the servers its tests
    start (Synapse, ngIRCd, Prosody, PostgreSQL clusters, lease expiries, a chat server's flood limit), not on the
    CPU. With one process a core the suite kept the two cores of a quiet machine ~half busy (5 min 22 s of wall
    time for 5 min 34 s of CPU); with two a core those waits overlap. ``--maxprocesses`` caps it (pyproject.toml)."""
    return 2 * len(os.sched_getaffinity(0))


class CountingTransport(httpx.AsyncBaseTransport):
    """Wraps a transport and records every request that reaches it."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner = inner
        self.requests: list[httpx.Request] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return await self.inner.handle_async_request(request)


class Sleeps:
    """Stands in for asyncio.sleep: records, never sleeps."""

    def __init__(self) -> None:
        self.calls: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


@pytest.fixture
def sandbox(tmp_path: Path) -> Iterator[Sandbox]:
    box = Sandbox.open(tmp_path / "sandbox")
    yield box
    box.close()


@pytest.fixture
def transport(sandbox: Sandbox) -> CountingTransport:
    return CountingTransport(httpx.ASGITransport(app=sandbox.app))


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


@pytest.fixture
async def make_session(
    sandbox: Sandbox, transport: CountingTransport, sleeps: Sleeps
) -> AsyncIterator[Callable[..., CommandSession]]:
    clients: list[PetStoreClient] = []

    def make(
        *,
        env: str = "sandbox",
        read_only: bool = False,
        confirm: Any = None,
        policy: Policy | None = None,
        **parts: Any,
    ) -> CommandSession:
        """A session on the sandbox; ``parts``: the rest of what it is built with (actor, pending, audit ...)."""
        client = PetStoreClient(base_url=BASE, api_key=sandbox.api_key, transport=transport, allow_insecure_http=True)
        clients.append(client)
        info = EnvInfo(env=env, base_url=BASE, masked_key=mask_secret(sandbox.api_key), sandbox=env == "sandbox")
        policy = policy or Policy(read_only=read_only, production=env == "production")
        return CommandSession(
            client, env=info, registry=default_registry(), policy=policy, confirm=confirm, sleep=sleeps, **parts
        )

    yield make
    for client in clients:
        await client.aclose()


@pytest.fixture
async def session(make_session: Callable[..., CommandSession]) -> CommandSession:
    return make_session()

"""Fixtures: a real command session on the sandbox service, and app factories."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from faultserver import FaultServer
from tui_support import Harness, Tap, make_client, make_env, no_sleep

from bot_commands.commands import default_registry
from bot_commands.session import CommandSession
from petstore_api import RetryPolicy
from petstore_server.sandbox import Sandbox
from tui.app import PetStoreApp


@pytest.fixture
async def harness(tmp_path: Path) -> AsyncIterator[Harness]:
    sandbox = Sandbox.open(tmp_path / "sandbox", reset=True)
    h = Harness(sandbox=sandbox, clients=[])
    try:
        yield h
    finally:
        for client in h.clients:
            await client.aclose()
        sandbox.close()


@pytest.fixture
def app_factory(tmp_path: Path) -> Iterator[Callable[..., PetStoreApp]]:
    """For snapshot tests (sync): an app on a fresh sandbox; closed at teardown."""
    opened: list[Sandbox] = []

    def build(
        *,
        env: str = "sandbox",
        api_key: str | None = None,
        setup: Callable[[Tap], None] | None = None,
        seed: Callable[[Sandbox], None] | None = None,
        retry: RetryPolicy | None = None,
        sandbox_key: str | None = None,
        **kwargs: Any,
    ) -> PetStoreApp:
        folder = tmp_path / f"sandbox{len(opened)}"
        if sandbox_key is not None:  # the key the sandbox accepts, fixed (a snapshot that shows it masked)
            folder.mkdir(mode=0o700)
            (folder / "api-key").write_text(sandbox_key + "\n", encoding="ascii")
            (folder / "api-key").chmod(0o600)
        sandbox = Sandbox.open(folder, reset=True)
        opened.append(sandbox)
        if seed is not None:
            seed(sandbox)
        tap = Tap(sandbox.app)
        if setup is not None:
            setup(tap)
        client = make_client(sandbox, api_key=api_key, transport=tap, retry=retry)
        session = CommandSession(client, env=make_env(env), registry=default_registry(), sleep=no_sleep)
        return PetStoreApp(session, **kwargs)

    yield build
    for sandbox in opened:
        sandbox.close()


@pytest.fixture(scope="session")
def faults() -> Iterator[FaultServer]:
    """The loopback fault server (tests/faultserver.py): ``hang`` accepts and never answers."""
    server = FaultServer().start()
    yield server
    server.stop()

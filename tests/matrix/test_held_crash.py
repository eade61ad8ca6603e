"""A crash between the service's commit and the bot's record of an approved write, with real processes: a real
Synapse, ``petstore serve`` as production behind a proxy that holds the answer to the create (the one window a
real service does not open on demand), the real ``petstore bot matrix`` killed with SIGKILL there, a terminal's
request in a PostgreSQL state. The restarted bot finishes it: the same pet (the service's replay under the code's
Idempotency-Key), the ``ok`` audit line naming asker and approver, the row ``done``, the room told."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from aiohttp import web
from cli_support import keyed_service
from pg_support import database_url, start_pg_server

from matrix.bot_process import ROOT, BotProcess, approvals_config, petstore_env
from matrix.conftest import register
from matrix.cs_client import MatrixUser, from_sender
from matrix.fault_proxy import ForwardingProxy
from matrix.synapse_server import SynapseServer

KEY = "sk-test-held-crash-0123456789"

pytestmark = pytest.mark.slow


class HoldingProxy(ForwardingProxy):
    """Passes every request to the service; while ``hold`` is set, a pet's creation reaches the service (it
    commits), ``committed`` is set and the answer is never given."""

    def __init__(self, upstream: str) -> None:
        super().__init__(upstream)
        self.hold = True
        self.committed = asyncio.Event()
        self.released = asyncio.Event()

    async def answered(self, request: web.Request) -> None:
        if self.hold and request.method == "POST" and request.path.rstrip("/").endswith("/pets"):
            self.committed.set()
            await self.released.wait()  # the answer is held until the bot is gone, and the proxy closes

    async def aclose(self) -> None:
        """Lets held answers end first: aiohttp's cleanup waits for every handler (60 s at most) before it closes."""
        self.released.set()
        await super().aclose()


@pytest.fixture
def service(tmp_path: Path) -> Iterator[str]:
    with keyed_service(tmp_path / "serve", KEY) as url:
        yield url


@pytest.fixture
def state_url() -> Iterator[str]:
    with start_pg_server() as server, database_url(server) as url:
        yield url


@pytest.fixture
async def proxy(service: str) -> AsyncIterator[HoldingProxy]:
    made = await HoldingProxy(service).start()
    try:
        yield made
    finally:
        await made.aclose()


def _petstore(config: Path, root: Path, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "petstore_cli", "--config", str(config), "--env", "production", *args],
        cwd=ROOT,
        env=petstore_env(root),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


async def test_a_bot_killed_after_the_commit_finishes_the_write_once_when_it_starts_again(
    homeserver: SynapseServer, tmp_path: Path, proxy: HoldingProxy, state_url: str
) -> None:
    account, bob_account = register(homeserver, "petbot"), register(homeserver, "bob")
    bob = await MatrixUser.login(base_url=homeserver.url, user_id=bob_account.user_id, password=bob_account.password)
    room = await bob.create_room(invite=[account.user_id])
    config = approvals_config(
        homeserver=homeserver.url,
        user_id=account.user_id,
        root=tmp_path / "bot",
        approver=bob.user_id,
        room=room,
        service=proxy.url,
        key=KEY,
        state=state_url,
    )
    first = BotProcess(config, password=account.password, args=["--env", "production"]).start()
    second: BotProcess | None = None
    try:
        first.ready()
        await bob.wait_membership(room, account.user_id, "join")
        path, terminal = first.config_path, tmp_path / "terminal"
        code = await asyncio.to_thread(_petstore, path, terminal, "add", "Crash Rex", "--category", "3", "--no-wait")
        code = code.strip()
        await bob.wait_for(room, lambda evs: any(code in e["content"].get("body", "") for e in evs))
        await bob.send_text(room, f"!approve {code}")
        await asyncio.wait_for(proxy.committed.wait(), timeout=60)
        first.crash()  # SIGKILL: the service has the pet, the bot never learned it
        [left] = json.loads(
            await asyncio.to_thread(_petstore, path, terminal, "approvals", "show", code, "--format", "json")
        )
        assert left["state"] == "approved"
        assert [line["outcome"] for line in first.audit() if line.get("pending_code") == code] == []

        proxy.hold = False
        second = BotProcess(config, password=account.password, args=["--env", "production"]).start()
        second.ready()

        def told(events: list) -> bool:
            return any(
                "already added by this same request" in e["content"].get("body", "")
                for e in from_sender(events, account.user_id)
            )

        events = await bob.wait_for(room, told, deadline=90)
        [notice] = [e for e in from_sender(events, account.user_id) if "already added by this" in e["content"]["body"]]
        assert "Crash Rex" in notice["content"]["body"]
        [shown] = json.loads(
            await asyncio.to_thread(_petstore, path, terminal, "approvals", "show", code, "--format", "json")
        )
        assert shown["state"] == "done" and shown["decided_by"] == bob.user_id
        listed = json.loads(await asyncio.to_thread(_petstore, path, terminal, "list", "--all", "--format", "json"))
        assert [pet["name"] for pet in listed].count("Crash Rex") == 1
        ok = [line for line in second.audit() if line.get("pending_code") == code and line["outcome"] == "ok"]
        assert len(ok) == 1 and ok[0]["actor"] == shown["asker"] and ok[0]["approver"] == bob.user_id
    finally:
        first.crash()
        if second is not None:
            second.stop()
        await bob.aclose()

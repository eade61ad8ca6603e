"""A terminal's request for approval, approved (or denied) in the approvals room of a real Synapse.

Everything is real: ``petstore serve`` is production, ``petstore bot matrix`` serves it with ``[bot] approvals =
["production"]`` and its state in a PostgreSQL database of the test's own, and the terminal is the ``petstore``
program itself, sharing that database. A person's client in the room does the approving.
"""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from cli_support import keyed_service
from pg_support import database_url, start_pg_server

from matrix.bot_process import ROOT, BotProcess, approvals_config, ask, petstore_env
from matrix.conftest import register
from matrix.cs_client import Event, MatrixUser, from_sender
from matrix.synapse_server import SynapseServer

KEY = "sk-test-terminal-approval-0123"
CODE = re.compile(r"approve ([A-Z0-9]{6})\b")

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``petstore serve`` on loopback (seeded): its base URL."""
    with keyed_service(tmp_path_factory.mktemp("serve"), KEY) as url:
        yield url


@pytest.fixture
def state_url() -> Iterator[str]:
    with start_pg_server() as server, database_url(server) as url:
        yield url


@dataclass
class Setup:
    bot: BotProcess
    bob: MatrixUser
    room: str


@pytest.fixture
async def setup(homeserver: SynapseServer, tmp_path: Path, service: str, state_url: str) -> AsyncIterator[Setup]:
    """bob (an operator) in the approvals room with a bot serving production under approvals."""
    account, bob_account = register(homeserver, "petbot"), register(homeserver, "bob")
    bob = await MatrixUser.login(base_url=homeserver.url, user_id=bob_account.user_id, password=bob_account.password)
    room = await bob.create_room(invite=[account.user_id])
    config = approvals_config(
        homeserver=homeserver.url,
        user_id=account.user_id,
        root=tmp_path,
        approver=bob.user_id,
        room=room,
        service=service,
        key=KEY,
        state=state_url,
    )
    bot = BotProcess(config, password=account.password, args=["--env", "production"]).start()
    try:
        bot.ready()
        await bob.wait_membership(room, account.user_id, "join")
        yield Setup(bot=bot, bob=bob, room=room)
    finally:
        bot.stop()
        await bob.aclose()


def terminal(setup: Setup, *args: str) -> subprocess.Popen[str]:
    """``petstore --env production add ...`` with the bot's own config file (the same [bot] state)."""
    return subprocess.Popen(
        [sys.executable, "-m", "petstore_cli", "--config", str(setup.bot.config_path), "--env", "production", *args],
        cwd=ROOT,
        env=petstore_env(setup.bot.config.root / "terminal"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


async def posted_request(setup: Setup, what: str) -> tuple[str, Event]:
    """The code of the request the bot posted in the room for ``what``, and its event."""

    def posted(events: list[Event]) -> list[Event]:
        return [e for e in from_sender(events, setup.bot.config.user_id) if what in e["content"].get("body", "")]

    events = await setup.bob.wait_for(setup.room, lambda evs: bool(posted(evs)))
    [event] = posted(events)
    found = CODE.search(event["content"]["body"])
    assert found is not None, event["content"]["body"]
    return found[1], event


async def finished(proc: subprocess.Popen[str]) -> tuple[str, str]:
    return await asyncio.to_thread(proc.communicate, timeout=60)


async def test_a_terminal_request_approved_in_the_room_runs_once_as_the_asker(setup: Setup) -> None:
    proc = terminal(setup, "add", "Terminal Rex", "--category", "3", "--format", "json")
    try:
        code, event = await posted_request(setup, "Terminal Rex")
        body = event["content"]["body"]
        assert "asks to add pet 'Terminal Rex' (category 3) from a terminal on production" in body
        assert re.search(r"^name +Terminal Rex$", body, re.M) and re.search(r"^categoryId +3$", body, re.M)
        assert event["content"]["msgtype"] == "m.notice" and event["content"]["m.mentions"] == {}
        reply = await ask(setup.bob, setup.room, f"!approve {code}", bot_id=setup.bot.config.user_id)
        out, err = await finished(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    [pet] = json.loads(out)
    assert pet["name"] == "Terminal Rex" and pet["categoryId"] == 3 and isinstance(pet["id"], int)
    assert str(pet["id"]) in reply["body"]
    assert f"request {code} waits in {setup.room}" in err
    lines = [line for line in setup.bot.audit() if line.get("pet_id") == pet["id"]]
    assert len(lines) == 1, setup.bot.audit()
    [line] = lines
    assert line["actor"] == "pg:postgres" and line["approver"] == setup.bob.user_id and line["outcome"] == "ok"
    listed = await asyncio.to_thread(_approvals, setup, "show", code)
    assert listed["state"] == "done" and listed["decided_by"] == setup.bob.user_id and listed["posted"] is True


async def test_a_terminal_request_denied_in_the_room_says_who_and_why(setup: Setup) -> None:
    proc = terminal(setup, "add", "Friday Rex", "--category", "1")
    try:
        code, _ = await posted_request(setup, "Friday Rex")
        await ask(setup.bob, setup.room, f"!deny {code} not on a Friday", bot_id=setup.bot.config.user_id)
        out, err = await finished(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 2 and out == ""
    assert f"{setup.bob.user_id} denied add pet 'Friday Rex' (category 1): not on a Friday; nothing was sent" in err


async def test_no_wait_then_approved_later_shows_in_petstore_approvals(setup: Setup) -> None:
    done = await asyncio.to_thread(
        terminal(setup, "add", "Later Rex", "--category", "2", "--no-wait").communicate, timeout=60
    )
    code = done[0].strip()
    posted, _ = await posted_request(setup, "Later Rex")
    assert posted == code
    await ask(setup.bob, setup.room, f"!approve {code}", bot_id=setup.bot.config.user_id)
    shown = await asyncio.to_thread(_approvals, setup, "show", code)
    assert shown["state"] == "done" and shown["decided_by"] == setup.bob.user_id


def _approvals(setup: Setup, *args: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-m", "petstore_cli", "--config", str(setup.bot.config_path), "approvals", *args]
        + ["--format", "json"],
        cwd=ROOT,
        env=petstore_env(setup.bot.config.root / "terminal"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    records = json.loads(done.stdout)
    assert isinstance(records, list) and len(records) == 1
    record = records[0]
    assert isinstance(record, dict)
    return record

"""Two real ``petstore bot slack`` processes behind a real nginx (Debian's package, the documented site file
docs/nginx-petstore-bot.conf on a free loopback port), sharing one PostgreSQL ``[bot] state`` (a database of the
test's own) and one sandbox: a Confirm or Approve pressed on the prompt one replica gave lands on the other (nginx
takes turns) and writes once.

Slack cannot be reached from here: the tests speak its published protocol (v0-signed slash commands and
block_actions presses) through nginx. Answers to a press go to response_url, which the Slack flavour only ever
calls on hooks.slack.com: the effect of a press is read from the shared sandbox and the replicas' audit logs.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from nginx_support import ROOT, running_nginx_site
from pg_support import database_url, start_pg_server

from petstore_bot.slack_render import APPROVE_ACTION, CONFIRM_ACTION

from .slack_support import BotProcess, SlackClient, block_text, bot_process, buttons

pytestmark = pytest.mark.slow

SITE = ROOT / "docs" / "nginx-petstore-bot.conf"
ALICE, OSCAR = "UALICE", "UOSCAR"


@pytest.fixture
def state_url() -> Iterator[str]:
    with start_pg_server() as server, database_url(server) as url:
        yield url


@contextlib.contextmanager
def _replicas(tmp_path: Path, *, state: str, extra: str = "") -> Iterator[tuple[BotProcess, BotProcess, int]]:
    """Two replicas on one state and one sandbox, and nginx in front of them (its port)."""
    sandbox = tmp_path / "sandbox"
    config = (
        f"state = {json.dumps(state)}\n"
        f"confirm_writes = true\n{extra}"
        "[bot.roles]\n"
        f'operators = ["slack:T1/{ALICE}", "slack:T1/{OSCAR}"]\n'
        "[sandbox]\n"
        f"data_dir = {json.dumps(str(sandbox))}\n"
    )
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "nginx").mkdir()
    with bot_process(tmp_path / "a", config=config) as first, bot_process(tmp_path / "b", config=config) as second:
        ports = [httpx.URL(bot.base).port for bot in (first, second)]
        site = SITE.read_text().replace("127.0.0.1:8081", f"127.0.0.1:{ports[0]}")
        site = site.replace("127.0.0.1:8082", f"127.0.0.1:{ports[1]}")
        with running_nginx_site(site, tmp_path / "nginx") as port:
            yield first, second, port


def _pets(sandbox: Path) -> int:
    with sqlite3.connect(f"file:{sandbox / 'sandbox.db'}?mode=ro", uri=True) as conn:
        return int(conn.execute("SELECT count(*) FROM pets").fetchone()[0])


def _audit(bot: BotProcess) -> list[str]:
    lines = bot.audit.read_text(encoding="utf-8").splitlines() if bot.audit.exists() else []
    return [json.loads(line)["outcome"] for line in lines]


def _which(first: BotProcess, second: BotProcess, text: str) -> list[str]:
    """Which replicas logged ``text`` (their log line of every write and confirmation)."""
    logs = [
        (name, bot.stderr.read_text(encoding="utf-8", errors="replace"))
        for name, bot in (("first", first), ("second", second))
    ]
    return [name for name, log in logs if text in log]


async def test_a_confirm_landing_on_the_other_replica_writes_once(tmp_path: Path, state_url: str) -> None:
    with _replicas(tmp_path, state=state_url) as (first, second, port):
        async with httpx.AsyncClient(timeout=30) as http:
            slack = SlackClient(http=http, base=f"http://127.0.0.1:{port}", hook="http://127.0.0.1:9")
            before = _pets(tmp_path / "sandbox")
            preview = await slack.command("add Relay --category 2", user=ALICE)
            assert preview.status_code == 200, preview.text
            assert "To add a pet, reply" in block_text(preview.json())
            code = buttons(preview.json())[CONFIRM_ACTION]
            asked = _which(first, second, "'/add Relay --category 2'")
            assert len(asked) == 1, "one replica held the write"

            pressed = await slack.press(CONFIRM_ACTION, code, user=ALICE, prompt=preview.json())
            assert pressed.status_code == 200
            await _until(lambda: _which(first, second, f"'/confirm {code}' -> PetCreated"), what="the confirmed write")
            confirmed = _which(first, second, f"'/confirm {code}'")
            assert confirmed != asked, "nginx took the press to the other replica, which ran it"
            assert _pets(tmp_path / "sandbox") == before + 1

            again = await slack.press(CONFIRM_ACTION, code, user=ALICE, prompt=preview.json())
            assert again.status_code == 200
            await _until(lambda: "refused" in _audit(first) + _audit(second), what="the second press refused")
            assert _pets(tmp_path / "sandbox") == before + 1, "the code ran once"
            assert sorted(_audit(first) + _audit(second)) == ["ok", "pending", "refused"]


async def _until(check: object, *, what: str, deadline: float = 20.0) -> None:
    import asyncio
    import time

    end = time.monotonic() + deadline
    while not check():  # type: ignore[operator]
        if time.monotonic() > end:
            raise AssertionError(f"{what}: not within {deadline:.0f}s")
        await asyncio.sleep(0.05)  # polling interval of files written by other processes


async def test_an_approve_landing_on_the_other_replica_runs_the_write_once(tmp_path: Path, state_url: str) -> None:
    """``[bot] approvals`` names the sandbox here: alice's write waits for a second person; oscar's Approve reaches
    the other replica, which runs it once."""
    with _replicas(tmp_path, state=state_url, extra='approvals = ["sandbox"]\n') as (first, second, port):
        async with httpx.AsyncClient(timeout=30) as http:
            slack = SlackClient(http=http, base=f"http://127.0.0.1:{port}", hook="http://127.0.0.1:9")
            before = _pets(tmp_path / "sandbox")
            request = await slack.command("add Quorum --category 2", user=ALICE)
            assert request.status_code == 200, request.text
            assert "asks to add a pet on sandbox" in block_text(request.json())
            code = buttons(request.json())[APPROVE_ACTION]
            asked = _which(first, second, "'/add Quorum --category 2'")
            assert len(asked) == 1, "one replica held the write"

            pressed = await slack.press(APPROVE_ACTION, code, user=OSCAR, prompt=request.json())
            assert pressed.status_code == 200
            await _until(lambda: _which(first, second, f"'/approve {code}' -> PetCreated"), what="the approved write")
            assert _which(first, second, f"'/approve {code}'") != asked, "the other replica ran it"
            assert _pets(tmp_path / "sandbox") == before + 1
            approved = [json.loads(line) for bot in (first, second) for line in _lines(bot) if "approver" in line]
            assert [(e["actor"], e["approver"], e["outcome"]) for e in approved] == [
                (f"slack:T1/{ALICE}", f"slack:T1/{OSCAR}", "ok")
            ]


def _lines(bot: BotProcess) -> list[str]:
    return bot.audit.read_text(encoding="utf-8").splitlines() if bot.audit.exists() else []

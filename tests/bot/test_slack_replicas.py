"""Two real ``petstore bot slack`` processes behind a real nginx (Debian's package, the documented site file
docs/nginx-petstore-bot.conf on a free loopback port), sharing one PostgreSQL ``[bot] state`` (a database of the
test's own) and one sandbox: a Confirm or Approve pressed on the prompt one replica gave lands on the other (nginx
takes turns) and writes once.

Slack cannot be reached from here: the tests speak its published protocol (v0-signed slash commands and
block_actions presses) through nginx. Answers to a press go to response_url, which the Slack flavour only ever
calls on hooks.slack.com: the effect of a press is read from the shared sandbox and the replicas' audit logs.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
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


@dataclass
class _Pair:
    """Two replicas behind nginx, and a Slack client speaking to nginx."""

    first: BotProcess
    second: BotProcess
    slack: SlackClient
    sandbox: Path

    def which(self, text: str) -> list[str]:
        """Which replicas logged ``text`` (their log line of every write, confirmation and approval)."""
        logs = [(name, bot.stderr.read_text(encoding="utf-8", errors="replace")) for name, bot in self._named()]
        return [name for name, log in logs if text in log]

    def audit(self) -> list[dict]:
        """Both replicas' audit lines."""
        lines = [line for _, bot in self._named() if bot.audit.exists() for line in bot.audit.read_text().splitlines()]
        return [json.loads(line) for line in lines]

    async def held_then_pressed(self, line: str, *, asker: str, action: str, presser: str) -> tuple[str, dict]:
        """``line`` asked of one replica (its write held), then ``action`` pressed: run by the other replica, once.
        The code and the prompt."""
        before = _pets(self.sandbox)
        answer = await self.slack.command(line, user=asker)
        assert answer.status_code == 200, answer.text
        prompt = answer.json()
        code = buttons(prompt)[action]
        asked = self.which(f"'/{line}'")
        assert len(asked) == 1, "one replica held the write"
        assert (await self.slack.press(action, code, user=presser, prompt=prompt)).status_code == 200
        verb = "confirm" if action == CONFIRM_ACTION else "approve"
        await _until(lambda: self.which(f"'/{verb} {code}' -> PetCreated"), what=f"the write after {verb}")
        assert self.which(f"'/{verb} {code}'") != asked, "nginx took the press to the other replica, which ran it"
        assert _pets(self.sandbox) == before + 1
        return code, prompt

    def _named(self) -> list[tuple[str, BotProcess]]:
        return [("first", self.first), ("second", self.second)]


@contextlib.asynccontextmanager
async def _pair(tmp_path: Path, *, state: str, extra: str = "") -> AsyncIterator[_Pair]:
    with _replicas(tmp_path, state=state, extra=extra) as (first, second, port):
        async with httpx.AsyncClient(timeout=30) as http:
            slack = SlackClient(http=http, base=f"http://127.0.0.1:{port}", hook="http://127.0.0.1:9")
            yield _Pair(first=first, second=second, slack=slack, sandbox=tmp_path / "sandbox")


async def test_a_confirm_landing_on_the_other_replica_writes_once(tmp_path: Path, state_url: str) -> None:
    async with _pair(tmp_path, state=state_url) as pair:
        code, prompt = await pair.held_then_pressed(
            "add Relay --category 2", asker=ALICE, action=CONFIRM_ACTION, presser=ALICE
        )
        assert "To add a pet, reply" in block_text(prompt)
        pets = _pets(pair.sandbox)
        again = await pair.slack.press(CONFIRM_ACTION, code, user=ALICE, prompt=prompt)
        assert again.status_code == 200
        await _until(lambda: "refused" in [e["outcome"] for e in pair.audit()], what="the second press refused")
        assert _pets(pair.sandbox) == pets, "the code ran once"
        assert sorted(e["outcome"] for e in pair.audit()) == ["ok", "pending", "refused"]


async def test_an_approve_landing_on_the_other_replica_runs_the_write_once(tmp_path: Path, state_url: str) -> None:
    """``[bot] approvals`` names the sandbox here: alice's write waits for a second person; oscar's Approve reaches
    the other replica, which runs it once."""
    async with _pair(tmp_path, state=state_url, extra='approvals = ["sandbox"]\n') as pair:
        _, prompt = await pair.held_then_pressed(
            "add Quorum --category 2", asker=ALICE, action=APPROVE_ACTION, presser=OSCAR
        )
        assert "asks to add a pet on sandbox" in block_text(prompt)
        approved = [(e["actor"], e["approver"], e["outcome"]) for e in pair.audit() if "approver" in e]
        assert approved == [(f"slack:T1/{ALICE}", f"slack:T1/{OSCAR}", "ok")]


async def _until(check: Callable[[], object], *, what: str, deadline: float = 20.0) -> None:
    end = time.monotonic() + deadline
    while not check():
        if time.monotonic() > end:
            raise AssertionError(f"{what}: not within {deadline:.0f}s")
        await asyncio.sleep(0.05)  # polling interval of files written by other processes

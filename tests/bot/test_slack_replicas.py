"""Two real ``petstore bot slack`` processes behind a real nginx (Debian's package, the documented site file
docs/nginx-petstore-bot.conf on a free loopback port), sharing one PostgreSQL ``[bot] state`` (a database of the
test's own) and one service: a Confirm or Approve pressed on the prompt one replica gave lands on the other (nginx
takes turns) and writes once; a watch is posted once, by the lease holder, and by the other replica once the
holder is killed.

Slack cannot be reached from here: the tests speak its published protocol (v0-signed slash commands and
block_actions presses) through nginx. Answers to a press go to response_url, which the Slack flavour only ever
calls on hooks.slack.com: the effect of a press is read from the shared sandbox and the replicas' audit logs.
Posts made unasked (watches) go to the Web API stand-in tests/bot/slack_api_server.py (written to Slack's published
protocol: bearer token checked, JSON ``ok`` answers), which records every chat.postMessage.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest
from cli_support import clean_env, run_petstore
from matrix.bot_process import LEASE_TTL
from nginx_support import ROOT, running_nginx_site
from pg_support import database_url, start_pg_server
from server.support import running_server

from petstore_bot.slack_render import APPROVE_ACTION, CONFIRM_ACTION

from .slack_api_server import SlackServer, slack_server
from .slack_support import BotProcess, SlackClient, block_text, bot_process, buttons

pytestmark = pytest.mark.slow

SITE = ROOT / "docs" / "nginx-petstore-bot.conf"
ALICE, OSCAR = "UALICE", "UOSCAR"
KEY = "sk-slack-replicas-0123456789"
#: What a replica logs when it takes the lease (``[bot] state`` names one lease per flavour).
LEASE_TAKEN = "lease slack bot taken by"
#: What a replica logs, with ``-v``, each time it polls the service for a watch of every new pet.
POLLED = "watch all: polled"
T = TypeVar("T")


@pytest.fixture
def state_url() -> Iterator[str]:
    with start_pg_server() as server, database_url(server) as url:
        yield url


@contextlib.contextmanager
def _replicas(
    tmp_path: Path, *, state: str, extra: str = "", env: dict[str, str] | None = None, args: Sequence[str] = ()
) -> Iterator[tuple[BotProcess, BotProcess, int]]:
    """Two replicas on one state and one sandbox (or the service ``env`` names; ``args``: more of their command
    line), and nginx in front of them (its port)."""
    sandbox = tmp_path / "sandbox"
    config = (
        f"state = {json.dumps(state)}\n"
        'approval_key = "both-replicas-seal-with-this-key"\n'  # a code held by one is decided on the other
        f"confirm_writes = true\n{extra}"
        "[bot.roles]\n"
        f'operators = ["slack:T1/{ALICE}", "slack:T1/{OSCAR}"]\n'
        "[sandbox]\n"
        f"data_dir = {json.dumps(str(sandbox))}\n"
    )
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "nginx").mkdir()
    with (
        bot_process(tmp_path / "a", config=config, env=env, args=args) as first,
        bot_process(tmp_path / "b", config=config, env=env, args=args) as second,
    ):
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


@pytest.fixture
def service(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """``petstore serve`` with its access log in a file: (base URL, log path)."""
    log = tmp_path / "access.log"
    with running_server(tmp_path / "pets.db", "--access-log", str(log), keys=[KEY]) as (_, url, _):
        yield url, log


async def test_a_watch_is_posted_once_by_the_lease_holder_then_once_by_the_survivor(
    tmp_path: Path, state_url: str, service: tuple[str, Path]
) -> None:
    """Both replicas answer slash commands; the lease holder alone polls the service and posts new pets
    (chat.postMessage with the bot token, to the Web API stand-in). SIGKILL on the holder: the other one takes the
    lease and posts the next pet, once. Each replica logs its polls (``-v``): the other one stands by meanwhile."""
    url, access = service
    async with slack_server() as slack:
        env = slack.bot_env(service=url, api_key=KEY)
        replicas = _replicas(
            tmp_path, state=state_url, extra=f"watch_interval = 1\nlease_ttl = {LEASE_TTL}\n", env=env, args=["-v"]
        )
        async with _on_a_thread(replicas) as (first, second, port):
            bots = {"first": first, "second": second}
            await _until(lambda: _lease_takers(bots), what="a replica taking the lease")
            (holder,) = _lease_takers(bots)
            async with httpx.AsyncClient(timeout=30) as http:
                nginx = SlackClient(http=http, base=f"http://127.0.0.1:{port}", hook=slack.hook_url, channel="CW")
                answer = await nginx.command("watch", user=ALICE)
            assert answer.status_code == 200, answer.text
            assert "Watching new pets here" in block_text(answer.json())

            pets = [await _add(tmp_path, url, f"Once-{n}") for n in range(3)]
            await slack.wait_for(lambda: all(_posts(slack, pet) for pet in pets), timeout=30)
            await _two_more_polls(access)
            assert [len(_posts(slack, pet)) for pet in pets] == [1, 1, 1], "each pet posted once by both replicas"
            assert len(slack.messages) == 3 and {m["channel"] for m in slack.messages} == {"CW"}
            assert _lease_takers(bots) == [holder], "the other replica stood by"
            assert [name for name, bot in bots.items() if POLLED in _log(bot)] == [holder], "the holder alone polls"

            killed = bots.pop(holder)
            killed.proc.kill()
            await asyncio.to_thread(killed.proc.wait)
            (survivor,) = bots.values()
            last = await _add(tmp_path, url, "After-The-Kill")
            await slack.wait_for(lambda: _posts(slack, last), timeout=30)
            await _two_more_polls(access)
            assert len(_posts(slack, last)) == 1, "the survivor posted the next pet once"
            assert len(slack.messages) == 4, "and nothing again"
            assert LEASE_TAKEN in _log(survivor) and POLLED in _log(survivor)


@contextlib.asynccontextmanager
async def _on_a_thread(manager: contextlib.AbstractContextManager[T]) -> AsyncIterator[T]:
    """``manager`` (blocking: processes started and stopped) entered and left on a thread, so that the servers in
    this event loop (the Web API stand-in) answer meanwhile."""
    stack = contextlib.ExitStack()
    try:
        yield await asyncio.to_thread(stack.enter_context, manager)
    finally:
        await asyncio.to_thread(stack.close)


def _lease_takers(bots: dict[str, BotProcess]) -> list[str]:
    """The replicas whose log says they took the lease."""
    return [name for name, bot in bots.items() if LEASE_TAKEN in _log(bot)]


def _log(bot: BotProcess) -> str:
    return bot.stderr.read_text(encoding="utf-8", errors="replace")


async def _add(tmp_path: Path, url: str, name: str) -> int:
    """A pet added with the real ``petstore add``: its id."""
    env = clean_env(tmp_path / "cli", PETSTORE_BASE_URL=url, PETSTORE_API_KEY=KEY)
    done = await asyncio.to_thread(run_petstore, "add", name, "--category", "2", "--format", "json", env=env)
    assert done.returncode == 0, done.stderr
    return int(json.loads(done.stdout)[0]["id"])


def _posts(slack: SlackServer, pet_id: int) -> list[dict[str, Any]]:
    """The chat.postMessage bodies announcing ``pet_id``."""
    return [m for m in slack.messages if str(m.get("text", "")).startswith(f"New pet {pet_id}:")]


def _pet_reads(access: Path) -> int:
    """The service's GET /v1/pets so far (its access log, whole lines only): each poll of a watch is one."""
    lines = access.read_text().split("\n")[:-1] if access.exists() else []
    return sum(1 for line in lines if (entry := json.loads(line))["method"] == "GET" and entry["path"] == "/v1/pets")


async def _two_more_polls(access: Path) -> None:
    """Returns once the service has been polled twice more: a whole step of the notifier (a poll, then the posting
    of what is queued) ran since the call, so a post made twice would be seen."""
    start = _pet_reads(access)
    await _until(lambda: _pet_reads(access) >= start + 2, what="two more polls of the service")


async def _until(check: Callable[[], object], *, what: str, deadline: float = 20.0) -> None:
    end = time.monotonic() + deadline
    while not check():
        if time.monotonic() > end:
            raise AssertionError(f"{what}: not within {deadline:.0f}s")
        await asyncio.sleep(0.05)  # polling interval of files written by other processes

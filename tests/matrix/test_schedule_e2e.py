"""!every end to end, in-process so its clock can be moved: the bot's own wiring (petstore_cli.bot) with a test
clock, the Matrix transport on a real Synapse, a real ``petstore serve``, the state in a PostgreSQL database of the
test's own. Moving the clock past a run makes the schedule fire at the next step (about a second), not a minute."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from pg_support import database_url, start_pg_server
from pydantic import SecretStr
from server.support import running_server

from matrix.bot_process import ask, room_with
from matrix.conftest import BotRunner
from matrix.cs_client import Event, MatrixUser, from_sender
from petstore_bot.assembly import build_core, open_state
from petstore_bot.background import bot_notifications, notifier
from petstore_bot.chat import Reply
from petstore_bot.core import BotCore
from petstore_bot.scheduler import RunAs
from petstore_bot.settings import BotRoles, BotSettings
from petstore_cli.bot import compose_bot
from petstore_cli.settings.model import Settings

KEY = "sk-schedule-e2e-0123456789"


class Clock:
    """The schedules' clock: the real time plus what the test has moved it on by."""

    def __init__(self) -> None:
        self.ahead = 0.0

    def __call__(self) -> float:
        return time.time() + self.ahead


@pytest.fixture
def state_url() -> Iterator[str]:
    with start_pg_server() as server, database_url(server) as url:
        yield url


@pytest.fixture
def service(tmp_path: Path) -> Iterator[str]:
    with running_server(tmp_path / "pets.db", "--seed", keys=[KEY]) as (_, url, _):
        yield url


@contextlib.asynccontextmanager
async def running_bot(
    bot: BotRunner, *, url: str, state: str, operators: list[str], clock: Clock, tmp_path: Path
) -> AsyncIterator[None]:
    """The bot as ``petstore bot matrix`` wires it (core, notifications, background task), with ``clock``."""
    settings = Settings.model_construct(
        base_url=url,
        api_key=SecretStr(KEY),
        bot=BotSettings(state=state, roles=BotRoles(operators=operators), default_role="viewer", timezone="UTC"),
    )
    settings = Settings.model_validate(settings.model_dump())
    composition = compose_bot(settings, audit_flag=tmp_path / "audit.ndjson")
    state = open_state(settings.bot, state_dir=tmp_path / "state", audit=composition.audit)
    composition.on_close(state.close)
    transport = bot.transport()

    async def announce(room: str, reply: Reply, /, *, key: str | None = None) -> bool:
        return await transport.announce(room, reply, key=key)

    notifications = bot_notifications(
        composition, settings.bot, database=state.database, announce=announce, clock=clock
    )
    core = build_core(composition, settings.bot, platform="matrix", state=state, notifications=notifications)
    background = notifier(notifications, run_as=_run_as(core), announce=announce)
    stop, ready = asyncio.Event(), asyncio.Event()
    tasks = [
        asyncio.create_task(transport.run(core.handle, stop=stop, ready=ready)),
        asyncio.create_task(background.run(stop)),
    ]
    try:
        await asyncio.wait_for(ready.wait(), timeout=60)
        yield
    finally:
        stop.set()
        await asyncio.wait_for(asyncio.gather(*tasks), timeout=60)
        await composition.aclose()


def _run_as(core: BotCore) -> RunAs:
    async def run_as(room: str, user: str, line: str) -> Reply:
        return await core.reply_as(room=room, user=user, line=line)

    return run_as


def _schedule_posts(events: list[Event], bot_id: str, schedule_id: int) -> list[str]:
    return [
        str(e["content"]["body"])
        for e in from_sender(events, bot_id)
        if str(e["content"]["body"]).startswith(f"Schedule {schedule_id} (")
    ]


async def test_a_schedule_fires_as_its_creator_once_per_run_and_a_late_run_is_skipped_and_told(
    bot: BotRunner, users: object, tmp_path: Path, service: str, state_url: str
) -> None:
    alice: MatrixUser = await users("alice")  # type: ignore[operator]
    clock = Clock()
    bot_id = bot.account.user_id
    async with running_bot(
        bot, url=service, state=state_url, operators=[alice.user_id], clock=clock, tmp_path=tmp_path
    ):
        room = await room_with(alice, bot_id)
        refused = await ask(alice, room, "!every 1m /add Sneaky --category 1", bot_id=bot_id)
        assert refused["body"] == "Not allowed: !every runs read commands only (such as !list or !orders): !add writes"
        made = await ask(alice, room, "!every 1m /list available --limit 2", bot_id=bot_id)
        assert made["body"].startswith("Schedule 1: every 1m (UTC) /list available --limit 2")

        clock.ahead = 61.0
        events = await alice.wait_for(room, lambda ev: len(_schedule_posts(ev, bot_id, 1)) == 1)
        post = _schedule_posts(events, bot_id, 1)[0]
        assert post.startswith(f"Schedule 1 (every 1m, by {alice.user_id}): /list available --limit 2\n")
        assert "available" in post.splitlines()[-1] or "pets" in post

        clock.ahead = 61.0 + 2 * 3600  # the bot "was not running" for two hours: skipped, and the room told
        events = await alice.wait_for(room, lambda ev: len(_schedule_posts(ev, bot_id, 1)) == 2)
        skipped = _schedule_posts(events, bot_id, 1)[1]
        assert "did not run at" in skipped and "more than 60 minutes late is skipped" in skipped

        listed = await ask(alice, room, "!schedules", bot_id=bot_id)
        assert "every 1m" in listed["body"] and "times in UTC" in listed["body"]
        dropped = await ask(alice, room, "!unschedule 1", bot_id=bot_id)
        assert dropped["body"] == "Dropped schedule 1: every 1m /list available --limit 2"
        clock.ahead += 3600
        assert (await ask(alice, room, "!schedules", bot_id=bot_id))["body"].startswith("no schedules here")
        events = await alice.messages(room)
        assert len(_schedule_posts(events, bot_id, 1)) == 2  # one run, one skip; nothing after the drop

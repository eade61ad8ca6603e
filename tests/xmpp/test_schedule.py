"""!every over XMPP, in-process so its clock can be moved (as tests/matrix/test_schedule_e2e.py): the runtime's
pieces (core, notifications, notifier) with a test clock, the XMPP transport on a real Prosody, the sandbox service.
Moving the clock past a run makes the schedule fire at the notifier's next step, not a minute later."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from petstore_bot.assembly import build_core, open_state
from petstore_bot.background import bot_notifications, notifier
from petstore_bot.chat import Reply
from petstore_cli.bot import compose_bot
from petstore_cli.settings.load import load_settings
from xmpp.conftest import BotRunner, addressing_of
from xmpp.person import Person, from_

pytestmark = pytest.mark.slow


class Clock:
    """The schedules' clock: the real time plus what the test has moved it on by."""

    def __init__(self) -> None:
        self.ahead = 0.0

    def __call__(self) -> float:
        return time.time() + self.ahead


@contextlib.asynccontextmanager
async def running_bot(bot: BotRunner, *, room: str, operator: str, clock: Clock, tmp_path: Path) -> AsyncIterator[None]:
    """The bot as the runtime wires it (core, notifications, notifier) on the XMPP transport, with ``clock``."""
    path = tmp_path / "config.toml"
    path.write_text(
        f'[sandbox]\ndata_dir = "{tmp_path / "sandbox"}"\n[bot]\naudit_log = "{tmp_path / "audit.ndjson"}"\n'
        f'rate_limit = "off"\ntimezone = "UTC"\n[bot.roles]\noperators = ["{operator}"]\n',
        encoding="utf-8",
    )
    settings = load_settings(config_path=path).settings
    composition = compose_bot(settings)
    state = open_state(settings.bot, state_dir=tmp_path / "state", audit=composition.audit)

    async def announce(room: str, reply: Reply, /, *, key: str | None = None) -> bool:
        return await transport.announce(room, reply, key=key)

    notifications = bot_notifications(
        composition, settings.bot, database=state.database, announce=announce, clock=clock
    )
    core = build_core(
        composition, settings.bot, platform="xmpp", names=["petbot"], state=state, notifications=notifications
    )
    transport = bot.transport(rooms=[room], addressing=addressing_of(core))

    async def run_as(room: str, user: str, line: str) -> Reply:
        return await core.reply_as(room=room, user=user, line=line)

    background = notifier(notifications, run_as=run_as, announce=announce)
    stop = asyncio.Event()
    tasks = [asyncio.create_task(transport.run(core.handle, stop=stop)), asyncio.create_task(background.run(stop))]
    try:
        assert transport.reach is not None
        await asyncio.wait_for(transport.reach.wait_up(), timeout=60)
        yield
    finally:
        stop.set()
        await asyncio.wait_for(asyncio.gather(*tasks), timeout=60)
        await composition.aclose()
        state.close()


async def test_a_schedule_runs_as_its_creator_and_posts_in_the_room(bot: BotRunner, people, room, tmp_path) -> None:
    alice: Person = await people("alice")
    await alice.join(room, "alice")
    clock = Clock()
    petbot = from_(f"{room}/petbot")
    async with running_bot(bot, room=room, operator=f"xmpp:{alice.jid}", clock=clock, tmp_path=tmp_path):
        alice.say(room, "!every 1m /list available --limit 2")
        made = await alice.expect(lambda m: petbot(m) and m["body"].startswith("Schedule 1:"))
        assert made["body"].startswith("Schedule 1: every 1m (UTC) /list available --limit 2")
        clock.ahead = 61.0
        post = await alice.expect(lambda m: petbot(m) and m["body"].startswith("Schedule 1 ("))
        assert post["body"].startswith(f"Schedule 1 (every 1m, by xmpp:{alice.jid}): /list available --limit 2\n")
        assert "available" in post["body"]

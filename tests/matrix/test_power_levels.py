"""The transport keeps a room's power levels against a real Synapse: a change counts from the messages after it.

A message sent before a change of levels is answered with the levels it was sent under, even when it is still
waiting its turn (behind the same person's slow command) when the change comes in: the transport answers the
messages in hand before it takes the new levels.
"""

from __future__ import annotations

import asyncio
import logging
import time

import pytest

from matrix.conftest import BotRunner
from matrix.cs_client import POLL, replies_to
from petstore_bot.chat import Incoming, Reply
from petstore_bot.roles import PowerLevels

pytestmark = pytest.mark.slow

CHANGE = "change: answering the messages before it first"


async def logged(caplog: pytest.LogCaptureFixture, text: str, *, deadline: float = 60.0) -> None:
    end = time.monotonic() + deadline
    while text not in caplog.text:
        assert time.monotonic() < end, f"{text!r} not logged within {deadline:.0f}s"
        await asyncio.sleep(POLL)


async def test_a_message_before_a_change_of_levels_keeps_the_old_ones(
    bot: BotRunner, users, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="petstore_bot.matrix")
    owner, vic = await users("owner"), await users("vic")
    room = await owner.create_room(invite=[bot.account.user_id, vic.user_id])
    await vic.join(room)
    levels, release = PowerLevels([room]), asyncio.Event()

    async def level_at_handling(message: Incoming) -> Reply:
        if message.text == "!hold":
            await release.wait()
        return Reply(text=f"{message.text} {levels.level(message.room, message.user)}")

    async with bot.running(level_at_handling, power_levels=levels):
        await owner.wait_membership(room, bot.account.user_id, "join")
        hold, before = await vic.send_text(room, "!hold"), await vic.send_text(room, "!before")
        await owner.set_power_level(room, vic.user_id, 50)
        after = await vic.send_text(room, "!after")
        await logged(caplog, f"power levels of {room} {CHANGE}")
        release.set()
        events = await vic.wait_for(room, lambda ev: bool(replies_to(ev, after, sender=bot.account.user_id)))
    bodies = {
        asked: [e["content"]["body"] for e in replies_to(events, asked, sender=bot.account.user_id)]
        for asked in (hold, before, after)
    }
    assert bodies == {hold: ["!hold 0"], before: ["!before 0"], after: ["!after 50"]}

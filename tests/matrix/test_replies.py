"""The transport against a real Synapse: notices with HTML and no pings, related as ``reply_style`` says;
invites by policy."""

from __future__ import annotations

import logging

import pytest

from matrix.conftest import BotRunner
from matrix.cs_client import from_sender, replies_to

pytestmark = pytest.mark.slow


async def test_a_reply_is_a_notice_replying_with_html_and_no_mentions(bot: BotRunner, users, caplog) -> None:
    caplog.set_level(logging.DEBUG)
    alice = await users("alice")
    room = await alice.create_room()
    await alice.invite(room, bot.account.user_id)
    async with bot.running(rooms=[room]):
        asked = await alice.send_text(room, "!hello @room")
        events = await alice.wait_for(room, lambda ev: replies_to(ev, asked, sender=bot.account.user_id))
        [reply] = replies_to(events, asked, sender=bot.account.user_id)
        content = reply["content"]
        assert content["msgtype"] == "m.notice"
        assert content["body"] == "HELLO @ROOM"
        assert content["format"] == "org.matrix.custom.html"
        assert content["formatted_body"] == "<b>HELLO @ROOM</b>"
        assert content["m.mentions"] == {}
        assert content["m.relates_to"] == {"m.in_reply_to": {"event_id": asked}}, "a reply, not a new thread"

        in_thread = await alice.send(
            room,
            {"msgtype": "m.text", "body": "!again", "m.relates_to": {"rel_type": "m.thread", "event_id": asked}},
        )
        events = await alice.wait_for(room, lambda ev: replies_to(ev, in_thread, sender=bot.account.user_id))
        [second] = replies_to(events, in_thread, sender=bot.account.user_id)
        assert second["content"]["m.relates_to"]["event_id"] == asked, "stays in the asking message's thread"
        assert second["content"]["body"] == "AGAIN"
    bot_lines = from_sender(events, bot.account.user_id)
    assert len(bot_lines) == 2, "its own notices are not answered"
    assert bot.account.password not in caplog.text


async def test_messages_not_for_the_bot_and_notices_get_no_answer(bot: BotRunner, users) -> None:
    alice = await users("alice")
    room = await alice.create_room(invite=[bot.account.user_id])
    async with bot.running(rooms=[room]):
        await alice.send_text(room, "just chatting, " + "x" * 5000)
        await alice.send(room, {"msgtype": "m.notice", "body": "!from another bot"})
        last = await alice.send_text(room, "!last")
        events = await alice.wait_for(room, lambda ev: replies_to(ev, last, sender=bot.account.user_id))
    assert [e["content"]["body"] for e in from_sender(events, bot.account.user_id)] == ["LAST"]


async def test_invites_are_accepted_from_allowed_users_only(bot: BotRunner, users) -> None:
    alice, mallory = await users("alice"), await users("mallory")
    async with bot.running(accept_invite=lambda inviter, _direct, _room: inviter == alice.user_id):
        good = await alice.create_room(invite=[bot.account.user_id])
        bad = await mallory.create_room(invite=[bot.account.user_id])
        await alice.wait_membership(good, bot.account.user_id, "join")
        await mallory.wait_membership(bad, bot.account.user_id, "leave")
        asked = await alice.send_text(good, "!hi")
        await alice.wait_for(good, lambda ev: replies_to(ev, asked, sender=bot.account.user_id))


@pytest.mark.parametrize(
    ("style", "relates"),
    [
        (
            "thread",
            lambda asked: {
                "rel_type": "m.thread",
                "event_id": asked,
                "is_falling_back": True,
                "m.in_reply_to": {"event_id": asked},
            },
        ),
        ("plain", lambda asked: None),
    ],
)
async def test_reply_style_thread_starts_a_thread_and_plain_relates_to_nothing(
    bot: BotRunner, users, style: str, relates
) -> None:
    alice = await users("alice")
    room = await alice.create_room(invite=[bot.account.user_id])
    async with bot.running(rooms=[room], reply_style=style):
        asked = await alice.send_text(room, "!hello")
        events = await alice.wait_for(room, lambda ev: bool(from_sender(ev, bot.account.user_id)))
    [reply] = from_sender(events, bot.account.user_id)
    assert reply["content"].get("m.relates_to") == relates(asked)
    assert reply["content"]["body"] == "HELLO"

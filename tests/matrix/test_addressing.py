"""Addressing against a real Synapse, as people type: mentions (text and Element's pill), reply fallbacks,
leading spaces, bare commands in a direct chat only, and invites to direct chats."""

from __future__ import annotations

import pytest

from matrix.conftest import ADDRESSING, BotRunner
from matrix.cs_client import from_sender
from petstore_bot.matrix import matrix_names

pytestmark = pytest.mark.slow


def bodies(events, sender: str) -> list[str]:
    return [e["content"]["body"] for e in from_sender(events, sender)]


async def test_mentions_pills_fallbacks_and_spaces_address_the_bot_in_a_room(bot: BotRunner, users) -> None:
    alice, bob = await users("alice"), await users("bob")
    me = bot.account.user_id
    room = await alice.create_room(invite=[me, bob.user_id])
    await bob.join(room)
    rules = ADDRESSING.__class__(prefix="!", commands=ADDRESSING.commands, names=matrix_names(me))
    async with bot.running(rooms=[room], address=rules.line):
        localpart = matrix_names(me)[0]
        await alice.send_text(room, "hello")  # three people: a bare command is chat
        await alice.send_text(room, f"{localpart} is great")  # the name, then no command
        await alice.send_text(room, f"{localpart}: hello")
        await alice.send_text(room, "   !list one")
        await alice.send(
            room,
            {
                "msgtype": "m.text",
                "body": "Pet Bot: list two",
                "format": "org.matrix.custom.html",
                "formatted_body": f'<a href="https://matrix.to/#/{me}">Pet Bot</a>: list two',
                "m.mentions": {"user_ids": [me]},
            },
        )
        asked = await alice.send_text(room, "!earlier")
        await bob.send(
            room,
            {
                "msgtype": "m.text",
                "body": f"> <{alice.user_id}> !earlier\n\n!list three",
                "format": "org.matrix.custom.html",
                "formatted_body": "<mx-reply><blockquote>!earlier</blockquote></mx-reply>!list three",
                "m.relates_to": {"m.in_reply_to": {"event_id": asked}},
            },
        )
        events = await alice.wait_for(room, lambda ev: "LIST THREE" in bodies(ev, me))
    assert bodies(events, me) == ["HELLO", "LIST ONE", "LIST TWO", "EARLIER", "LIST THREE"]


async def test_a_direct_chat_takes_the_bare_command_and_a_viewers_invite(bot: BotRunner, users) -> None:
    alice, mallory = await users("alice"), await users("mallory")
    me = bot.account.user_id
    async with bot.running(accept_invite=lambda _inviter, direct, _room: direct):
        dm = await alice.create_room(invite=[me], direct=True)
        group = await mallory.create_room(invite=[me])
        await alice.wait_membership(dm, me, "join")
        await mallory.wait_membership(group, me, "leave")
        await alice.send_text(dm, "thanks")
        await alice.send_text(dm, "hello")
        events = await alice.wait_for(dm, lambda ev: bool(from_sender(ev, me)))
    assert bodies(events, me) == ["HELLO"]

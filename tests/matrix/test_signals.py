"""What the bot shows around an answer, against a real Synapse: ⏳ and a typing notice while a command is slow
(gone when it is answered), ✅/❌ on writes; and the backlog cutoff after a stop (old commands skipped, told once)."""

from __future__ import annotations

import asyncio
import json
import logging
import uuid

import pytest

from matrix.conftest import BotRunner
from matrix.cs_client import Event, MatrixUser, from_sender, replies_to
from matrix.fault_proxy import FaultProxy
from petstore_bot.chat import Incoming, Reply

pytestmark = pytest.mark.slow


def reactions(events: list[Event], event_id: str, *, sender: str) -> list[Event]:
    return [
        e
        for e in events
        if e.get("type") == "m.reaction"
        and e.get("sender") == sender
        and e.get("content", {}).get("m.relates_to", {}).get("event_id") == event_id
    ]


def redacted(events: list[Event], event_id: str) -> bool:
    return any(e.get("type") == "m.room.redaction" and e.get("redacts") == event_id for e in events) or any(
        e.get("event_id") == event_id and "redacted_because" in e.get("unsigned", {}) for e in events
    )


async def typing_in(user: MatrixUser, room_id: str) -> list[str]:
    """Who the homeserver says is typing in ``room_id`` now (a one-shot sync of ephemeral events; a filter of
    its own each time, as Synapse answers the same initial sync from a cache for a while)."""
    fresh = {"not_types": [f"test.nonce.{uuid.uuid4().hex}"]}
    body = {"account_data": fresh, "room": {"rooms": [room_id], "timeline": {"limit": 0}, "state": {"types": []}}}
    found = (await user.http.get("/sync", params={"timeout": 0, "filter": json.dumps(body)})).json()
    ephemeral = found.get("rooms", {}).get("join", {}).get(room_id, {}).get("ephemeral", {}).get("events", [])
    return [u for e in ephemeral if e.get("type") == "m.typing" for u in e["content"].get("user_ids", [])]


async def test_a_slow_command_shows_busy_until_answered_and_writes_get_a_mark(bot: BotRunner, users) -> None:
    alice = await users("alice")
    me = bot.account.user_id
    room = await alice.create_room(invite=[me])
    release = asyncio.Event()

    async def handler(message: Incoming) -> Reply | None:
        if message.text == "!slow":
            await release.wait()
            return Reply("done slowly")
        return Reply(message.text, mark="✅" if message.text == "!write" else "❌")

    async with bot.running(handler, rooms=[room], slow_after=0.0):
        slow = await alice.send_text(room, "!slow")
        events = await alice.wait_for(room, lambda ev: bool(reactions(ev, slow, sender=me)))
        [busy] = reactions(events, slow, sender=me)
        assert busy["content"]["m.relates_to"]["key"] == "⏳"
        assert me in await typing_in(alice, room)
        release.set()
        events = await alice.wait_for(room, lambda ev: redacted(ev, busy["event_id"]))
        assert [r["content"]["body"] for r in replies_to(events, slow, sender=me)] == ["done slowly"]
        assert me not in await typing_in(alice, room)
        write, refused = await alice.send_text(room, "!write"), await alice.send_text(room, "!nope")
        events = await alice.wait_for(room, lambda ev: bool(reactions(ev, refused, sender=me)))
    marks = {
        asked: [r["content"]["m.relates_to"]["key"] for r in reactions(events, asked, sender=me)]
        for asked in (write, refused)
    }
    assert marks == {write: ["✅"], refused: ["❌"]}, "the ⏳ of each is gone (redacted)"


async def test_commands_missed_longer_ago_than_max_backlog_age_are_skipped_and_the_room_told_once(
    bot: BotRunner, users
) -> None:
    alice = await users("alice")
    me = bot.account.user_id
    room = await alice.create_room(invite=[me])
    async with bot.running(rooms=[room]):
        first = await alice.send_text(room, "!first")
        await alice.wait_for(room, lambda ev: bool(replies_to(ev, first, sender=me)))
    for text in ("!one", "just chatting", "!two"):
        await alice.send_text(room, text)
    skipped = "Skipped {} sent while I was away (older than 0 s, see max_backlog_age): send again what is still needed."

    def bodies(events: list[Event]) -> list[str]:
        return [e["content"].get("m.new_content", e["content"])["body"] for e in from_sender(events, me)]

    async with bot.running(rooms=[room], max_backlog_age=0):
        later = await alice.send_text(room, "!later")
        # Done once !later is answered and the notice counts both missed commands: Synapse may hand the missed
        # messages over in two batches, the second after !later's answer, and its edit of the notice is waited for.
        events = await alice.wait_for(
            room, lambda ev: bool(replies_to(ev, later, sender=me)) and skipped.format("2 commands") in bodies(ev)
        )
    said = bodies(events)
    notices = [body for body in said if body.startswith("Skipped")]
    assert said[0] == "FIRST" and said.count("LATER") == 1 and len(said) == 2 + len(notices), said
    assert notices in ([skipped.format("2 commands")], [skipped.format("1 command"), skipped.format("2 commands")])
    if len(notices) == 2:  # the second is an edit of the first: the room is told once
        first_notice, edit = (
            e for e in from_sender(events, me) if e["content"]["body"].lstrip("* ").startswith("Skipped")
        )
        assert edit["content"]["m.relates_to"] == {"rel_type": "m.replace", "event_id": first_notice["event_id"]}


async def test_a_429_is_waited_out_and_logged_naming_synapses_override_ratelimit(bot: BotRunner, users, caplog) -> None:
    caplog.set_level(logging.WARNING, logger="petstore_bot.matrix")
    alice = await users("alice")
    room = await alice.create_room(invite=[bot.account.user_id])
    proxy = await FaultProxy(bot.server.url).start()
    try:
        async with bot.running(rooms=[room], homeserver=proxy.url):
            proxy.limit_sends = 2
            asked = await alice.send_text(room, "!hello")
            events = await alice.wait_for(room, lambda ev: bool(replies_to(ev, asked, sender=bot.account.user_id)))
    finally:
        await proxy.aclose()
    assert [r["content"]["body"] for r in replies_to(events, asked, sender=bot.account.user_id)] == ["HELLO"]
    assert proxy.limit_sends == 0
    assert "rate-limited by the homeserver (429) on reply" in caplog.text
    assert f"/_synapse/admin/v1/users/{bot.account.user_id}/override_ratelimit" in caplog.text


async def test_a_busy_mark_left_by_a_replica_that_died_is_taken_down_by_the_one_that_answers(
    bot: BotRunner, users
) -> None:
    """A replica put ⏳ on a command and died; the one that answers it finds its own account's ⏳ there (Synapse
    refuses a second one: M_DUPLICATE_ANNOTATION) and takes that one down once it has answered."""
    alice = await users("alice")
    me = bot.account.user_id
    room = await alice.create_room(invite=[me])
    async with bot.running(rooms=[room]):
        pass  # joined
    release = asyncio.Event()

    async def handler(message: Incoming) -> Reply | None:
        await release.wait()
        return Reply("done slowly")

    slow = await alice.send_text(room, "!slow")
    dead = await MatrixUser.login(base_url=bot.server.url, user_id=me, password=bot.account.password)
    left = await dead.send(
        room, {"m.relates_to": {"rel_type": "m.annotation", "event_id": slow, "key": "⏳"}}, event_type="m.reaction"
    )
    async with bot.running(handler, rooms=[room], slow_after=0.0):
        for _ in range(600):  # the typing notice goes up right after the ⏳ was tried (a poll: nothing else shows it)
            if me in await typing_in(alice, room):
                break
            await asyncio.sleep(0.1)
        release.set()
        events = await alice.wait_for(room, lambda ev: redacted(ev, left))
    assert [r["content"]["body"] for r in replies_to(events, slow, sender=me)] == ["done slowly"]
    await dead.http.aclose()

"""A terminal's request for approval posted in the approvals room, once however many bots run, through the views
every face uses (the Slack face adds its Approve and Deny buttons).

Slack cannot be reached from here: ``chat.postMessage`` goes to tests/bot/slack_api_server.py, written to Slack's
published Web API; the Block Kit body is parsed back with slack_sdk's models. The Matrix side runs against a real
Synapse in tests/matrix/test_terminal_approval.py.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from slack_sdk.models.blocks import Block

from petstore_bot.approvals_room import ApprovalPoster, request_reply
from petstore_bot.chat import Reply
from petstore_bot.seal import Seal
from petstore_bot.slack import SlackFace
from petstore_bot.slack_render import APPROVE_ACTION, DENY_ACTION
from petstore_bot.slack_web import SlackWeb
from petstore_state import open_database
from petstore_state.pending import PendingStore, PendingWrite

from .slack_api_server import BOT_TOKEN, slack_server

HOSTILE = "<!channel> *Rex* <http://x|y>"


async def _request(store: PendingStore, *, where: str = "terminal", room: str = "") -> PendingWrite:
    return await store.create(
        kind="approve",
        asker="local:ann",
        role="operator",
        where=where,
        line=f"/add '{HOSTILE}' --category 3",
        what=f"add pet '{HOSTILE}' (category 3)",
        fields=(("name", HOSTILE), ("categoryId", "3")),
        env="production",
        ttl=3600,
        room=room,
    )


async def test_two_bots_post_a_terminal_request_once_with_approve_and_deny(tmp_path: Path) -> None:
    database = open_database(f"sqlite:///{tmp_path / 'state.db'}", state_dir=tmp_path)
    store = PendingStore(database)
    try:
        async with slack_server() as slack:
            face = _face(SlackWeb(bot_token=BOT_TOKEN, api_url=slack.api_url))
            posters = [
                ApprovalPoster(
                    store,
                    room="C0APPROVE",
                    announce=face.announce,
                    seal=Seal(b"k" * 32),
                    platform="slack",
                    prefix="/pets ",
                )
                for _ in range(2)
            ]
            asked = await _request(store)
            chat = await _request(store, where="slack:T1/C0OTHER")  # answered in its own channel: never posted
            counts = await asyncio.gather(*(poster.post_waiting() for poster in posters))
            assert sorted(counts) == [0, 1]
            assert await posters[0].post_waiting() == 0
            [message] = slack.messages
            bound = await store.get(asked.code)
            assert bound is not None and bound.room == "slack:C0APPROVE" and posters[0].seal.holds(bound)
            unbound = await store.get(chat.code)  # asked in a chat room: never bound to the approvals room
            assert unbound is not None and (unbound.room, unbound.seal) == ("", "")
    finally:
        database.close()
    assert message["channel"] == "C0APPROVE"
    blocks: list[dict[str, Any]] = message["blocks"]
    assert all(Block.parse(block) is not None for block in blocks)
    text = " ".join(str(b.get("text", {}).get("text", "")) for b in blocks)
    assert "local:ann asks to add pet" in text and "from a terminal on production" in text
    assert "&lt;!channel&gt;" in text and "<!channel>" not in text  # pings nobody
    assert f"/pets approve {asked.code}" in text
    [actions] = [b for b in blocks if b["type"] == "actions"]
    assert [(e["action_id"], e["value"]) for e in actions["elements"]] == [
        (APPROVE_ACTION, asked.code),
        (DENY_ACTION, asked.code),
    ]
    assert chat.code not in str(message)


def test_the_matrix_request_names_every_field_and_the_codes() -> None:
    write = PendingWrite(
        code="K7M3QX",
        kind="approve",
        asker="local:ann",
        role="operator",
        where="terminal",
        line="/add Rex --category 3",
        what="add pet 'Rex' (category 3)",
        fields=(("name", "<b>Rex</b>\u202e"), ("categoryId", "3")),
        env="production",
        created=0.0,
        expires=1800.0,
        state="waiting",
    )
    reply = request_reply(write)
    assert reply.text.splitlines()[0] == (
        "local:ann asks to add pet 'Rex' (category 3) from a terminal on production: it needs a second person. "
        "Someone else answers !approve K7M3QX or !deny K7M3QX [reason] within 30 minutes. It sends:"
    )
    assert "\u202e" not in reply.text  # a bidi override shows as a stand-in, never acts
    assert reply.html is not None and "&lt;b&gt;Rex&lt;/b&gt;" in reply.html and "<b>Rex" not in reply.html
    assert reply.outcome is not None and reply.outcome.result is not None  # the view's result, for Slack's buttons


async def test_a_request_a_room_did_not_take_is_not_counted_as_posted(tmp_path: Path) -> None:
    database = open_database(f"sqlite:///{tmp_path / 'state.db'}", state_dir=tmp_path)
    store = PendingStore(database)
    tried: list[str | None] = []

    async def refused(room: str, reply: Reply, /, *, key: str | None = None) -> bool:
        tried.append(key)
        return False

    try:
        asked = await _request(store)
        poster = ApprovalPoster(store, room="!ops:x", announce=refused, seal=Seal(b"k" * 32), platform="matrix")
        assert await poster.post_waiting() == 0 and tried == [f"approval {asked.code}"]
    finally:
        database.close()


def _face(web: SlackWeb) -> SlackFace:
    """A Slack face that only posts unasked (no core: announce needs none)."""
    return SlackFace(core=None, flavour="slack", post=_never, web=web)  # type: ignore[arg-type]


async def _never(url: str, payload: dict[str, object]) -> None:
    raise AssertionError("nothing is posted to a response_url here")


async def test_a_request_bound_to_the_doubled_irc_room_of_earlier_versions_is_still_posted_there(
    tmp_path: Path,
) -> None:
    """Earlier versions wrote an IRC room's ``where`` as ``irc:irc:#ops``; a request stored bound to it is this
    room's, posted in the room IRC owns (``irc:#ops``), and a new one is bound to ``irc:#ops``, written once."""
    database = open_database(f"sqlite:///{tmp_path / 'state.db'}", state_dir=tmp_path)
    store = PendingStore(database)
    posted: list[str] = []

    async def announce(room: str, reply: Reply, /, *, key: str | None = None) -> bool:
        posted.append(room)
        return True

    try:
        await _request(store, where="irc:irc:#ops", room="irc:irc:#ops")
        poster = ApprovalPoster(store, room="irc:#ops", announce=announce, seal=Seal(b"k" * 32), platform="irc")
        assert await poster.post_waiting() == 1 and posted == ["irc:#ops"]
        terminal = await _request(store)
        assert await poster.post_waiting() == 1 and posted == ["irc:#ops", "irc:#ops"]
        bound = await store.get(terminal.code)
        assert bound is not None and bound.room == "irc:#ops"
    finally:
        database.close()

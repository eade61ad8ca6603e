"""Per-room grants and !audit through the bot core, the in-memory chat backend and the real sandbox service."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

from bot_commands.policy import Role, local_actor
from petstore_bot.rules import accept_invite
from petstore_bot.testing import ChatRoom

from .conftest import ALICE, BOB, CAROL, OSCAR, Bot

A, B, LEVELS = "!a:test", "!b:test", "!levels:test"
GRANTS = (
    f'[bot.rooms."{A}"]\noperators = ["{BOB}"]\nadmins = ["{CAROL}"]\n'
    f'[bot.rooms."{B}"]\nviewers = ["{BOB}"]\nadmins = ["{CAROL}"]\ndefault_role = "none"\n'
    f'[bot.rooms."{LEVELS}"]\npower_levels = true\n'
)
HOSTILE = "<b>x</b> @room *y* [l](http://x) <!channel>"


def rooms(bot: Bot, *ids: str) -> list[ChatRoom]:
    return [ChatRoom(bot.core.handle, room=room, platform="matrix") for room in ids]


async def test_one_person_is_operator_in_one_room_and_viewer_in_another(make_bot: Callable[..., Bot]) -> None:
    bot = make_bot(GRANTS)
    a, b, elsewhere = rooms(bot, A, B, "!c:test")
    assert (await a.text(BOB, "!add Rex --category 3")).startswith("To add a pet, reply !confirm ")
    refused = await b.text(BOB, "!add Rex --category 3")
    assert refused == "Not allowed: !add needs the operator role in this room; you have viewer (ask an operator)"
    assert (await elsewhere.text(BOB, "!add Rex --category 3")).startswith("Not allowed: !add needs the operator")
    assert "role     viewer" in await b.text(BOB, "!whoami")  # the global [bot.roles] say viewer too
    assert "role     operator" in await a.text(BOB, "!whoami")
    assert (await b.text(ALICE, "!list")).startswith(
        "Not allowed: !list needs the viewer role in this room; you have none"
    )
    assert "!add" in await a.text(BOB, "!help") and "!add" not in await b.text(BOB, "!help")


async def test_a_change_of_power_levels_counts_from_the_next_command(make_bot: Callable[..., Bot]) -> None:
    bot = make_bot(GRANTS)
    (room,) = rooms(bot, LEVELS)
    assert (await room.text(OSCAR, "!add Rex --category 3")).startswith("Not allowed")  # levels unknown: default
    bot.core.roles.levels.update(LEVELS, {"users": {OSCAR: 50}, "users_default": 0})
    assert (await room.text(OSCAR, "!add Rex --category 3")).startswith("To add a pet, reply !confirm ")
    bot.core.roles.levels.update(LEVELS, {"users": {OSCAR: 100}})
    assert "role     admin" in await room.text(OSCAR, "!whoami")
    assert "!audit" in await room.text(OSCAR, "!help")
    bot.core.roles.levels.update(LEVELS, {"users": {}})
    assert "role     viewer" in await room.text(OSCAR, "!whoami")


async def test_audit_shows_the_last_lines_of_this_room_only_as_data(
    make_bot: Callable[..., Bot], tmp_path: Path
) -> None:
    bot = make_bot(GRANTS)
    a, b = rooms(bot, A, B)
    asked = await a.text(BOB, f"!add {HOSTILE} --category 3")
    code = re.search(r"confirm ([A-Z0-9]{4})", asked)
    assert code is not None
    await a.text(BOB, f"!confirm {code[1]}")
    await b.text(CAROL, "!add Elsewhere --category 1")
    reply = await a.say(CAROL, "!audit")
    assert reply is not None and reply.html is not None
    assert "Elsewhere" not in reply.text and reply.text.count(BOB) == 2  # room A's two lines, not room B's
    assert "the last 2 audit lines of this room, oldest first" in reply.text
    assert "<b>x</b>" not in reply.html and "&lt;b&gt;x&lt;/b&gt; @room" in reply.html
    assert "<a " not in reply.html and "&lt;!channel&gt;" in reply.html
    assert bot.composition.env.masked_key not in reply.text
    key = (tmp_path / "sandbox" / "api-key").read_text(encoding="ascii").strip()
    assert key and key not in reply.text and key not in reply.html
    one = await a.text(CAROL, "!audit 1")
    assert "the last 1 audit line of this room" in one and "pending" not in one and re.search(r"  ok  +pet \d+", one)
    assert json.loads(bot.audit_lines()[-1])["where"] == f"matrix:{B}"  # !audit itself is a read: not audited


async def test_audit_is_refused_to_all_but_the_rooms_admins(make_bot: Callable[..., Bot]) -> None:
    bot = make_bot(GRANTS)
    a, b = rooms(bot, A, B)
    refused = await a.text(BOB, "!audit")
    assert refused == "Not allowed: !audit needs the admin role in this room; you have operator (ask an admin)"
    assert "!audit" not in await a.text(BOB, "!help")
    assert (await b.text(CAROL, "!audit 51")).startswith("Usage: '51' is not a number of lines: give 1 to 50")
    assert (await b.text(CAROL, "!audit")).endswith("no audit lines for this room yet")
    assert "role     admin" in await b.text(CAROL, "!whoami") and "!audit" in await b.text(CAROL, "!help")


async def test_audit_at_a_terminal_points_at_the_file(make_bot: Callable[..., Bot]) -> None:
    bot = make_bot()
    session = bot.composition.session(actor=local_actor())
    outcome = await session.run("/audit")
    assert outcome.failure is not None
    assert outcome.failure.message == "/audit is for chat rooms (their admins); here, read the audit log file itself"
    assert all(c.name != "audit" for c in session.allowed_commands())
    assert local_actor().role is Role.OPERATOR


def test_invites_follow_the_rooms_grants_where_known(make_bot: Callable[..., Bot]) -> None:
    bot = make_bot(GRANTS)
    joins = {
        (who, room): accept_invite(bot.core.roles, who, False, room)
        for who in (ALICE, BOB, CAROL)
        for room in (A, B, LEVELS, "!other:test")
    }
    assert joins == {
        (ALICE, A): False,  # an operator everywhere, nobody in room A: its lists replace the global ones there
        (ALICE, B): False,
        (ALICE, LEVELS): True,  # levels not readable before joining: the global lists
        (ALICE, "!other:test"): True,
        (BOB, A): True,  # room A's operator
        (BOB, B): False,  # room B's viewer
        (BOB, LEVELS): False,
        (BOB, "!other:test"): False,
        (CAROL, A): True,  # room A's admin
        (CAROL, B): True,
        (CAROL, LEVELS): False,
        (CAROL, "!other:test"): False,
    }
    assert accept_invite(bot.core.roles, BOB, True, B)  # a direct chat: any role
    assert not accept_invite(bot.core.roles, ALICE, True, B)  # none in room B

"""Rooms with their own grants, against a real Synapse and the real ``petstore bot matrix`` process.

One bot serves the module. Its config names three rooms made before it starts (by olga, an operator everywhere,
who invites the bot): in room A dave is an operator and olga an admin; in room B dave is a viewer; room L follows
its Matrix power levels (olga made it: level 100, admin). Nobody else has a role (``default_role = "none"``).
Power levels are changed the way a client changes them (a new ``m.room.power_levels`` state event), and the next
command counts them, with no restart.
"""

from __future__ import annotations

import html
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from matrix.bot_process import READY, BotConfig, BotProcess, logins, running_bot
from matrix.conftest import Account, register
from matrix.cs_client import MatrixUser, replies_to
from matrix.synapse_server import SynapseServer

pytestmark = pytest.mark.slow

HOSTILE = "<b>x</b> @room [link](http://x)"
CODE = re.compile(r"confirm ([A-Z0-9]{4}) within")


@dataclass
class Shared:
    bot: BotProcess
    accounts: dict[str, Account]
    rooms: dict[str, str]

    @property
    def bot_id(self) -> str:
        return self.bot.config.user_id


def _room(server: SynapseServer, owner: Account, *invite: str) -> str:
    """A private room of ``owner`` with ``invite`` invited, made before the bot starts (its id goes in the config)."""
    api = f"{server.url}/_matrix/client/v3"
    login = {
        "type": "m.login.password",
        "identifier": {"type": "m.id.user", "user": owner.user_id},
        "password": owner.password,
    }
    token = httpx.post(f"{api}/login", json=login, timeout=30).json()["access_token"]
    made = httpx.post(
        f"{api}/createRoom",
        json={"preset": "private_chat", "invite": list(invite)},
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
    )
    made.raise_for_status()
    return str(made.json()["room_id"])


@pytest.fixture(scope="module")
def shared(synapse: SynapseServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Shared]:
    if synapse.process is None:
        synapse.start()
    accounts = {name: register(synapse, name) for name in ("petbot", "olga", "dave", "vic")}
    bot_id, olga, dave, vic = (accounts[n].user_id for n in ("petbot", "olga", "dave", "vic"))
    rooms = {name: _room(synapse, accounts["olga"], bot_id, dave, vic) for name in ("A", "B", "L")}
    config = BotConfig(
        homeserver=synapse.url,
        user_id=bot_id,
        root=tmp_path_factory.mktemp("bot-grants"),
        operators=[olga],
        default_role="none",
        extra={
            f'bot.rooms."{rooms["A"]}"': {"operators": [dave], "admins": [olga]},
            f'bot.rooms."{rooms["B"]}"': {"viewers": [dave], "operators": [olga]},
            f'bot.rooms."{rooms["L"]}"': {"power_levels": True},
        },
    )
    with running_bot(config, password=accounts["petbot"].password) as bot:
        yield Shared(bot=bot, accounts=accounts, rooms=rooms)


People = Callable[[str], Awaitable[MatrixUser]]


@pytest.fixture
async def people(shared: Shared) -> AsyncIterator[People]:
    """``await people("dave")``: a fresh login of that account, joined to the three rooms (closed at teardown)."""
    async with logins(shared.bot.config.homeserver, shared.accounts) as login:

        async def joined(name: str) -> MatrixUser:
            user = await login(name)
            for room in shared.rooms.values():
                if await user.membership(room, user.user_id) != "join":
                    await user.join(room)
                await user.wait_membership(room, shared.bot_id, "join")
            return user

        yield joined


async def say(shared: Shared, user: MatrixUser, room: str, text: str) -> dict[str, Any]:
    """Send ``text`` in ``room`` (A, B or L), return the bot's reply; it never pings and never carries a secret."""
    asked = await user.send_text(shared.rooms[room], text)
    events = await user.wait_for(shared.rooms[room], lambda ev: replies_to(ev, asked, sender=shared.bot_id))
    [reply] = replies_to(events, asked, sender=shared.bot_id)
    content = dict(reply["content"])
    assert content["m.mentions"] == {}
    for secret in (shared.bot.sandbox_key(), shared.bot.password):
        assert secret not in content["body"] and secret not in content.get("formatted_body", "")
    return content


async def test_one_person_is_operator_in_room_a_and_viewer_in_room_b(shared: Shared, people: People) -> None:
    dave = await people("dave")
    before = shared.bot.pet_count()
    asked = (await say(shared, dave, "A", "!add Grant --category 2"))["body"]
    code = CODE.search(asked)
    assert code is not None, asked
    assert "Added pet" in (await say(shared, dave, "A", f"!confirm {code[1]}"))["body"]
    assert shared.bot.pet_count() == before + 1
    refused = await say(shared, dave, "B", "!add Grant --category 2")
    assert (
        refused["body"] == "Not allowed: !add needs the operator role in this room; you have viewer (ask an operator)"
    )
    assert "role     viewer" in (await say(shared, dave, "B", "!whoami"))["body"]
    assert "role     operator" in (await say(shared, dave, "A", "!whoami"))["body"]
    assert shared.bot.pet_count() == before + 1


async def test_power_levels_changed_in_a_room_take_effect_at_the_next_command(shared: Shared, people: People) -> None:
    olga, vic = await people("olga"), await people("vic")
    room = shared.rooms["L"]
    assert (await say(shared, vic, "L", "!list"))["body"].startswith(
        "Not allowed: !list needs the viewer role in this room; you have none"
    )
    await olga.set_power_level(room, vic.user_id, 50)
    assert "To add a pet, reply !confirm" in (await say(shared, vic, "L", "!add Levels --category 2"))["body"]
    assert "!audit" not in (await say(shared, vic, "L", "!help"))["body"]
    await olga.set_power_level(room, vic.user_id, 100)
    whoami = (await say(shared, vic, "L", "!whoami"))["body"]
    assert "role     admin" in whoami and "!audit" in whoami
    assert "role     admin" in (await say(shared, olga, "L", "!whoami"))["body"]  # the room's creator: 100
    assert "Levels" in (await say(shared, vic, "L", "!audit 5"))["body"]
    await olga.set_power_level(room, vic.user_id, 0)
    assert "role     none" in (await say(shared, vic, "L", "!whoami"))["body"]
    assert "role     none" in (await say(shared, vic, "A", "!whoami"))["body"]  # another room's levels count there


async def test_audit_shows_this_rooms_lines_only_as_data_and_only_to_its_admins(shared: Shared, people: People) -> None:
    olga, dave = await people("olga"), await people("dave")
    asked = (await say(shared, dave, "A", f"!add {HOSTILE} --category 3"))["body"]
    code = CODE.search(asked)
    assert code is not None, asked
    await say(shared, dave, "A", f"!confirm {code[1]}")
    assert "To add a pet" in (await say(shared, olga, "B", "!add OnlyInRoomB --category 1"))["body"]
    refused = await say(shared, dave, "A", "!audit")
    assert refused["body"] == "Not allowed: !audit needs the admin role in this room; you have operator (ask an admin)"
    assert (await say(shared, olga, "B", "!audit"))["body"].startswith("Not allowed: !audit needs the admin role")
    shown = await say(shared, olga, "A", "!audit 2")  # this test's two lines: it may run first, or alone
    body, markup = shown["body"], shown["formatted_body"]
    assert "OnlyInRoomB" not in body and "the last 2 audit lines of this room" in body
    assert HOSTILE in body and "pending" in body and re.search(r"  ok  +pet \d+", body)
    assert "<b>x</b>" not in markup and html.escape("<b>x</b>") in markup and "<a href" not in markup
    audited = [line for line in shared.bot.audit() if line["where"] == f"matrix:{shared.rooms['A']}"]
    assert all(line["line"] in body or line["line"][:50] in body for line in audited[-2:])


async def test_after_a_restart_the_levels_are_read_from_the_room_state(shared: Shared, people: People) -> None:
    olga, vic = await people("olga"), await people("vic")
    await olga.set_power_level(shared.rooms["L"], vic.user_id, 50)
    assert "role     operator" in (await say(shared, vic, "L", "!whoami"))["body"]
    assert shared.bot.stop() == 0
    offset = len(shared.bot.log())
    shared.bot.start()
    await shared.bot.logged(READY, after=offset)
    assert "role     operator" in (await say(shared, vic, "L", "!whoami"))["body"]  # no sync brought them this time
    assert f"power levels of {shared.rooms['L']} updated" in shared.bot.log()[offset:]  # read from the room state
    assert "role     admin" in (await say(shared, olga, "L", "!whoami"))["body"]

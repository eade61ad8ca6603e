"""The real ``petstore bot matrix`` against a real Synapse: roles, confirmation, audit, hostile names, invites, secrets.

One bot process serves the whole module (starting one costs seconds); each test makes its own rooms, and state is
per (room, user), so tests do not see each other's ``$last``, codes or history. The people are fixed accounts
(the config names their roles before the bot starts): alice and olivia are operators, bob a viewer, carol is in no
list (``default_role = "none"``). Their messages are real messages, the bot's replies are read back through the
client-server API, and the pet count is read from the bot's sandbox file, so "nothing was sent" is checked at the
service, not in the reply.
"""

from __future__ import annotations

import html
import re
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from matrix.bot_process import BotConfig, BotProcess, answered_once, logins, room_with, running_bot
from matrix.conftest import Account, register
from matrix.cs_client import MatrixUser, replies_to
from matrix.synapse_server import SynapseServer
from petstore_bot.matrix import NOT_TEXT, TOO_LONG
from petstore_server.sandbox import Sandbox

pytestmark = pytest.mark.slow

HOSTILE = ("<b>x</b>", "@room", "[link](http://x)", "esc \x1b[31mred\x1b[0m", "<a href='http://x'>click</a>")


@dataclass
class Shared:
    """The module's running bot, who is who, and the pets seeded with hostile names (name -> id)."""

    bot: BotProcess
    accounts: dict[str, Account]
    hostile: dict[str, int]
    ops_room: str

    @property
    def bot_id(self) -> str:
        return self.bot.config.user_id

    def secrets(self) -> tuple[str, str]:
        return self.bot.sandbox_key(), self.bot.password


def _seed(data_dir: Path) -> dict[str, int]:
    """A fresh sandbox with a pet for every hostile name (written before the bot opens it)."""
    with Sandbox.open(data_dir, reset=True) as sandbox:
        return {
            name: int(sandbox.store.create_pet(name=name, category_id=1, status="available")["id"]) for name in HOSTILE
        }


def _ops_room(server: SynapseServer, owner: Account, bot_id: str) -> str:
    """A room with an alias, made by an operator before the bot starts: the bot joins it from its config."""
    body = {
        "type": "m.login.password",
        "identifier": {"type": "m.id.user", "user": owner.user_id},
        "password": owner.password,
    }
    api = f"{server.url}/_matrix/client/v3"
    token = httpx.post(f"{api}/login", json=body, timeout=30).json()["access_token"]
    alias = f"ops-{secrets.token_hex(4)}"
    room = {"preset": "private_chat", "room_alias_name": alias, "invite": [bot_id]}
    httpx.post(
        f"{api}/createRoom", json=room, headers={"Authorization": f"Bearer {token}"}, timeout=30
    ).raise_for_status()
    return f"#{alias}:localhost"


@pytest.fixture(scope="module")
def shared(synapse: SynapseServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Shared]:
    if synapse.process is None:
        synapse.start()
    accounts = {name: register(synapse, name) for name in ("petbot", "alice", "olivia", "bob", "carol")}
    root = tmp_path_factory.mktemp("bot-e2e")
    bot_id = accounts["petbot"].user_id
    ops_room = _ops_room(synapse, accounts["alice"], bot_id)
    config = BotConfig(
        homeserver=synapse.url,
        user_id=bot_id,
        root=root,
        rooms=[ops_room],
        operators=[accounts["alice"].user_id, accounts["olivia"].user_id],
        viewers=[accounts["bob"].user_id],
        default_role="none",
        confirm_writes=True,
    )
    hostile = _seed(config.data_dir)
    with running_bot(config, password=accounts["petbot"].password) as bot:
        yield Shared(bot=bot, accounts=accounts, hostile=hostile, ops_room=ops_room)


People = Callable[[str], Awaitable[MatrixUser]]


@pytest.fixture
async def people(shared: Shared) -> AsyncIterator[People]:
    """``await people("alice")``: a fresh login of that account (closed at teardown)."""
    async with logins(shared.bot.config.homeserver, shared.accounts) as login:
        yield login


async def say(shared: Shared, user: MatrixUser, room: str, text: str) -> dict[str, Any]:
    """Send ``text``, return the bot's one reply; every reply is checked: a threaded notice, no ping, no secret."""
    asked = await user.send_text(room, text)
    events = await user.wait_for(room, lambda ev: replies_to(ev, asked, sender=shared.bot_id))
    [reply] = replies_to(events, asked, sender=shared.bot_id)
    content = dict(reply["content"])
    assert content["msgtype"] == "m.notice"
    assert content["m.mentions"] == {}
    assert content["m.relates_to"]["m.in_reply_to"] == {"event_id": asked}
    for secret in shared.secrets():
        assert secret not in content["body"] and secret not in content.get("formatted_body", "")
    return content


def first_line(content: dict[str, Any]) -> str:
    return str(content["body"]).splitlines()[0]


async def test_a_viewer_is_refused_a_write_in_one_reply_and_nothing_is_sent(shared: Shared, people: People) -> None:
    alice, bob = await people("alice"), await people("bob")
    room = await room_with(alice, shared.bot_id, bob)
    before = shared.bot.pet_count()
    reply = await say(shared, bob, room, '!add "Rex the Dog" --category 3')
    assert reply["body"] == "Not allowed: !add needs the operator role in this room; you have viewer (ask an operator)"
    assert shared.bot.pet_count() == before
    [line] = [e for e in shared.bot.audit() if e["actor"] == bob.user_id and e["where"] == f"matrix:{room}"]
    assert (line["outcome"], line["applied"], line["line"]) == ("refused", "no", '/add "Rex the Dog" --category 3')
    answered_once(await bob.messages(room), shared.bot_id)


async def test_help_and_whoami_show_only_what_the_asker_may_run(shared: Shared, people: People) -> None:
    alice, bob, carol = await people("alice"), await people("bob"), await people("carol")
    room = await room_with(alice, shared.bot_id, bob, carol)
    listed = {}
    for who in (alice, bob, carol):
        body = (await say(shared, who, room, "!help"))["body"]
        listed[who.user_id] = set(re.findall(r"^!(\w+)", body, re.M))
    assert {"add", "confirm", "list", "whoami"} <= listed[alice.user_id]
    assert "list" in listed[bob.user_id] and not {"add", "confirm"} & listed[bob.user_id]
    assert {"help", "whoami"} <= listed[carol.user_id] and not {"list", "get", "add", "env"} & listed[carol.user_id]
    assert not {"history", "quit"} & listed[alice.user_id], "terminal-only commands are not offered in chat"

    whoami = await say(shared, carol, room, "!whoami")
    assert re.search(r"^role\s+none$", whoami["body"], re.M)
    assert re.search(rf"^where\s+matrix:{re.escape(room)}$", whoami["body"], re.M)
    refused = await say(shared, carol, room, "!list")
    assert refused["body"] == "Not allowed: !list needs the viewer role in this room; you have none (ask an operator)"
    assert re.search(r"^role\s+viewer$", (await say(shared, bob, room, "!whoami"))["body"], re.M)


async def test_the_configured_room_is_joined_by_its_alias(shared: Shared, people: People) -> None:
    alice = await people("alice")
    room = str((await alice.http.get(f"/directory/room/{shared.ops_room.replace('#', '%23')}")).json()["room_id"])
    await alice.join(room)
    body = (await say(shared, alice, room, "!whoami"))["body"]
    assert re.search(r"^role\s+operator$", body, re.M)


async def test_a_write_runs_once_on_the_askers_confirm_and_is_audited(shared: Shared, people: People) -> None:
    alice, olivia = await people("alice"), await people("olivia")
    room = await room_with(alice, shared.bot_id, olivia)
    before = shared.bot.pet_count()
    asked = await say(shared, alice, room, '!add "Rex the Dog" --category 3')
    code = re.fullmatch(
        r"To add a pet, reply !confirm (\w{4}) within 60 seconds\. It sends:\nname        Rex the Dog\ncategoryId  3",
        asked["body"],
    )
    assert code, asked["body"]
    assert shared.bot.pet_count() == before, "nothing is sent before the confirmation"

    other = await say(shared, olivia, room, f"!confirm {code[1]}")
    assert first_line(other).startswith(f"Nothing to confirm: nothing waits for code {code[1]}")
    assert shared.bot.pet_count() == before

    done = await say(shared, alice, room, f"!confirm {code[1]}")
    created = re.match(r"Added pet (\d+)\n", done["body"])
    assert created, done["body"]
    pet_id = int(created[1])
    audit = [e for e in shared.bot.audit() if e["where"] == f"matrix:{room}"]  # on disk when the reply is seen
    mine = [e for e in audit if e["actor"] == alice.user_id]
    assert [(e["outcome"], e["line"]) for e in mine] == [
        ("pending", '/add "Rex the Dog" --category 3'),
        ("ok", f'/confirm {code[1]}: /add "Rex the Dog" --category 3'),
    ]
    assert mine[-1]["pet_id"] == pet_id and mine[-1]["role"] == "operator" and mine[-1]["applied"] == "yes"
    assert [(e["actor"], e["outcome"]) for e in audit if e["actor"] == olivia.user_id] == [(olivia.user_id, "refused")]

    again = await say(shared, alice, room, f"!confirm {code[1]}")
    assert first_line(again).startswith("Nothing to confirm")
    assert shared.bot.pet_count() == before + 1
    answered_once(await alice.messages(room), shared.bot_id)


async def test_hostile_names_show_literally_and_ping_or_link_nothing(shared: Shared, people: People) -> None:
    alice = await people("alice")
    room = await room_with(alice, shared.bot_id)
    listing = await say(shared, alice, room, "!list available --limit 100")
    for name, pet_id in shared.hostile.items():
        shown = name.replace("\x1b", "\u241b")  # ESC is shown as ␛: no raw escape byte reaches a client
        assert re.search(rf"^\s*{pet_id}\s+{re.escape(shown)}\s", listing["body"], re.M), (name, listing["body"])
        assert shown in _cells(listing["formatted_body"])
        card = await say(shared, alice, room, f"!get {pet_id}")
        assert re.search(rf"^name\s+{re.escape(shown)}$", card["body"], re.M)
        assert shown in _cells(card["formatted_body"])
        for content in (listing, card):
            markup = content["formatted_body"]
            assert "\x1b" not in content["body"] + markup
            assert "<a" not in markup and "<b>" not in markup, "no tag comes from data"


def _cells(markup: str) -> list[str]:
    """The text of every table cell of an HTML reply (tags inside a cell, like <code>, removed)."""
    return [html.unescape(re.sub(r"<[^>]*>", "", cell)) for cell in re.findall(r"<td>(.*?)</td>", markup)]


async def test_invites_are_accepted_from_operators_only(shared: Shared, people: People) -> None:
    olivia, bob, carol = await people("olivia"), await people("bob"), await people("carol")
    good = await olivia.create_room(invite=[shared.bot_id])
    from_viewer = await bob.create_room(invite=[shared.bot_id])
    from_stranger = await carol.create_room(invite=[shared.bot_id])
    await olivia.wait_membership(good, shared.bot_id, "join")
    await bob.wait_membership(from_viewer, shared.bot_id, "leave")
    await carol.wait_membership(from_stranger, shared.bot_id, "leave")
    assert (await say(shared, olivia, good, "!whoami"))["body"].startswith(f"you      {olivia.user_id}")


async def test_env_shows_the_key_masked_and_no_reply_holds_a_secret(shared: Shared, people: People) -> None:
    alice, bob = await people("alice"), await people("bob")
    room = await room_with(alice, shared.bot_id, bob)
    key = shared.bot.sandbox_key()
    env = await say(shared, bob, room, "!env")
    assert re.search(rf"^API key\s+sk-\.\.\.{re.escape(key[-4:])}$", env["body"], re.M), env["body"]
    for line in ("!env", "!whoami", "!help", "!get 1", "!list --limit 3", "!orders", "!get 999999"):
        await say(shared, alice, room, line)  # say() checks every reply for the key and the bot's password
    everything = str(await alice.messages(room))
    assert key not in everything and shared.bot.password not in everything
    assert shared.bot.password not in shared.bot.log() and key not in shared.bot.log()


async def test_huge_binary_and_unknown_messages_get_one_line_and_the_bot_goes_on(
    shared: Shared, people: People
) -> None:
    alice = await people("alice")
    room = await room_with(alice, shared.bot_id)
    huge = await say(shared, alice, room, "!add " + "x" * 5000 + " --category 1")
    assert huge["body"] == TOO_LONG.format(limit=4096)
    binary = await say(shared, alice, room, "!get \x00\x1b[31m1")
    assert binary["body"] == NOT_TEXT
    unknown = await say(shared, alice, room, "!lsit sold")
    assert "\n" not in first_line(unknown) and "did you mean" in unknown["body"], unknown["body"]
    after = await say(shared, alice, room, "!get 1")
    assert re.search(r"^name\s+Rex$", after["body"], re.M)
    answered_once(await alice.messages(room), shared.bot_id)

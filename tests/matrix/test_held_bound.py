"""Held writes bound to their room, with the real ``petstore bot matrix`` on a real Synapse and its state in a
PostgreSQL database of the test's own (issue 39's findings, as a reviewer with a grudge tried them).

Rooms made before the bot starts (their ids go in its config): in A, dave and olga are operators and vic a viewer;
in B, vic is an operator; OPS is ``[bot] approvals_room``, where carol alone approves (vic is an operator there).
A request (asked in a room or at a terminal) is bound to the approvals room and decided there only, by someone
allowed there; one changed in the store after it was shown never runs."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest
from pg_support import database_url, start_pg_server

from matrix.bot_process import BotConfig, running_bot
from matrix.conftest import register
from matrix.cs_client import MatrixUser, from_sender, replies_to
from matrix.synapse_server import SynapseServer
from matrix.test_grants import _room
from petstore_state import open_database
from petstore_state.pending import PendingStore

pytestmark = pytest.mark.slow

APPROVE = re.compile(r"approve ([A-Z0-9]{6})\b")


@dataclass
class World:
    bot_id: str
    rooms: dict[str, str]
    people: dict[str, MatrixUser]
    state: str
    pets: Callable[[], int]

    async def say(self, who: str, room: str, text: str) -> str:
        user = self.people[who]
        asked = await user.send_text(self.rooms[room], text)
        events = await user.wait_for(self.rooms[room], lambda ev: replies_to(ev, asked, sender=self.bot_id))
        [reply] = replies_to(events, asked, sender=self.bot_id)
        return str(reply["content"]["body"])


@pytest.fixture
async def world(homeserver: SynapseServer, tmp_path: Path) -> AsyncIterator[World]:
    accounts = {name: register(homeserver, name) for name in ("petbot", "olga", "dave", "vic", "carol")}
    bot_id = accounts["petbot"].user_id
    ids = {name: accounts[name].user_id for name in ("olga", "dave", "vic", "carol")}
    invited = (bot_id, ids["dave"], ids["vic"], ids["carol"])
    rooms = {name: _room(homeserver, accounts["olga"], *invited) for name in ("A", "B", "OPS")}
    with start_pg_server() as server, database_url(server) as url:
        config = BotConfig(
            homeserver=homeserver.url,
            user_id=bot_id,
            root=tmp_path,
            operators=[ids["olga"]],
            default_role="none",
            extra={
                "bot": {"approvals": ["sandbox"], "approvals_room": rooms["OPS"], "state": url},
                f'bot.rooms."{rooms["A"]}"': {"operators": [ids["dave"], ids["olga"]], "viewers": [ids["vic"]]},
                f'bot.rooms."{rooms["B"]}"': {"operators": [ids["vic"], ids["olga"]]},
                f'bot.rooms."{rooms["OPS"]}"': {
                    "operators": [ids["vic"], ids["carol"], ids["olga"]],
                    "approvers": [ids["carol"]],
                },
            },
        )
        with running_bot(config, password=accounts["petbot"].password) as bot:
            people = {}
            try:
                for name, user_id in ids.items():
                    user = await MatrixUser.login(
                        base_url=homeserver.url, user_id=user_id, password=accounts[name].password
                    )
                    people[name] = user
                    for room in rooms.values():
                        if await user.membership(room, user_id) != "join":
                            await user.join(room)
                        await user.wait_membership(room, bot_id, "join")
                yield World(bot_id=bot_id, rooms=rooms, people=people, state=url, pets=bot.pet_count)
            finally:
                for user in people.values():
                    await user.aclose()


def _code(text: str) -> str:
    found = APPROVE.search(text)
    assert found, text
    return found[1]


async def test_a_request_is_decided_in_the_approvals_room_by_who_may_there_and_as_shown(world: World) -> None:
    """Asked in A, the request is posted in OPS (the asker told so) and decided there only, by its approvers."""
    before = world.pets()
    asked = await world.say("dave", "A", "!add Bound --category 1")
    ticket = _code(asked)
    assert f"It is posted in matrix:{world.rooms['OPS']}, where someone answers" in asked, asked
    carol = world.people["carol"]
    await carol.wait_for(
        world.rooms["OPS"],
        lambda evs: any(ticket in e["content"].get("body", "") for e in from_sender(evs, world.bot_id)),
    )
    from_b = await world.say("vic", "B", f"!approve {ticket}")
    assert from_b.startswith(f"Nothing to approve: code {ticket} is decided only in the room where it was asked")
    in_a = await world.say("vic", "A", f"!approve {ticket}")
    assert in_a == "Not allowed: !approve needs the operator role in this room; you have viewer (ask an operator)"
    from_a = await world.say("olga", "A", f"!approve {ticket}")
    assert from_a.startswith(f"Nothing to approve: code {ticket} is decided only in the room where it was asked")
    not_approver = await world.say("vic", "OPS", f"!approve {ticket}")
    assert not_approver == f"Nothing to approve: code {ticket} may be approved only by the approvers this room names"
    assert world.pets() == before

    with psycopg.connect(world.state, autocommit=True) as conn:  # what a holder of the state URL can do
        conn.execute(
            "UPDATE pending_writes SET fields = %s, line = %s WHERE code = %s",
            ('[["name", "Tampered"], ["categoryId", "1"]]', "/add Tampered --category 1", ticket),
        )
    changed = await world.say("carol", "OPS", f"!approve {ticket}")
    assert changed == (
        f"Nothing to approve: request {ticket} was changed after it was shown; nothing was sent (ask for it again)"
    )
    assert world.pets() == before


async def test_a_terminal_request_is_decided_in_the_approvals_room_by_its_approvers(world: World) -> None:
    database = open_database(world.state, state_dir=Path("/nonexistent"))
    try:
        asked = await PendingStore(database).create(  # as petstore add at a terminal leaves it
            kind="approve",
            asker="local:ann",
            role="operator",
            where="terminal",
            line="/add Termy --category 2",
            what="add pet 'Termy' (category 2)",
            fields=(("name", "Termy"), ("categoryId", "2")),
            env="sandbox",
            ttl=3600,
            command="add",
        )
    finally:
        database.close()
    carol = world.people["carol"]
    await carol.wait_for(
        world.rooms["OPS"],
        lambda evs: any(asked.code in e["content"].get("body", "") for e in from_sender(evs, world.bot_id)),
    )
    before = world.pets()
    elsewhere = await world.say("olga", "A", f"!approve {asked.code}")
    assert elsewhere.startswith(f"Nothing to approve: code {asked.code} is decided only in the room where it was")
    not_approver = await world.say("vic", "OPS", f"!approve {asked.code}")
    assert (
        not_approver == f"Nothing to approve: code {asked.code} may be approved only by the approvers this room names"
    )
    assert world.pets() == before
    assert (await world.say("carol", "OPS", f"!approve {asked.code}")).startswith("Added pet ")
    assert world.pets() == before + 1

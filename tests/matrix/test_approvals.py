"""Held writes with the real ``petstore bot matrix`` on a real Synapse: a production-style write approved by a second
person (the store on a real PostgreSQL database of the test's own), refused to its asker and to a viewer; a
confirmation given by one bot process and run by the next after a restart; a code that expires closed in the audit
by the running bot, with nobody trying it.
"""

from __future__ import annotations

import asyncio
import re
import time
from pathlib import Path

import pytest
from pg_support import database_url, start_pg_server

from matrix.bot_process import BotConfig, BotProcess, ask, room_with
from matrix.conftest import Account, register
from matrix.cs_client import POLL, MatrixUser
from matrix.synapse_server import SynapseServer

pytestmark = pytest.mark.slow

APPROVE = re.compile(r"approve ([A-Z0-9]{6}) or")
CONFIRM = re.compile(r"confirm ([A-Z0-9]{4}) within")


def _code(pattern: re.Pattern[str], text: str) -> str:
    found = pattern.search(text)
    assert found, text
    return found[1]


async def _login(server: SynapseServer, account: Account) -> MatrixUser:
    return await MatrixUser.login(base_url=server.url, user_id=account.user_id, password=account.password)


async def test_a_second_person_approves_and_neither_the_asker_nor_a_viewer_can(
    homeserver: SynapseServer, tmp_path: Path
) -> None:
    accounts = {name: register(homeserver, name) for name in ("alice", "olivia", "victor")}
    bot_account = register(homeserver, "petbot")
    with start_pg_server() as server, database_url(server) as url:
        config = BotConfig(
            homeserver=homeserver.url,
            user_id=bot_account.user_id,
            root=tmp_path,
            operators=[accounts["alice"].user_id, accounts["olivia"].user_id],
            viewers=[accounts["victor"].user_id],
            extra={"bot": {"approvals": ["sandbox"], "state": url}},
        )
        bot = BotProcess(config, password=bot_account.password, args=["--sandbox-reset"]).start().ready()
        alice, olivia, victor = [await _login(homeserver, accounts[n]) for n in ("alice", "olivia", "victor")]
        try:
            room = await room_with(alice, bot.config.user_id, olivia, victor)
            before = bot.pet_count()
            asked = await ask(alice, room, "!add Prodpet --category 3", bot_id=bot.config.user_id)
            assert asked["body"].startswith(f"{alice.user_id} asks to add a pet on sandbox: it needs a second person.")
            assert asked["body"].endswith("It sends:\nname        Prodpet\ncategoryId  3"), asked["body"]
            ticket = _code(APPROVE, asked["body"])
            own = await ask(alice, room, f"!approve {ticket}", bot_id=bot.config.user_id)
            assert "yourself: someone else must approve it" in own["body"]
            viewer = await ask(victor, room, f"!approve {ticket}", bot_id=bot.config.user_id)
            assert (
                viewer["body"]
                == "Not allowed: !approve needs the operator role in this room; you have viewer (ask an operator)"
            )
            assert bot.pet_count() == before
            done = await ask(olivia, room, f"!approve {ticket}", bot_id=bot.config.user_id)
            assert done["body"].startswith("Added pet ") and bot.pet_count() == before + 1
            again = await ask(olivia, room, f"!approve {ticket}", bot_id=bot.config.user_id)
            assert again["body"].endswith("was already approved by " + olivia.user_id + ": a code works once")
        finally:
            code = bot.stop()
            for user in (alice, olivia, victor):
                await user.aclose()
    assert code == 0, bot.log()[-3000:]
    lines = bot.audit()
    approved = [e for e in lines if e.get("approver")]
    assert len(approved) == 1 and approved[0]["actor"] == alice.user_id and approved[0]["approver"] == olivia.user_id
    assert approved[0]["pending_code"] == ticket and approved[0]["event_id"].startswith("$")
    assert lines[0]["outcome"] == "pending" and lines[0]["pending_code"] == ticket


async def test_a_confirmation_survives_a_restart_of_the_bot(homeserver: SynapseServer, tmp_path: Path) -> None:
    """!add Restarty, the bot process ends (SIGTERM) and a new one starts on the same state: !confirm CODE works."""
    account, bot_account = register(homeserver, "alice"), register(homeserver, "petbot")
    config = BotConfig(
        homeserver=homeserver.url, user_id=bot_account.user_id, root=tmp_path, operators=[account.user_id]
    )
    bot = BotProcess(config, password=bot_account.password, args=["--sandbox-reset"]).start().ready()
    alice = await _login(homeserver, account)
    try:
        room = await room_with(alice, bot.config.user_id)
        before = bot.pet_count()
        ticket = _code(
            CONFIRM, (await ask(alice, room, "!add Restarty --category 2", bot_id=bot.config.user_id))["body"]
        )
        assert bot.stop() == 0
        bot = BotProcess(config, password=bot_account.password).start().ready()
        done = await ask(alice, room, f"!confirm {ticket}", bot_id=bot.config.user_id)
        assert done["body"].startswith("Added pet ") and "Restarty" in done["body"]
        assert bot.pet_count() == before + 1
    finally:
        bot.stop()
        await alice.aclose()
    closing = bot.audit()[-1]
    assert (closing["outcome"], closing["pending_code"], closing["line"]) == (
        "ok",
        ticket,
        f"/confirm {ticket}: /add Restarty --category 2",
    )


async def test_an_expired_code_is_closed_in_the_audit_when_it_expires(
    homeserver: SynapseServer, tmp_path: Path
) -> None:
    account, bot_account = register(homeserver, "alice"), register(homeserver, "petbot")
    config = BotConfig(
        homeserver=homeserver.url,
        user_id=bot_account.user_id,
        root=tmp_path,
        operators=[account.user_id],
        extra={"bot": {"confirm_ttl": 5}},
    )
    bot = BotProcess(config, password=bot_account.password, args=["--sandbox-reset"]).start().ready()
    alice = await _login(homeserver, account)
    try:
        room = await room_with(alice, bot.config.user_id)
        ticket = _code(
            CONFIRM, (await ask(alice, room, "!add Forgotten --category 2", bot_id=bot.config.user_id))["body"]
        )
        deadline = time.monotonic() + 30
        while not any(e["outcome"] == "expired" for e in bot.audit()):  # nobody tries the code: the bot closes it
            assert time.monotonic() < deadline, bot.audit()
            await asyncio.sleep(POLL)  # polling the audit file, not a synchronisation
    finally:
        bot.stop()
        await alice.aclose()
    pending, expired = bot.audit()
    assert (pending["outcome"], pending["pending_code"]) == ("pending", ticket)
    assert (expired["outcome"], expired["applied"], expired["pending_code"], expired["actor"]) == (
        "expired",
        "no",
        ticket,
        alice.user_id,
    )
    assert expired["event_id"] == pending["event_id"] and expired["message"].startswith("no confirmation within 5 s")

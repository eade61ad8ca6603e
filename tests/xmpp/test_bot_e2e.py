"""The real ``petstore bot xmpp`` (the bot runtime, the XMPP transport from the registry) on a real Prosody:
commands and roles, a confirmation, an approval by a second person, a watch, reconnecting, two replicas."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest
from matrix.bot_process import LEASE_TTL, BotConfig

from xmpp.bot_process import XmppBotProcess, xmpp_config
from xmpp.conftest import Login, register
from xmpp.person import Person, ask, from_
from xmpp.prosody_server import ProsodyServer

pytestmark = pytest.mark.slow

#: The key the replicas seal held writes with (a code confirmed on the other replica checks its seal).
REPLICAS_KEY = "replicas-share-this-approval-key-0123"


def code_in(text: str, word: str) -> str:
    found = re.search(rf"!{word} (\w+)", text)
    assert found, text
    return found[1]


async def started(bot: XmppBotProcess) -> XmppBotProcess:
    bot.start()
    await asyncio.to_thread(bot.ready)
    return bot


def stopped(bot: XmppBotProcess) -> None:
    code = bot.stop()
    assert code == 0, bot.log()[-3000:]


def config(prosody: ProsodyServer, petbot: Login, root: Path, **fields: Any) -> BotConfig:
    return xmpp_config(jid=petbot.jid, port=prosody.port, root=root, **fields)


async def test_commands_a_refused_viewer_and_a_confirmed_write(prosody: ProsodyServer, people, room, tmp_path) -> None:
    alice: Person = await people("alice")
    bob: Person = await people("bob")
    await alice.join(room, "alice")
    await bob.join(room, "bob")
    petbot = register(prosody, "petbot")
    cfg = config(prosody, petbot, tmp_path, rooms=[room], operators=[f"xmpp:{alice.jid}"], viewers=[f"xmpp:{bob.jid}"])
    bot = await started(XmppBotProcess(cfg, password=petbot.password))
    try:
        assert "pets" in await ask(bob, room, "petbot: list --limit 2")
        refused = await ask(bob, room, "!add Rex --category 3")
        assert refused == "Not allowed: !add needs the operator role in this room; you have viewer (ask an operator)"
        before = bot.pet_count()
        asked = await ask(alice, room, "!add Rex --category 3")
        assert bot.pet_count() == before, "nothing is sent before the confirmation"
        done = await ask(alice, room, f"!confirm {code_in(asked, 'confirm')}")
        assert done.startswith("Added pet") and bot.pet_count() == before + 1
        alice.tell(petbot.jid, "whoami")
        told = await alice.expect(from_(petbot.jid))
        assert f"xmpp:{alice.jid}" in told["body"] and "operator" in told["body"]
        assert "xmpp:xmpp:" not in told["body"]  # the platform named once in where
    finally:
        stopped(bot)
    audit = bot.audit()
    assert [(a["actor"], a["outcome"]) for a in audit] == [
        (f"xmpp:{bob.jid}", "refused"),
        (f"xmpp:{alice.jid}", "pending"),
        (f"xmpp:{alice.jid}", "ok"),
    ]
    assert "PETSTORE" not in bot.log() and petbot.password not in bot.log()


async def test_a_second_person_approves_a_write(prosody: ProsodyServer, people, room, tmp_path) -> None:
    alice: Person = await people("alice")
    olivia: Person = await people("olivia")
    await alice.join(room, "alice")
    await olivia.join(room, "olivia")
    petbot = register(prosody, "petbot")
    operators = [f"xmpp:{alice.jid}", f"xmpp:{olivia.jid}"]
    cfg = config(
        prosody, petbot, tmp_path, rooms=[room], operators=operators, extra={"bot": {"approvals": ["sandbox"]}}
    )
    bot = await started(XmppBotProcess(cfg, password=petbot.password, args=["--sandbox-reset"]))
    try:
        before = bot.pet_count()
        asked = await ask(alice, room, "!add Prodpet --category 3")
        assert asked.startswith(f"xmpp:{alice.jid} asks to add a pet on sandbox: it needs a second person."), asked
        ticket = code_in(asked, "approve")
        own = await ask(alice, room, f"!approve {ticket}")
        assert "yourself: someone else must approve it" in own
        done = await ask(olivia, room, f"!approve {ticket}")
        assert done.startswith("Added pet ") and bot.pet_count() == before + 1
    finally:
        stopped(bot)
    approved = [a for a in bot.audit() if a.get("approver")]
    assert [(a["actor"], a["approver"]) for a in approved] == [(f"xmpp:{alice.jid}", f"xmpp:{olivia.jid}")]


async def test_a_watch_announces_a_new_pet_and_the_bot_comes_back_after_prosody_restarts(
    prosody: ProsodyServer, people, room, tmp_path
) -> None:
    alice: Person = await people("alice")
    await alice.join(room, "alice")
    petbot = register(prosody, "petbot")
    cfg = config(
        prosody,
        petbot,
        tmp_path,
        rooms=[room],
        operators=[f"xmpp:{alice.jid}"],
        confirm_writes=False,
        extra={"bot": {"watch_interval": 1}},
    )
    bot = await started(XmppBotProcess(cfg, password=petbot.password))
    try:
        assert (await ask(alice, room, "!watch available")).startswith("Watching")
        seen = len(alice.received)
        added = await ask(alice, room, "!add Wanda --category 2 --status available")
        pet = re.search(r"Added pet (\d+)", added)
        assert pet, added
        announced = await alice.expect(
            lambda m: from_(f"{room}/petbot")(m) and m["body"].startswith(f"New pet {pet[1]}:"), after=seen
        )
        assert "Wanda" in announced["body"]

        prosody.stop()
        prosody.start()
        await bot.logged("trying again")
        await _ready_again(bot)
        again = await Person.online(prosody, alice.jid, str(alice.client.password))
        try:
            await again.join(room, "alice")
            assert "Rex" in await ask(again, room, "!list --limit 1")
        finally:
            await again.close()
    finally:
        stopped(bot)


async def _ready_again(bot: XmppBotProcess) -> None:
    """Waits for the bot's second ``ready:`` line (it joined its rooms again)."""
    first = bot.log().index("ready: answering new messages")
    await bot.logged("ready: answering new messages", after=first + 1)


async def test_two_replicas_one_answers_and_the_other_takes_over_after_sigkill(
    prosody: ProsodyServer, people, room, tmp_path
) -> None:
    alice: Person = await people("alice")
    await alice.join(room, "alice")
    petbot = register(prosody, "petbot")
    shared = {
        "bot": {
            "state": f"sqlite:///{tmp_path / 'shared.sqlite3'}",
            "approval_key": REPLICAS_KEY,
            "lease_ttl": LEASE_TTL,
        },
        "sandbox": {"data_dir": str(tmp_path / "sandbox")},
    }
    replicas = [
        XmppBotProcess(
            config(prosody, petbot, tmp_path / name, rooms=[room], operators=[f"xmpp:{alice.jid}"], extra=shared),
            password=petbot.password,
            args=["-v"],
        )
        for name in ("a", "b")
    ]
    first, second = replicas
    try:
        await started(first)
        await first.logged("lease ")
        await started(second)
        for _ in range(3):
            assert f"xmpp:{alice.jid}" in await ask(alice, room, "!whoami")
        alice.tell(petbot.jid, "whoami")  # a direct message reaches both replicas (one resource each)
        told = await alice.expect(from_(petbot.jid))
        assert f"xmpp:{alice.jid}" in told["body"]
        asked = await ask(alice, room, "!add Twin --category 1")
        code = code_in(asked, "confirm")
        assert "'/add Twin --category 1' ->" in first.log() and "/add Twin" not in second.log()
        first.crash()
        done = await ask(alice, room, f"!confirm {code}")
        assert done.startswith("Added pet"), done
        assert f"'/confirm {code}" in second.log()
        assert "Rex" in await ask(alice, room, "!list --limit 1")
    finally:
        first.crash()
        stopped(second)
    answers = [m["body"] for m in alice.received if from_(f"{room}/petbot")(m)]
    assert len(answers) == 6, answers  # three whoami, the add, the confirm, the list: each answered once
    assert len([m for m in alice.received if from_(petbot.jid)(m)]) == 1  # the direct message, once


async def test_roles_follow_the_rooms_affiliations_and_the_config_wins(
    prosody: ProsodyServer, people, room, tmp_path
) -> None:
    alice: Person = await people("alice")  # joins first: the room's owner
    bob: Person = await people("bob")
    carol: Person = await people("carol")
    dave: Person = await people("dave")
    for person, nick in ((alice, "alice"), (bob, "bob"), (carol, "carol"), (dave, "dave")):
        await person.join(room, nick)
    muc = alice.client.plugin["xep_0045"]
    await muc.set_affiliation(room, "admin", jid=bob.jid)
    await muc.set_affiliation(room, "admin", jid=carol.jid)  # listed as a viewer below: the list wins
    petbot = register(prosody, "petbot")
    cfg = config(
        prosody,
        petbot,
        tmp_path,
        rooms=[room],
        viewers=[f"xmpp:{carol.jid}"],
        extra={"bot.xmpp": {"roles_from_affiliations": True}},
    )
    bot = await started(XmppBotProcess(cfg, password=petbot.password))
    roles = []
    try:
        for person in (alice, bob, carol, dave):
            seen = len(person.received)
            person.say(room, "!whoami")
            said = await person.expect(
                lambda m, p=person: from_(f"{room}/petbot")(m) and p.jid in m["body"], after=seen
            )
            roles.append(re.search(r"role +(\w+)", said["body"])[1])  # type: ignore[index]
    finally:
        stopped(bot)
    assert roles == ["admin", "operator", "viewer", "none"]


async def test_a_refused_password_ends_petstore_bot_xmpp_in_one_line(prosody: ProsodyServer, tmp_path) -> None:
    petbot = register(prosody, "petbot")
    wrong = "wrong-password-0123"
    bot = XmppBotProcess(config(prosody, petbot, tmp_path), password=wrong).start()
    assert bot.process is not None
    code = await asyncio.to_thread(bot.process.wait, 60)
    bot.process = None
    errors = [line for line in bot.log().splitlines() if line.startswith("petstore:")]
    assert code == 1 and errors == [
        f"petstore: xmpp: the server refused the login of {petbot.jid} (check [bot.xmpp] jid and the password)"
    ]
    assert wrong not in bot.log()

"""The real bot core (sandbox service, roles, confirmation, audit) behind the XMPP transport on a real Prosody."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from petstore_bot.core import BotCore
from petstore_cli.bot import build_core, compose_bot, open_state
from petstore_cli.settings.load import load_settings
from xmpp.conftest import BotRunner, addressing_of
from xmpp.person import Person, from_

pytestmark = pytest.mark.slow


@pytest.fixture
async def make_core(tmp_path: Path) -> AsyncIterator[Callable[..., BotCore]]:
    """``make_core(operators=[...], viewers=[...], extra=...)``: the real core on a fresh sandbox."""
    closing = []

    def make(*, operators: list[str], viewers: list[str], extra: str = "") -> BotCore:
        path = tmp_path / "config.toml"
        path.write_text(
            f'[sandbox]\ndata_dir = "{tmp_path / "sandbox"}"\n'
            f'[bot]\naudit_log = "{tmp_path / "audit.ndjson"}"\nrate_limit = "off"\ndefault_role = "none"\n{extra}\n'
            f"[bot.roles]\noperators = {json.dumps(operators)}\nviewers = {json.dumps(viewers)}\n",
            encoding="utf-8",
        )
        settings = load_settings(config_path=path).settings
        composition = compose_bot(settings)
        state = open_state(settings.bot, state_dir=tmp_path / "state", audit=composition.audit)
        closing.append((composition, state))
        return build_core(composition, settings.bot, platform="xmpp", names=["petbot"], state=state)

    yield make
    for composition, state in closing:
        await composition.aclose()
        state.close()


async def test_a_viewer_is_refused_a_write_and_an_operator_confirms_one(
    bot: BotRunner, people, room, make_core, tmp_path: Path
) -> None:
    alice: Person = await people("alice")
    bob: Person = await people("bob")
    await alice.join(room, "alice")
    await bob.join(room, "bob")
    core = make_core(operators=[f"xmpp:{alice.jid}"], viewers=[f"xmpp:{bob.jid}"])
    async with bot.running(core.handle, addressing=addressing_of(core), rooms=[room]):
        bob.say(room, "!add Rex --category 3")
        refused = await bob.expect(from_(f"{room}/petbot"))
        assert "viewer" in refused["body"] and "add" in refused["body"]
        seen = len(alice.received)
        alice.say(room, "!add Rex --category 3")
        asked = await alice.expect(lambda m: from_(f"{room}/petbot")(m) and "!confirm" in m["body"], after=seen)
        code = re.search(r"!confirm (\w{4})", asked["body"])
        assert code is not None, asked["body"]
        seen = len(alice.received)
        alice.tell(bot.login.jid, f"!confirm {code[1]}")  # a confirmation is the asker's, not the room's
        other_room = await alice.expect(from_(bot.login.jid), after=seen)
        assert other_room["body"].startswith("Nothing to confirm"), other_room["body"]
        seen = len(alice.received)
        alice.say(room, f"!confirm {code[1]}")
        done = await alice.expect(lambda m: from_(f"{room}/petbot")(m) and "Rex" in m["body"], after=seen)
        assert "Rex" in done["body"]
    audit = [json.loads(line) for line in (tmp_path / "audit.ndjson").read_text(encoding="utf-8").splitlines()]
    assert (audit[-1]["actor"], audit[-1]["outcome"], audit[-1]["applied"]) == (f"xmpp:{alice.jid}", "ok", "yes")
    assert audit[-1]["where"].endswith(f"xmpp:{room}")


async def test_roles_follow_the_rooms_affiliations_where_the_config_says_so(
    bot: BotRunner, people, room, make_core
) -> None:
    alice: Person = await people("alice")  # joins first: the room's owner
    bob: Person = await people("bob")
    carol: Person = await people("carol")
    for person, nick in ((alice, "alice"), (bob, "bob"), (carol, "carol")):
        await person.join(room, nick)
    extra = f'[bot.rooms."xmpp:{room}"]\npower_levels = true\nviewers = ["xmpp:{carol.jid}"]\n'
    core = make_core(operators=[], viewers=[], extra=extra)
    muc = alice.client.plugin["xep_0045"]
    await muc.set_affiliation(room, "admin", jid=bob.jid)
    await muc.set_affiliation(room, "admin", jid=carol.jid)  # the config's viewer grant wins over it
    roles = []
    async with bot.running(core.handle, addressing=addressing_of(core), rooms=[room], levels=core.roles.levels):
        for person in (alice, bob, carol):
            person.say(room, "!whoami")
            said = await person.expect(lambda m, p=person: from_(f"{room}/petbot")(m) and p.jid in m["body"])
            roles.append(said["body"])
    assert ["admin" in roles[0], "operator" in roles[1], "viewer" in roles[2]] == [True, True, True], roles

"""Record a real XMPP session with the bot for the docs (not a test): prints the transcript for docs/platforms/xmpp.md.

Run: ``.venv/bin/python tests/xmpp/make_transcript.py`` from the repository root (needs the test and xmpp extras and
Debian's prosody). A few seconds.

The set-up of ``tests/xmpp``: a real Prosody (``prosody_server.py``), people on slixmpp as plain clients
(``person.py``), the bot's XMPP transport in front of the real bot core on its own sandbox service. alice is an
operator, bob a viewer (``default_role = "none"``); alice made the room, so she owns it. Every message the room and
alice's direct chat carried is printed as it arrived, without a word changed, then the bot's audit log.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "tests")]

from slixmpp import JID  # noqa: E402

from petstore_cli.bot import build_core, compose_bot, open_state  # noqa: E402
from petstore_cli.settings.load import load_settings  # noqa: E402
from xmpp.conftest import BotRunner, Login, addressing_of, register  # noqa: E402
from xmpp.person import Person, from_  # noqa: E402
from xmpp.prosody_server import MUC, ProsodyServer  # noqa: E402


def shown(where: str, who: str, body: str) -> str:
    """One message as the docs show it: ``[room] alice: !list``, continuation lines indented under the body."""
    return f"[{where}] {who}: " + body.replace("\n", "\n" + " " * (len(who) + len(where) + 5))


async def record(server: ProsodyServer, tmp: Path) -> None:
    alice_login, bob_login = register(server, "alice"), register(server, "bob")
    bot = BotRunner(server, register(server, "petbot"))
    room = f"ops@{MUC}"
    config = tmp / "config.toml"
    config.write_text(
        f'[sandbox]\ndata_dir = "{tmp / "sandbox"}"\n[bot]\naudit_log = "{tmp / "audit.ndjson"}"\n'
        f'rate_limit = "off"\ndefault_role = "none"\n'
        f'[bot.roles]\noperators = ["xmpp:{alice_login.jid}"]\nviewers = ["xmpp:{bob_login.jid}"]\n',
        encoding="utf-8",
    )
    settings = load_settings(config_path=config).settings
    composition = compose_bot(settings)
    state = open_state(settings.bot, state_dir=tmp / "state", audit=composition.audit)
    core = build_core(composition, settings.bot, platform="xmpp", names=["petbot"], state=state)
    alice = await Person.online(server, alice_login.jid, alice_login.password)
    bob = await Person.online(server, bob_login.jid, bob_login.password)
    await alice.join(room, "alice")
    await bob.join(room, "bob")
    lines: list[str] = []
    try:
        async with bot.running(core.handle, addressing=addressing_of(core), rooms=[room]):
            await conversation(alice, bob, bot.login, room, lines)
    finally:
        await alice.close()
        await bob.close()
        await composition.aclose()
        state.close()
    print("\n".join(lines))
    print()
    for line in (tmp / "audit.ndjson").read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        print(json.dumps({k: entry[k] for k in ("actor", "role", "where", "line", "outcome") if k in entry}))


async def conversation(alice: Person, bob: Person, petbot: Login, room: str, lines: list[str]) -> None:
    """The exchanges, each message appended to ``lines`` as the person sent it and as alice's client got the reply."""
    bot_in_room = from_(f"{room}/petbot")

    async def exchange(person: Person, text: str, *, direct: bool = False) -> str:
        who, where = JID(person.jid).user.split("-")[0], "direct" if direct else "room"
        lines.append(shown(where, who, text))
        seen = len(alice.received)
        if direct:
            person.tell(petbot.jid, text)
            reply = await alice.expect(from_(petbot.jid), after=seen)
        else:
            person.say(room, text)
            reply = await alice.expect(bot_in_room, after=seen)
        lines.append(shown(where, "petbot", str(reply["body"])))
        return str(reply["body"])

    await exchange(alice, "!list --limit 3")
    await exchange(bob, "petbot: add Rex --category 3")
    asked = await exchange(alice, "petbot: add Rex --category 3")
    code = re.search(r"!confirm (\w+)", asked)
    assert code is not None, asked
    await exchange(alice, f"!confirm {code[1]}")
    await exchange(alice, "whoami", direct=True)
    alice.tell(petbot.jid, "thanks!")  # not a command: no answer
    lines.append(shown("direct", "alice", "thanks!"))
    await exchange(alice, "!get 1")


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="xmpp-transcript-") as name:
        tmp = Path(name)
        server = ProsodyServer.create(tmp / "prosody")
        server.start()
        try:
            asyncio.run(record(server, tmp))
        finally:
            server.stop()


if __name__ == "__main__":
    main()

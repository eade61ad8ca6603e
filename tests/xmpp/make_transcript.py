"""Record a real XMPP session with the bot for the docs (not a test): prints the transcript for docs/platforms/xmpp.md.

Run: ``.venv/bin/python tests/xmpp/make_transcript.py`` from the repository root (needs the test and xmpp extras and
Debian's prosody). A few seconds.

The set-up of ``tests/xmpp``: a real Prosody (``prosody_server.py``), people on slixmpp as plain clients
(``person.py``), the real ``petstore bot xmpp`` process (``bot_process.py``) on its own sandbox. alice is an
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

from xmpp.bot_process import XmppBotProcess, xmpp_config  # noqa: E402
from xmpp.conftest import Login, register  # noqa: E402
from xmpp.person import Person, from_  # noqa: E402
from xmpp.prosody_server import MUC, ProsodyServer  # noqa: E402


def shown(where: str, who: str, body: str) -> str:
    """One message as the docs show it: ``[room] alice: !list``, continuation lines indented under the body."""
    return f"[{where}] {who}: " + body.replace("\n", "\n" + " " * (len(who) + len(where) + 5))


async def record(server: ProsodyServer, tmp: Path) -> None:
    alice_login, bob_login, petbot = register(server, "alice"), register(server, "bob"), register(server, "petbot")
    room = f"ops@{MUC}"
    alice = await Person.online(server, alice_login.jid, alice_login.password)
    bob = await Person.online(server, bob_login.jid, bob_login.password)
    await alice.join(room, "alice")
    await bob.join(room, "bob")
    config = xmpp_config(
        jid=petbot.jid,
        port=server.port,
        root=tmp / "bot",
        rooms=[room],
        operators=[f"xmpp:{alice_login.jid}"],
        viewers=[f"xmpp:{bob_login.jid}"],
    )
    bot = XmppBotProcess(config, password=petbot.password).start()
    lines: list[str] = []
    try:
        await asyncio.to_thread(bot.ready)
        await conversation(alice, bob, petbot, room, lines)
    finally:
        code = bot.stop()
        await alice.close()
        await bob.close()
    assert code == 0, bot.log()[-3000:]
    print("\n".join(lines))
    print()
    for entry in bot.audit():
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

"""Record a real IRC session with the bot for the docs (not a test): docs/platforms/irc.md's transcript.

Run: ``.venv/bin/python tests/ircd/make_transcript.py`` from the repository root (needs ngIRCd). About 10 s.

The set-up of tests/ircd/test_runtime_irc.py: a real ngIRCd with a server password, the bot's runtime in-process
with the registry's IRC factory (``identify = "nick"``) on its own sandbox, people on jaraco's irc client. alice is
an operator, bob a viewer. Every line anyone received in the channel or in a private message is printed as an IRC
client logs it (``<nick> text``, ``-nick- text`` for a NOTICE), without a word changed; then the bot's audit log.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "tests")]

from ircd.ngircd_server import NgircdServer  # noqa: E402
from ircd.person import Person  # noqa: E402
from ircd.test_runtime_irc import CONFIRM, code, running  # noqa: E402


def line(person: Person, index: int) -> str:
    said = person.said[index]
    kind = "-" if any(f" NOTICE {said.target} :{said.text}" in raw for raw in person.raw) else "<"
    where = said.target if said.target.startswith("#") else f"(private to {said.target})"
    return f"{where:>22} {kind}{said.nick}{'-' if kind == '-' else '>'} {said.text}"


async def conversation(ircd: NgircdServer, root: Path) -> list[str]:
    alice, bob = await Person.connect(ircd, "alice"), await Person.connect(ircd, "bob")
    out: list[str] = []
    async with running(ircd, root, operators=["irc:alice"], viewers=["irc:bob"]) as bot:
        for person in (alice, bob):
            await person.join(bot.channel)

        async def say(person: Person, target: str, text: str, count: int = 1) -> list[str]:
            where = target if target.startswith("#") else f"(private to {target})"
            out.append(f"{where:>22} <{person.nick}> {text}")
            since = len(person.said)
            answer = await person.ask(target, text, bot=bot.nick, count=count)
            out.extend(line(person, i) for i in range(since, len(person.said)) if person.said[i].nick == bot.nick)
            return answer

        await say(alice, bot.channel, "!list --limit 3", count=5)
        await say(bob, bot.channel, "!add Rex --category 3")
        asked = await say(alice, bot.channel, "!add Rex --category 3", count=3)
        await say(alice, bot.channel, f"!confirm {code(CONFIRM, ' '.join(asked))}", count=5)
        await say(alice, bot.channel, f"{bot.nick}: watch available", count=2)
        since = len(alice.said)
        await bot.service.client.create_pet(name="Biscuit", category_id=1, status="available")
        await alice.wait_for(since, nick=bot.nick, where=bot.channel)
        out.extend(line(alice, i) for i in range(since, len(alice.said)))
        await say(bob, bot.nick, "whoami", count=4)
    for person in (alice, bob):
        person.close()
    audit = (root / "audit.ndjson").read_text(encoding="utf-8")
    return [*out, "", "audit log:", audit.rstrip()]


def main() -> None:
    with tempfile.TemporaryDirectory() as root:
        ircd = NgircdServer.create(Path(root) / "ngircd", password="transcript-password").start()
        try:
            lines = asyncio.run(conversation(ircd, Path(root)))
        finally:
            ircd.stop()
    print("\n".join(lines))


if __name__ == "__main__":
    main()

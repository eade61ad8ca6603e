"""Record a real Matrix room session with ``petstore bot matrix`` for the docs (not a test).

Run: ``.venv/bin/python tests/matrix/make_transcript.py`` from the repository root (needs the test extra,
/usr/bin/chromium and ImageMagick's convert). About 30 s.

The set-up of the end-to-end tests: a real Synapse (``synapse_server.py``), the real ``petstore bot matrix`` process
(``bot_process.py``) on its own sandbox, people registered on the homeserver and speaking the client-server API.
alice is an operator, bob a viewer, carol in no list (``default_role = "none"``). The conversation is read back from
the room's timeline, and written out twice, without a word changed:

- ``docs/images/matrix-room.png``: the room as a transcript page, each person's text escaped and each of the bot's
  replies its own ``formatted_body`` (the HTML a Matrix client shows), screenshotted in headless Chromium. It is a
  transcript, not a Matrix client's window: no client is installed here.
- on stdout, the same conversation in plain text (each reply's ``body``), then the bot's audit log, for the docs page.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import re
import sys
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "tests")]

from transcript_page import Said, page, screenshot  # noqa: E402

from matrix.bot_process import BotConfig, BotProcess, ask, room_with  # noqa: E402
from matrix.conftest import Account, register  # noqa: E402
from matrix.cs_client import MatrixUser  # noqa: E402
from matrix.synapse_server import SynapseServer  # noqa: E402

T = TypeVar("T")
IMAGE = ROOT / "docs" / "images" / "matrix-room.png"
NOTE = (
    "A transcript of a room on a real Synapse: the people's messages, and the bot's replies as the HTML it sends "
    "(<code>formatted_body</code>). Not a Matrix client's window."
)


@dataclass
class Conversation:
    """People logged in on the homeserver, in one room with the bot; ``said`` keeps each message and its reply."""

    users: dict[str, MatrixUser]
    room: str
    bot_id: str
    said: list[tuple[str, str, dict[str, object]]] = field(default_factory=list)

    async def say(self, name: str, text: str) -> dict[str, object]:
        reply = await ask(self.users[name], self.room, text, bot_id=self.bot_id)
        self.said.append((name, text, reply))
        return reply


@contextlib.asynccontextmanager
async def conversation(
    server: SynapseServer, config: BotConfig, *, password: str, people: dict[str, Account]
) -> AsyncIterator[Conversation]:
    """The real bot process on ``config``, and ``people`` (the first creates the room) in a room with it; the bot
    stopped and everyone logged out at the end."""
    bot = BotProcess(config, password=password).start()
    users: dict[str, MatrixUser] = {}
    try:
        bot.ready()
        for name, account in people.items():
            users[name] = await MatrixUser.login(
                base_url=server.url, user_id=account.user_id, password=account.password
            )
        first, *others = users.values()
        room = await room_with(first, config.user_id, *others)
        yield Conversation(users=users, room=room, bot_id=config.user_id)
    finally:
        for user in users.values():
            await user.aclose()
        bot.stop()


def on_synapse(converse: Callable[[SynapseServer, Path], Awaitable[T]]) -> T:
    """Run ``converse`` against a Synapse of its own in a temporary directory."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        server = SynapseServer.create(root / "synapse")
        server.start()
        try:
            return asyncio.run(converse(server, root))
        finally:
            server.stop()


async def converse(server: SynapseServer, root: Path) -> tuple[list[tuple[str, str, dict[str, object]]], str]:
    bot_account = register(server, "petbot")
    people = {name: register(server, name) for name in ("alice", "bob", "carol")}
    config = BotConfig(
        homeserver=server.url,
        user_id=bot_account.user_id,
        root=root / "bot",
        operators=[people["alice"].user_id],
        viewers=[people["bob"].user_id],
    )
    async with conversation(server, config, password=bot_account.password, people=people) as talk:
        say = talk.say
        await say("bob", "!whoami")
        await say("bob", "!list sold --limit 3")
        await say("bob", '!add "Rex the Dog" --category 3')
        asked = await say("alice", '!add "Rex the Dog" --category 3 --status available')
        code = re.search(r"!confirm (\w+)", str(asked["body"]))
        assert code, asked
        await say("alice", f"!confirm {code.group(1)}")
        await say("alice", "!get $last")
        await say("carol", "!list")
        await say("bob", "!env")
    return talk.said, config.audit_log.read_text(encoding="utf-8")


def transcript(said: list[tuple[str, str, dict[str, object]]]) -> list[Said]:
    out = []
    for name, text, reply in said:
        shown = reply.get("formatted_body") or f"<pre>{html.escape(str(reply['body']))}</pre>"
        out.extend([Said(name, html.escape(text)), Said("petbot", str(shown), bot=True)])
    return out


def plain(said: list[tuple[str, str, dict[str, object]]]) -> str:
    lines = []
    for name, text, reply in said:
        lines.append(f"{name + ':':8} {text}")
        body = str(reply["body"]).splitlines() or [""]
        lines.append(f"{'petbot:':8} {body[0]}")
        lines.extend(f"{'':8} {line}" for line in body[1:])
    return "\n".join(lines)


def main() -> None:
    said, audit = on_synapse(converse)
    screenshot(page(NOTE, transcript(said)), IMAGE)
    print(plain(said))
    print(f"\n# the audit log\n{audit}", end="")
    print(f"\n{IMAGE.relative_to(ROOT)}", file=sys.stderr)


if __name__ == "__main__":
    main()

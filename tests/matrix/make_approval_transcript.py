"""Record a real approval by a second person with ``petstore bot matrix`` for docs/approvals.md (not a test).

Run: ``.venv/bin/python tests/matrix/make_approval_transcript.py`` from the repository root (needs the test extra).
About 30 s. A real Synapse, the real bot process with ``[bot] approvals`` naming the environment it writes to (the
sandbox here: production in real life), alice and olivia operators, victor a viewer. Prints the conversation as
plain text (each reply's ``body``), then the bot's audit log, without a word changed.
"""

from __future__ import annotations

import asyncio
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "tests")]

from matrix.bot_process import BotConfig, BotProcess, ask, room_with  # noqa: E402
from matrix.conftest import register  # noqa: E402
from matrix.cs_client import MatrixUser  # noqa: E402
from matrix.make_transcript import plain  # noqa: E402
from matrix.synapse_server import SynapseServer  # noqa: E402


async def converse(server: SynapseServer, root: Path) -> tuple[list[tuple[str, str, dict[str, object]]], str]:
    bot_account = register(server, "petbot")
    people = {name: register(server, name) for name in ("alice", "olivia", "victor")}
    config = BotConfig(
        homeserver=server.url,
        user_id=bot_account.user_id,
        root=root / "bot",
        operators=[people["alice"].user_id, people["olivia"].user_id],
        viewers=[people["victor"].user_id],
        extra={"bot": {"approvals": ["sandbox"]}},
    )
    bot = BotProcess(config, password=bot_account.password).start()
    users: dict[str, MatrixUser] = {}
    said: list[tuple[str, str, dict[str, object]]] = []
    try:
        bot.ready()
        for name, account in people.items():
            users[name] = await MatrixUser.login(
                base_url=server.url, user_id=account.user_id, password=account.password
            )
        room = await room_with(users["alice"], bot_account.user_id, users["olivia"], users["victor"])

        async def say(name: str, text: str) -> dict[str, object]:
            reply = await ask(users[name], room, text, bot_id=bot_account.user_id)
            said.append((name, text, reply))
            return reply

        asked = await say("alice", '!add "Rex the Dog" --category 3 --status available')
        code = re.search(r"!approve (\w+)", str(asked["body"]))
        assert code, asked
        await say("alice", f"!approve {code[1]}")
        await say("victor", f"!approve {code[1]}")
        await say("olivia", f"!approve {code[1]}")
        await say("olivia", f"!approve {code[1]}")
        second = await say("alice", "!add Tom --category 1")
        other = re.search(r"!approve (\w+)", str(second["body"]))
        assert other, second
        await say("olivia", f"!deny {other[1]} Tom is already listed as 12")
    finally:
        for user in users.values():
            await user.aclose()
        bot.stop()
    return said, config.audit_log.read_text(encoding="utf-8")


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        server = SynapseServer.create(root / "synapse")
        server.start()
        try:
            said, audit = asyncio.run(converse(server, root))
        finally:
            server.stop()
    print(plain(said))
    print(f"\n# the audit log\n{audit}", end="")


if __name__ == "__main__":
    main()

"""Record a real approval by a second person with ``petstore bot matrix`` for docs/approvals.md (not a test).

Run: ``.venv/bin/python tests/matrix/make_approval_transcript.py`` from the repository root (needs the test extra).
About 30 s. A real Synapse, the real bot process with ``[bot] approvals`` naming the environment it writes to (the
sandbox here: production in real life), alice and olivia operators, victor a viewer. Prints the conversation as
plain text (each reply's ``body``), then the bot's audit log, without a word changed.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "tests")]

from matrix.bot_process import BotConfig  # noqa: E402
from matrix.conftest import register  # noqa: E402
from matrix.make_transcript import conversation, on_synapse, plain  # noqa: E402
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
    async with conversation(server, config, password=bot_account.password, people=people) as talk:
        say = talk.say
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
    return talk.said, config.audit_log.read_text(encoding="utf-8")


def main() -> None:
    said, audit = on_synapse(converse)
    print(plain(said))
    print(f"\n# the audit log\n{audit}", end="")


if __name__ == "__main__":
    main()

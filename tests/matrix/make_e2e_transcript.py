"""Record a real session in an encrypted direct chat with ``petstore bot matrix``, for the docs (not a test).

Run: ``.venv/bin/python tests/matrix/make_e2e_transcript.py`` from the repository root (needs the test extra).
About 30 s. A real Synapse, the real ``petstore bot matrix`` process, and alice (an operator) on matrix-nio with
its e2e extra (``e2e_person.py``), as a client such as Element would be: she opens an encrypted direct chat with
the bot and types as people do. Each line printed is a message as decrypted by her client; a reply that reached
her unencrypted would stop the script.
"""

from __future__ import annotations

import asyncio
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "tests")]

from matrix.bot_process import BotConfig, BotProcess  # noqa: E402
from matrix.conftest import register  # noqa: E402
from matrix.e2e_person import E2EPerson  # noqa: E402
from matrix.synapse_server import SynapseServer  # noqa: E402


async def converse(server: SynapseServer, root: Path) -> list[str]:
    bot_account, alice_account = register(server, "petbot"), register(server, "alice")
    config = BotConfig(
        homeserver=server.url, user_id=bot_account.user_id, root=root / "bot", operators=[alice_account.user_id]
    )
    bot = BotProcess(config, password=bot_account.password).start()
    lines: list[str] = []
    alice = None
    try:
        bot.ready()
        alice = await E2EPerson.login(
            base_url=server.url, user_id=alice_account.user_id, password=alice_account.password, store=root / "alice"
        )
        room = await alice.create_room(invite=[bot_account.user_id], direct=True)
        await alice.knows_device_of(bot_account.user_id, room)
        localpart = bot_account.user_id[1:].split(":")[0]

        async def say(text: str) -> str:
            asked = await alice.send(room, text)
            reply = await alice.answer(asked, sender=bot_account.user_id)
            if not getattr(reply, "decrypted", False):
                raise SystemExit(f"the reply to {text!r} was not encrypted")
            first, *rest = reply.body.splitlines() or [""]
            lines.extend([f"{'alice:':8} {text}", f"{'petbot:':8} {first}", *(f"{'':8} {line}" for line in rest)])
            return str(reply.body)

        await say("list sold --limit 3")
        asked = await say("!add Tom --category 1 --status sold")
        code = re.search(r"confirm (\w{4})", asked)
        assert code, asked
        await say(f"{localpart}: confirm {code[1]}")
        await say("get $last")
    finally:
        if alice is not None:
            await alice.aclose()
        bot.stop()
    return lines


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        server = SynapseServer.create(root / "synapse")
        server.start()
        try:
            lines = asyncio.run(converse(server, root))
        finally:
            server.stop()
    print("\n".join(lines))


if __name__ == "__main__":
    main()

"""Record a real room with watches and a schedule for docs/notifications.md (not a test).

Run: ``.venv/bin/python tests/matrix/make_notify_transcript.py`` from the repository root (needs the test extra).
About two minutes: the schedule's run is waited for on the real clock.

A real Synapse, the real ``petstore bot matrix`` (``watch_interval = 2``) on a real ``petstore serve``, a pet added
from a terminal with the real ``petstore add``. The room's timeline is read back and printed in plain text (each
message's ``body``), every message of the bot's, asked or not, in the order the room has them.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "tests")]

from cli_support import clean_env, run_petstore  # noqa: E402
from server.support import running_server  # noqa: E402

from matrix.bot_process import BotConfig, BotProcess, ask, room_with  # noqa: E402
from matrix.conftest import register  # noqa: E402
from matrix.cs_client import MatrixUser, from_sender  # noqa: E402
from matrix.synapse_server import SynapseServer  # noqa: E402

KEY = "sk-transcript-0123456789"


async def converse(server: SynapseServer, root: Path, url: str) -> list[str]:
    bot_account = register(server, "petbot")
    alice_account, bob_account = register(server, "alice"), register(server, "bob")
    config = BotConfig(
        homeserver=server.url,
        user_id=bot_account.user_id,
        root=root / "bot",
        operators=[alice_account.user_id],
        viewers=[bob_account.user_id],
        extra={"bot": {"watch_interval": 2, "timezone": "Europe/Berlin"}},
    )
    bot = BotProcess(
        config, password=bot_account.password, env={"PETSTORE_BASE_URL": url, "PETSTORE_API_KEY": KEY}
    ).start()
    names = {alice_account.user_id: "alice", bob_account.user_id: "bob", bot_account.user_id: "petbot"}
    alice = bob = None
    try:
        bot.ready()
        alice = await MatrixUser.login(
            base_url=server.url, user_id=alice_account.user_id, password=alice_account.password
        )
        bob = await MatrixUser.login(base_url=server.url, user_id=bob_account.user_id, password=bob_account.password)
        room = await room_with(alice, bot_account.user_id, bob)
        bot_id = bot_account.user_id
        await ask(bob, room, "!watch available", bot_id=bot_id)
        env = clean_env(root / "cli", PETSTORE_BASE_URL=url, PETSTORE_API_KEY=KEY)
        added = run_petstore("add", "Biscuit", "--category", "2", "--status", "available", "--json", env=env)
        pet = json.loads(added.stdout.splitlines()[0])["result"]["id"]
        await alice.wait_for(
            room, lambda ev: any(f"New pet {pet}:" in e["content"]["body"] for e in from_sender(ev, bot_id))
        )
        await ask(bob, room, "!watches", bot_id=bot_id)
        await ask(bob, room, "!every 1m /list available --limit 3", bot_id=bot_id)
        await ask(bob, room, "!every weekday at 09:00 /orders", bot_id=bot_id)
        await ask(bob, room, "!every 10m /add Sneaky --category 1", bot_id=bot_id)
        await ask(alice, room, "!schedules", bot_id=bot_id)
        await alice.wait_for(
            room,
            lambda ev: any(e["content"]["body"].startswith("Schedule 1 (") for e in from_sender(ev, bot_id)),
            deadline=120,
        )
        await ask(bob, room, "!unschedule 1", bot_id=bot_id)
        await ask(bob, room, "!unwatch available", bot_id=bot_id)
        lines = []
        for event in await alice.messages(room):
            if event.get("type") != "m.room.message":
                continue
            who = names.get(event["sender"], event["sender"])
            body = str(event["content"]["body"]).splitlines() or [""]
            lines.append(f"{who + ':':8} {body[0]}")
            lines.extend(f"{'':8} {line}" for line in body[1:])
        return lines
    finally:
        for user in (alice, bob):
            if user is not None:
                await user.aclose()
        bot.stop()


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        server = SynapseServer.create(root / "synapse")
        server.start()
        try:
            with running_server(root / "pets.db", "--seed", keys=[KEY]) as (_, url, _):
                lines = asyncio.run(converse(server, root, url))
        finally:
            server.stop()
    print("\n".join(lines))


if __name__ == "__main__":
    main()

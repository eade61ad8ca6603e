"""Record a terminal's request for approval, approved and denied in a real room, for the docs (not a test).

Run: ``.venv/bin/python tests/matrix/make_terminal_transcript.py`` from the repository root (needs the test extra).
About 40 s.

The set-up of tests/matrix/test_terminal_approval.py: a real Synapse, ``petstore serve`` as production, the real
``petstore bot matrix`` serving it with ``[bot] approvals = ["production"]``, and the ``petstore`` program at a
terminal sharing the bot's state (here a SQLite file both use; a PostgreSQL database works the same). bob, an
operator, approves in the approvals room. Printed on stdout, without a word changed: each terminal command with what
it wrote on stderr and stdout and its exit code, the room as plain text (each message's ``body``), then the audit
line the bot wrote.
"""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "tests")]

from cli_support import keyed_service  # noqa: E402

from matrix.bot_process import BotProcess, approvals_config, petstore_env  # noqa: E402
from matrix.conftest import register  # noqa: E402
from matrix.cs_client import MatrixUser, from_sender  # noqa: E402
from matrix.make_transcript import on_synapse  # noqa: E402
from matrix.synapse_server import SynapseServer  # noqa: E402

KEY = "sk-docs-approvals-0123456789"
CODE = re.compile(r"approve ([A-Z0-9]{6})\b")


class Terminal:
    """``petstore`` with the bot's config file, shown as typed (the config flag left out: it is the same file)."""

    def __init__(self, bot: BotProcess) -> None:
        self.bot = bot
        self.shown: list[str] = []

    def start(self, *args: str) -> tuple[str, subprocess.Popen[str]]:
        typed = "$ petstore " + " ".join(_quoted(a) for a in args)
        command = [sys.executable, "-m", "petstore_cli", "--config", str(self.bot.config_path), *args]
        env = petstore_env(self.bot.config.root / "terminal", COLUMNS="100")
        proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        return typed, proc

    def done(self, typed: str, proc: subprocess.Popen[str]) -> str:
        out, err = proc.communicate(timeout=120)
        self.shown += [typed, *err.splitlines(), *out.splitlines(), f"(exit {proc.returncode})", ""]
        return out


def _quoted(word: str) -> str:
    return f'"{word}"' if " " in word else word


async def posted_code(bob: MatrixUser, room: str, bot_id: str, what: str) -> str:
    def mine(events: list[dict[str, object]]) -> list[str]:
        bodies = [str(e["content"].get("body", "")) for e in from_sender(events, bot_id)]  # type: ignore[union-attr]
        return [b for b in bodies if what in b]

    events = await bob.wait_for(room, lambda evs: bool(mine(evs)))
    found = CODE.search(mine(events)[0])
    assert found is not None
    return found[1]


async def record(server: SynapseServer, root: Path, service: str) -> tuple[list[str], list[str], str]:
    account, bob_account = register(server, "petbot"), register(server, "bob")
    bob = await MatrixUser.login(base_url=server.url, user_id=bob_account.user_id, password=bob_account.password)
    room = await bob.create_room(invite=[account.user_id])
    config = approvals_config(
        homeserver=server.url,
        user_id=account.user_id,
        root=root / "bot",
        approver=bob.user_id,
        room=room,
        service=service,
        key=KEY,
        state=f"sqlite:///{root / 'state.db'}",
    )
    bot = BotProcess(config, password=account.password, args=["--env", "production"]).start()
    terminal = Terminal(bot)
    try:
        bot.ready()
        await bob.wait_membership(room, account.user_id, "join")
        typed, proc = terminal.start("--env", "production", "add", "Rex the Dog", "--category", "3")
        code = await posted_code(bob, room, account.user_id, "Rex the Dog")
        await bob.send_text(room, f"!approve {code}")
        await asyncio.to_thread(terminal.done, typed, proc)
        typed, proc = terminal.start("--env", "production", "add", "Friday Cat", "--category", "1")
        code = await posted_code(bob, room, account.user_id, "Friday Cat")
        await bob.send_text(room, f"!deny {code} not on a Friday")
        await asyncio.to_thread(terminal.done, typed, proc)
        typed, proc = terminal.start("--env", "production", "add", "Later Bird", "--category", "2", "--no-wait")
        await asyncio.to_thread(terminal.done, typed, proc)
        typed, proc = terminal.start("approvals")
        await asyncio.to_thread(terminal.done, typed, proc)
        names = {bob.user_id: "bob", account.user_id: "petbot"}
        events = [e for e in await bob.messages(room) if e.get("type") == "m.room.message"]
        lines = []
        for event in events:
            body = str(event["content"].get("body", "")).splitlines() or [""]
            who = names.get(str(event.get("sender")), "?") + ":"
            lines += [f"{who:8} {body[0]}", *(f"{'':8} {line}" for line in body[1:])]
    finally:
        bot.stop()
        await bob.aclose()
    return terminal.shown, lines, config.audit_log.read_text(encoding="utf-8")


def main() -> None:
    async def converse(server: SynapseServer, root: Path) -> tuple[list[str], list[str], str]:
        with keyed_service(root / "serve", KEY) as service:
            return await record(server, root, service)

    shown, room, audit = on_synapse(converse)
    print("# the terminal")
    print("\n".join(shown))
    print("# the approvals room")
    print("\n".join(room))
    print(f"\n# the audit log\n{audit}", end="")


if __name__ == "__main__":
    main()

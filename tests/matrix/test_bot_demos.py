"""Chat demos: every ``examples/*.pets`` script played through the real bot into a room matches ``petstore run``.

Each script runs twice on identical fresh sandboxes (``--sandbox-reset``, so the same seeded pets and the same next
ids): once with ``petstore run --json --keep-going``, once through ``petstore bot matrix`` (``confirm_writes =
false``, the sender an operator), one message per command line (``/add ...`` sent as ``!add ...``), each sent after
the reply to the one before (a script is sequential: ``$last`` and ``/expect`` read the line before).

The comparison, line by line, is the one that holds whatever the face renders:
- the same verdict: ``run``'s ``ok``, against the reply not being an error (an error reply's HTML opens with its bold
  ``Title: message`` line, which no result opens with);
- a failure carries the same message (``run``'s message up to its usage part appears in the reply's first line);
- a pet or a list of pets shows the same ``(id, name)`` pairs, in order: parsed from the reply's plain card
  (``id``/``name`` rows) or table rows, against ``run``'s JSON.
Other results (help, env, orders, expectations met, a pause) are compared by verdict only: their wording is the
face's own (``!`` instead of ``/``, the bot's role in ``/help``).

Lines a chat face cannot run (terminal-only: ``/history``, ``/quit``) are sent to the bot, which must refuse them
("only available in a terminal"), and are left out of the script ``petstore run`` plays; the examples have none
today, so this only guards a future example.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bot_commands.script import command_word, read_script
from matrix.bot_process import ROOT, BotConfig, BotProcess, answered_once, ask, petstore_env, room_with
from matrix.conftest import register
from matrix.cs_client import MatrixUser
from matrix.synapse_server import SynapseServer

pytestmark = pytest.mark.slow

EXAMPLES = sorted((ROOT / "examples").glob("*.pets"))
TERMINAL_ONLY = {"history", "quit", "exit"}
_ROW = re.compile(r"^\s*(\d+)\s{2,}(.+?)\s{2,}\d+\s{2,}\S+\s*$", re.M)


def _run(script: list[str], root: Path) -> list[dict[str, Any]]:
    path = root / "script.pets"
    root.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(script) + "\n", encoding="utf-8")
    env = petstore_env(root, PETSTORE_SANDBOX__DATA_DIR=str(root / "sandbox"))
    done = subprocess.run(
        [sys.executable, "-m", "petstore_cli", "--sandbox-reset", "run", "--json", "--keep-going", str(path)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "Traceback" not in done.stderr, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def _pets_in_json(result: object) -> list[tuple[int, str]] | None:
    if isinstance(result, dict) and "id" in result and "name" in result:
        return [(int(result["id"]), str(result["name"]))]
    if isinstance(result, list) and all(isinstance(p, dict) and "id" in p and "name" in p for p in result):
        return [(int(p["id"]), str(p["name"])) for p in result]
    return None


def _pets_in_reply(body: str, *, card: bool) -> list[tuple[int, str]]:
    if card:
        pet_id = re.search(r"^id\s+(\d+)\s*$", body, re.M)
        name = re.search(r"^name\s+(.+?)\s*$", body, re.M)
        assert pet_id and name, body
        return [(int(pet_id[1]), name[1])]
    return [(int(m[1]), m[2]) for m in _ROW.finditer(body)]


def _compare(line: str, ran: dict[str, Any], reply: dict[str, Any]) -> int:
    """Fails on a difference; returns how many pets were compared."""
    failed = str(reply.get("formatted_body", "")).startswith("<strong>")
    assert failed == (not ran["ok"]), (line, ran, reply["body"])
    if not ran["ok"]:
        message = ran["error"]["message"].split(". Usage: ")[0]
        assert message in reply["body"].splitlines()[0], (line, message, reply["body"])
        return 0
    expected = _pets_in_json(ran["result"])
    if expected is None:
        return 0
    got = _pets_in_reply(reply["body"], card=isinstance(ran["result"], dict))
    assert got == expected, (line, got, expected)
    return len(got)


@pytest.mark.parametrize("script", EXAMPLES, ids=lambda p: p.stem)
async def test_an_example_played_in_a_room_matches_petstore_run(
    homeserver: SynapseServer, tmp_path: Path, script: Path
) -> None:
    lines = [line for _, line in read_script(script)]
    runnable = [line for line in lines if command_word(line) not in TERMINAL_ONLY]
    account, bot_account = register(homeserver, "alice"), register(homeserver, "petbot")
    config = BotConfig(
        homeserver=homeserver.url,
        user_id=bot_account.user_id,
        root=tmp_path / "bot",
        operators=[account.user_id],
        confirm_writes=False,
    )
    bot = BotProcess(config, password=bot_account.password, args=["--sandbox-reset"]).start()
    alice = await MatrixUser.login(base_url=homeserver.url, user_id=account.user_id, password=account.password)
    try:
        ran = _run(runnable, tmp_path / "run")  # while the bot starts
        assert len(ran) == len(runnable), "petstore run --keep-going answers every line"
        bot.ready()
        room = await room_with(alice, bot_account.user_id)
        outcomes, compared = iter(ran), 0
        for line in lines:
            reply = await ask(alice, room, "!" + line.removeprefix("/"), bot_id=bot_account.user_id)
            if command_word(line) in TERMINAL_ONLY:
                assert "only available in a terminal" in reply["body"], reply["body"]
                continue
            compared += _compare(line, next(outcomes), reply)
        assert compared > 0, "every example shows pets: the comparison saw some"
        answered_once(await alice.messages(room), bot_account.user_id)
    finally:
        code = bot.stop()
        await alice.aclose()
    assert code == 0, bot.log()[-3000:]

"""One ``petstore bot`` process on two platforms at once (no platform named: every ``[bot.<platform>]`` the config
sets): Matrix on a real Synapse and Slack over Socket Mode (tests/bot/slack_api_server.py, Slack's published
protocol, as Slack cannot be reached from here), on one state store, one audit log and one lease. Each platform is
answered; a request for approval asked in a Slack channel is posted in the Matrix approvals room and approved there;
SIGTERM ends the process with 0."""

from __future__ import annotations

import asyncio
import json
import re
import signal
import sys
from pathlib import Path

import pytest
from bot.slack_api_server import APP_TOKEN, BOT_TOKEN, slack_server
from bot.slack_support import block_text

from matrix.bot_process import READY, BotConfig, ask, petstore_env
from matrix.conftest import register
from matrix.cs_client import MatrixUser, from_sender
from matrix.synapse_server import SynapseServer

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
APPROVE = re.compile(r"approve ([A-Z0-9]{6})\b")


def slash(text: str, *, user: str, hook: str) -> dict[str, str]:
    """A slash_commands envelope's payload, as Slack sends it (team T1, channel C1)."""
    return {
        "token": "legacy",
        "team_id": "T1",
        "channel_id": "C1",
        "user_id": user,
        "command": "/pets",
        "text": text,
        "response_url": f"{hook}/cmd",
        "trigger_id": f"trigger-{text}",
    }


async def test_one_process_answers_matrix_and_slack_and_a_slack_request_is_approved_in_matrix(
    homeserver: SynapseServer, tmp_path: Path
) -> None:
    petbot, olga = register(homeserver, "petbot"), register(homeserver, "olga")
    owner = await MatrixUser.login(base_url=homeserver.url, user_id=olga.user_id, password=olga.password)
    async with slack_server() as slack:
        proc = None
        try:
            ops = await owner.create_room(invite=[petbot.user_id])
            config = BotConfig(
                homeserver=homeserver.url,
                user_id=petbot.user_id,
                root=tmp_path,
                rooms=[ops],
                operators=[olga.user_id, "slack:T1/UBOB"],
                extra={
                    "bot": {"approvals": ["sandbox"], "approvals_room": ops},
                    "bot.slack": {"api_url": slack.api_url},
                },
            )
            path = tmp_path / "petstore.toml"
            path.write_text(config.text(), encoding="utf-8")
            env = petstore_env(
                tmp_path,
                PETSTORE_BOT__MATRIX__PASSWORD=petbot.password,
                PETSTORE_BOT__SLACK__APP_TOKEN=APP_TOKEN,
                PETSTORE_BOT__SLACK__BOT_TOKEN=BOT_TOKEN,
            )
            with (tmp_path / "bot.stderr").open("wb") as err:
                proc = await asyncio.create_subprocess_exec(
                    sys.executable, "-m", "petstore_cli", "--config", str(path), "bot", cwd=ROOT, env=env, stderr=err
                )
            await slack.wait_for(lambda: slack.connections or proc.returncode is not None, timeout=90)
            await _logged(tmp_path / "bot.stderr", READY, proc)
            await owner.wait_membership(ops, petbot.user_id, "join")

            on_matrix = await ask(owner, ops, "!whoami", bot_id=petbot.user_id)
            assert olga.user_id in str(on_matrix["body"])
            sent = await slack.send("slash_commands", slash("whoami", user="UBOB", hook=slack.hook_url), accepts=True)
            assert "slack:T1/UBOB" in block_text((await slack.ack(sent))["payload"])

            sent = await slack.send(
                "slash_commands", slash("add Crossed --category 1", user="UBOB", hook=slack.hook_url), accepts=True
            )
            told = json.dumps((await slack.ack(sent))["payload"])
            found = APPROVE.search(told)
            assert found is not None and f"It is posted in matrix:{ops}" in told, told
            code = found[1]
            await owner.wait_for(
                ops,
                lambda evs: any(code in str(e["content"].get("body", "")) for e in from_sender(evs, petbot.user_id)),
            )
            approved = await ask(owner, ops, f"!approve {code}", bot_id=petbot.user_id)
            assert str(approved["body"]).startswith("Added pet "), approved
        finally:
            if proc is not None and proc.returncode is None:
                proc.send_signal(signal.SIGTERM)
                await asyncio.wait_for(proc.wait(), 60)
            await owner.aclose()
    log = (tmp_path / "bot.stderr").read_text(encoding="utf-8", errors="replace")
    assert proc is not None and proc.returncode == 0, log[-3000:]
    assert "MatrixTransport" in log and "SlackTransport" in log and APP_TOKEN not in log and "Traceback" not in log
    audit = [json.loads(line) for line in config.audit_log.read_text(encoding="utf-8").splitlines()]
    [done] = [line for line in audit if line.get("outcome") == "ok" and line.get("pending_code") == code]
    assert done["actor"] == "slack:T1/UBOB" and done["approver"] == olga.user_id


async def _logged(path: Path, text: str, proc: asyncio.subprocess.Process) -> None:
    """Waits until the bot's log holds ``text``; fails if the bot exits first."""
    async with asyncio.timeout(90):
        while text not in path.read_text(encoding="utf-8", errors="replace"):
            assert proc.returncode is None, path.read_text(encoding="utf-8", errors="replace")[-3000:]
            await asyncio.sleep(0.1)  # polling a log file, not a synchronisation

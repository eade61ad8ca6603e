"""``petstore bot slack --socket-mode``: slash commands, buttons and events over Slack's Socket Mode.

Slack cannot be reached from here: the bot's slack_sdk Socket Mode client talks to a server written to Slack's
published Socket Mode protocol (slack_api_server: ``apps.connections.open`` returning a WebSocket URL, ``hello``,
envelopes with ``envelope_id`` and their acknowledgements, ``disconnect`` and the new connection that follows), on
loopback, in front of the real app on the real sandbox service.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from petstore_bot.slack import SlackFace, post_json
from petstore_bot.slack_render import CONFIRM_ACTION
from petstore_bot.slack_socket import SocketMode
from petstore_bot.slack_web import SlackWebError

from .conftest import Bot
from .slack_api_server import APP_TOKEN, BOT_TOKEN, BOT_USER, SlackServer, face_on_server, slack_server
from .slack_support import block_text, buttons, press_payload

ALICE, BOB = "UALICE", "UBOB"
OPERATORS, VIEWERS = [f"slack:T1/{ALICE}"], [f"slack:T1/{BOB}"]


def command(text: str, *, user: str, hook: str, n: int = 1) -> dict[str, str]:
    """A slash_commands envelope's payload, as Slack sends it."""
    return {
        "token": "legacy",
        "team_id": "T1",
        "channel_id": "C1",
        "user_id": user,
        "command": "/pets",
        "text": text,
        "response_url": f"{hook}/cmd{n}",
        "trigger_id": f"trigger-{n}-{text}",
    }


def mention(text: str, *, user: str, event_id: str) -> dict[str, Any]:
    event = {"type": "app_mention", "user": user, "text": f"<@{BOT_USER}> {text}", "channel": "C1", "ts": "1.2"}
    return {"team_id": "T1", "type": "event_callback", "event_id": event_id, "event": event}


@dataclass
class Rig:
    bot: Bot
    face: SlackFace
    slack: SlackServer


@pytest.fixture
async def socket_rig(make_bot: Callable[..., Bot]) -> AsyncIterator[Callable[..., Any]]:
    async with contextlib.AsyncExitStack() as stack:

        async def start(*, extra: str = "", ack_after: float = 1.5) -> Rig:
            bot = make_bot(extra, roles=(OPERATORS, VIEWERS), platform="slack", prefix="/pets ")
            slack, face = await face_on_server(stack, bot.core, ack_after=ack_after)
            stop = asyncio.Event()
            task = asyncio.create_task(SocketMode(face=face, app_token=APP_TOKEN, api_url=slack.api_url).run(stop))

            async def finish() -> None:
                stop.set()
                await task

            stack.push_async_callback(finish)
            await slack.wait_for(lambda: slack.connections)
            return Rig(bot=bot, face=face, slack=slack)

        yield start


async def test_a_slash_command_is_acknowledged_with_its_answer(socket_rig: Callable[..., Any]) -> None:
    r: Rig = await socket_rig()
    assert r.slack.calls == ["auth.test", "apps.connections.open"]  # both below [bot.slack] api_url
    sent = await r.slack.send(
        "slash_commands", command("list sold --limit 2", user=BOB, hook=r.slack.hook_url), accepts=True
    )
    ack = await r.slack.ack(sent)
    assert ack["envelope_id"] == sent and ack["payload"]["response_type"] == "ephemeral"
    assert "Goldie" in block_text(ack["payload"]) and r.slack.hooks == []


async def test_a_slow_command_is_acknowledged_at_once_and_answered_later(socket_rig: Callable[..., Any]) -> None:
    r: Rig = await socket_rig(ack_after=0.05)
    sent = await r.slack.send("slash_commands", command("sleep 0.5", user=BOB, hook=r.slack.hook_url), accepts=True)
    ack = await r.slack.ack(sent)
    assert block_text(ack["payload"]) == "```\nWorking on it: sleep 0.5\n```"
    later = await r.slack.wait_for(lambda: r.slack.hooks)
    assert block_text(later[0]) == "```\n(paused 0.5 s)\n```"


async def test_confirm_over_socket_mode_writes_once_and_replaces_the_prompt(socket_rig: Callable[..., Any]) -> None:
    r: Rig = await socket_rig()
    before = await r.bot.pet_count()
    sent = await r.slack.send(
        "slash_commands", command("add Sock --category 2", user=ALICE, hook=r.slack.hook_url), accepts=True
    )
    prompt = (await r.slack.ack(sent))["payload"]
    code = buttons(prompt)[CONFIRM_ACTION]
    press = press_payload(CONFIRM_ACTION, code, user=ALICE, team="T1", channel="C1", prompt=prompt)
    press["response_url"] = f"{r.slack.hook_url}/press"
    pressed = await r.slack.send("interactive", press)
    assert await r.slack.ack(pressed) == {"envelope_id": pressed}
    shown, replaced = await r.slack.wait_for(lambda: r.slack.hooks[:2] if len(r.slack.hooks) >= 2 else None)
    assert shown["response_type"] == "in_channel" and "Sock" in block_text(shown)
    assert replaced["replace_original"] is True and buttons(replaced) == {} and "Confirmed" in block_text(replaced)
    assert await r.bot.pet_count() == before + 1


async def test_a_mention_over_socket_mode_is_answered_once_even_when_retried(socket_rig: Callable[..., Any]) -> None:
    r: Rig = await socket_rig(extra="confirm_writes = false")
    before = await r.bot.pet_count()
    event = mention("add Twice --category 1", user=ALICE, event_id="Ev1")
    first = await r.slack.send("events_api", event)
    assert await r.slack.ack(first) == {"envelope_id": first}
    posted = await r.slack.wait_for(lambda: r.slack.messages)
    assert posted[0]["channel"] == "C1" and "Added pet" in block_text(posted[0])
    retried = await r.slack.send("events_api", event, retry=1)
    assert await r.slack.ack(retried) == {"envelope_id": retried}
    await r.slack.send("events_api", mention("whoami", user=ALICE, event_id="Ev2"))
    await r.slack.wait_for(lambda: len(r.slack.messages) >= 2)
    await r.face.drain()
    assert len(r.slack.messages) == 2 and await r.bot.pet_count() == before + 1


async def test_a_disconnect_leads_to_a_new_connection(
    socket_rig: Callable[..., Any], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    r: Rig = await socket_rig()
    await r.slack.disconnect()
    await r.slack.wait_for(lambda: len(r.slack.connections) >= 2)
    assert r.slack.calls.count("apps.connections.open") == 2
    sent = await r.slack.send("slash_commands", command("whoami", user=BOB, hook=r.slack.hook_url), accepts=True)
    assert "slack:T1/UBOB" in block_text((await r.slack.ack(sent))["payload"])
    assert APP_TOKEN not in caplog.text and BOT_TOKEN not in caplog.text


async def test_a_refused_app_token_is_one_line() -> None:
    async with slack_server() as slack:
        face = SlackFace(core=None, flavour="slack", post=post_json)  # type: ignore[arg-type]
        socket = SocketMode(face=face, app_token="xapp-wrong", api_url=slack.api_url)
        with pytest.raises(SlackWebError, match=r"^apps.connections.open: Slack answered 'invalid_auth'$"):
            await socket.run(asyncio.Event())


async def test_the_command_connects_with_the_app_token_from_the_environment(tmp_path: Path) -> None:
    """The real ``petstore bot slack --socket-mode`` process: tokens from the environment (never the command line,
    never in its log), api_url from the config; a slash command over the connection is answered; SIGTERM ends it."""
    async with slack_server() as slack:
        config = tmp_path / "bot.toml"
        config.write_text(f'[bot]\nrate_limit = "off"\n[bot.slack]\napi_url = "{slack.api_url}"\n', encoding="utf-8")
        env = {k: v for k, v in os.environ.items() if not k.startswith("PETSTORE_")}
        env.update(XDG_CONFIG_HOME=str(tmp_path / "config"), XDG_DATA_HOME=str(tmp_path / "data"))
        env.update(PETSTORE_BOT__SLACK__APP_TOKEN=APP_TOKEN, PETSTORE_BOT__SLACK__BOT_TOKEN=BOT_TOKEN)
        argv = ["-m", "petstore_cli", "--config", str(config), "bot", "slack", "--socket-mode", "-v"]
        proc = await asyncio.create_subprocess_exec(sys.executable, *argv, env=env, stderr=asyncio.subprocess.PIPE)
        try:
            await slack.wait_for(lambda: slack.connections or proc.returncode is not None, timeout=60)
            sent = await slack.send("slash_commands", command("whoami", user=BOB, hook=slack.hook_url), accepts=True)
            assert "slack:T1/UBOB" in block_text((await slack.ack(sent))["payload"])
        finally:
            if proc.returncode is None:
                proc.send_signal(signal.SIGTERM)
            _, stderr = await asyncio.wait_for(proc.communicate(), 30)
        log = stderr.decode()
        assert proc.returncode == 0, log
        assert "Socket Mode" in log and APP_TOKEN not in log and BOT_TOKEN not in log and "Traceback" not in log


async def test_the_command_with_a_refused_app_token_exits_1_with_one_line(tmp_path: Path) -> None:
    async with slack_server() as slack:
        config = tmp_path / "bot.toml"
        config.write_text(f'[bot.slack]\napi_url = "{slack.api_url}"\n', encoding="utf-8")
        env = {k: v for k, v in os.environ.items() if not k.startswith("PETSTORE_")}
        env.update(
            XDG_CONFIG_HOME=str(tmp_path), XDG_DATA_HOME=str(tmp_path), PETSTORE_BOT__SLACK__APP_TOKEN="xapp-revoked"
        )
        argv = ["-m", "petstore_cli", "--config", str(config), "bot", "slack", "--socket-mode"]
        proc = await asyncio.create_subprocess_exec(sys.executable, *argv, env=env, stderr=asyncio.subprocess.PIPE)
        _, stderr = await asyncio.wait_for(proc.communicate(), 60)
    last = stderr.decode().strip().splitlines()[-1]
    assert proc.returncode == 1 and last == "petstore: slack: apps.connections.open: Slack answered 'invalid_auth'"
    assert "xapp-revoked" not in stderr.decode() and "Traceback" not in stderr.decode()


@pytest.mark.parametrize(
    ("flags", "env", "says"),
    [
        (["--socket-mode"], {}, "[bot.slack] app_token is not set"),
        (["--socket-mode", "--mattermost"], {}, "--socket-mode is Slack's"),
        (["--socket-mode"], {"PETSTORE_BOT__SLACK__APP_TOKEN": "xoxb-not-an-app-token"}, "Slack's start with xapp-"),
    ],
)
async def test_socket_mode_settings_that_cannot_work_are_one_line(
    tmp_path: Path, flags: list[str], env: dict[str, str], says: str
) -> None:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("PETSTORE_")}
    environ.update(XDG_CONFIG_HOME=str(tmp_path), XDG_DATA_HOME=str(tmp_path), PETSTORE_BOT__MATTERMOST__TOKEN="t")
    environ.update(PETSTORE_BOT__MATTERMOST__URL="http://127.0.0.1:9", **env)
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "petstore_cli", "bot", "slack", *flags, env=environ, stderr=asyncio.subprocess.PIPE
    )
    _, stderr = await asyncio.wait_for(proc.communicate(), 60)
    lines = stderr.decode().strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and says in lines[0], lines
    assert "xoxb-not-an-app-token" not in lines[0]


def test_the_token_file_is_read_and_both_ways_at_once_are_refused(tmp_path: Path) -> None:
    from petstore_api.errors import ConfigError
    from petstore_bot.settings import BotSettings
    from petstore_bot.slack_transport import slack_token

    token = tmp_path / "app-token"
    token.write_text("# the app-level token\nxapp-1-from-a-file\n", encoding="utf-8")
    token.chmod(0o600)
    bot = BotSettings.model_validate({"slack": {"app_token_file": str(token)}})
    assert slack_token(bot, "app_token", where="x", shape="xapp-") == "xapp-1-from-a-file"
    both = BotSettings.model_validate({"slack": {"app_token_file": str(token), "app_token": "xapp-2"}})
    with pytest.raises(ConfigError, match="both"):
        slack_token(both, "app_token", where="x", shape="xapp-")

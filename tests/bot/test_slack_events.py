"""The Events API over HTTP: mentions of the bot and DMs with it, answered with chat.postMessage.

Slack cannot be reached from here: the tests send what Slack sends (v0-signed ``url_verification`` and
``event_callback`` bodies, retries with ``X-Slack-Retry-Num``, block_actions presses) over loopback to the real app
on the real sandbox service, and the app's Web API calls go to a server written to Slack's published Web API
(slack_api_server), through slack_sdk's own client.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import socket
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest

from petstore_bot.slack import SlackFace, post_json
from petstore_bot.slack_events import typed_text
from petstore_bot.slack_render import CANCEL_ACTION, CONFIRM_ACTION
from petstore_bot.slack_verify import SlackSignature

from .conftest import Bot
from .slack_api_server import BOT_TOKEN, BOT_USER, SlackServer, face_on_server, slack_server
from .slack_support import SECRET, block_text, buttons, press_payload, serving, sign

ALICE, OSCAR, BOB = "UALICE", "UOSCAR", "UBOB"
OPERATORS, VIEWERS = [f"slack:T1/{ALICE}", f"slack:T1/{OSCAR}"], [f"slack:T1/{BOB}"]


def event_body(n: int, text: str, *, user: str, kind: str = "app_mention", channel: str = "C1", **extra: Any) -> bytes:
    """The ``n``-th event_callback body as Slack sends it."""
    event = {"type": kind, "user": user, "text": text, "channel": channel, "ts": f"{n}.000200", **extra}
    if kind == "message":
        event.setdefault("channel_type", "im")
    body = {
        "token": "legacy-verification-token",
        "team_id": "T1",
        "api_app_id": "A1",
        "type": "event_callback",
        "event_id": f"Ev{n:08d}",
        "event_time": 1_700_000_000 + n,
        "event": event,
    }
    return json.dumps(body).encode()


@dataclass
class Events:
    bot: Bot
    face: SlackFace
    slack: SlackServer
    http: httpx.AsyncClient
    base: str
    n: int = 0

    def event(self, text: str, *, user: str, kind: str = "app_mention", channel: str = "C1", **extra: Any) -> bytes:
        """An event_callback body as Slack sends it (a new event_id each)."""
        self.n += 1
        return event_body(self.n, text, user=user, kind=kind, channel=channel, **extra)

    async def post(self, body: bytes, **headers: str) -> httpx.Response:
        signed = {**sign(body), "Content-Type": "application/json", **headers}
        return await self.http.post(f"{self.base}/slack/events", content=body, headers=signed)

    async def reply(self, count: int = 1) -> dict[str, Any]:
        """The ``count``-th chat.postMessage body."""
        found: list[dict[str, Any]] = await self.slack.wait_for(lambda: len(self.slack.messages) >= count)
        return self.slack.messages[count - 1] if found else {}

    async def press(
        self, action: str, code: str, *, user: str, prompt: dict[str, Any], hook: str = "press"
    ) -> httpx.Response:
        payload = press_payload(action, code, user=user, team="T1", channel="C1", prompt=prompt)
        payload["response_url"] = f"{self.slack.hook_url}/{hook}{self.n}"
        body = urlencode({"payload": json.dumps(payload)}).encode()
        return await self.http.post(f"{self.base}/slack/interactions", content=body, headers=sign(body))


@pytest.fixture
async def events(make_bot: Callable[..., Bot]) -> AsyncIterator[Callable[..., Any]]:
    async with contextlib.AsyncExitStack() as stack:

        async def start(*, extra: str = "") -> Events:
            bot = make_bot(extra, roles=(OPERATORS, VIEWERS), platform="slack", prefix="/pets ")
            slack, face = await face_on_server(stack, bot.core, signature=SlackSignature(SECRET))
            base = await stack.enter_async_context(serving(face.app()))
            http = await stack.enter_async_context(httpx.AsyncClient(timeout=30))
            return Events(bot=bot, face=face, slack=slack, http=http, base=base)

        yield start


async def test_the_url_check_is_answered_with_its_challenge_when_signed(events: Callable[..., Any]) -> None:
    e: Events = await events()
    body = json.dumps(
        {"token": "t", "challenge": "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P", "type": "url_verification"}
    ).encode()
    answer = await e.post(body)
    assert answer.status_code == 200 and answer.json() == {
        "challenge": "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P"
    }
    forged = await e.http.post(
        f"{e.base}/slack/events",
        content=body,
        headers={**sign(body, secret="other"), "Content-Type": "application/json"},
    )
    assert forged.status_code == 401 and forged.json() == {"error": "unauthorized"}
    assert e.slack.calls == ["auth.test"]


async def test_a_mention_is_a_command_answered_in_the_channel_and_in_its_thread(events: Callable[..., Any]) -> None:
    e: Events = await events()
    assert (await e.post(e.event(f"<@{BOT_USER}> list sold --limit 2", user=BOB))).status_code == 200
    listed = await e.reply()
    assert listed["channel"] == "C1" and "thread_ts" not in listed
    assert "Goldie" in block_text(listed) and listed["text"].startswith("id  name")
    await e.post(e.event(f"<@{BOT_USER}>: get 1", user=BOB, thread_ts="7.000100"))
    got = await e.reply(2)
    assert got["thread_ts"] == "7.000100" and "Rex" in block_text(got)
    await e.post(e.event(f"<@{BOT_USER}>", user=BOB))  # the mention alone: help, its rules those of mentions too
    helped = block_text(await e.reply(3))
    assert "/pets list [STATUS]" in helped
    assert helped.removesuffix("```").splitlines()[-1] == (
        "Start a command with /pets (/pets list sold), or name me first (@petbot: list sold); "
        "in a direct message the command alone works (list sold). /pets help COMMAND explains one."
    )


async def test_a_dm_takes_the_bare_command_or_the_slash_command(events: Callable[..., Any]) -> None:
    e: Events = await events()
    await e.post(e.event("whoami", user=BOB, kind="message", channel="D1"))
    first = await e.reply()
    assert first["channel"] == "D1" and "slack:T1/UBOB" in block_text(first)
    await e.post(e.event("/pets get 1", user=BOB, kind="message", channel="D1"))
    assert "Rex" in block_text(await e.reply(2))


async def test_its_own_messages_other_bots_edits_and_channel_chatter_are_ignored(events: Callable[..., Any]) -> None:
    e: Events = await events()
    ignored = [
        e.event("whoami", user=BOT_USER, kind="message", channel="D1"),  # the bot's own reply in a DM
        e.event("whoami", user="UOTHERBOT", kind="message", channel="D1", subtype="bot_message", bot_id="B2"),
        e.event("whoami", user="UAPP", kind="message", channel="D1", bot_id="B3"),
        e.event("whoami", user=BOB, kind="message", channel="D1", subtype="message_changed"),
        e.event("whoami", user=BOB, kind="message", channel="C1", channel_type="channel"),  # not addressed
        e.event("<@UOTHER> whoami", user=BOB),  # an app_mention must mention this bot
        e.event("whoami", user=BOB, kind="reaction_added"),
    ]
    for body in ignored:
        assert (await e.post(body)).status_code == 200
    await e.post(e.event("get 1", user=BOB, kind="message", channel="D1"))
    assert "Rex" in block_text(await e.reply()) and len(e.slack.messages) == 1


async def test_a_retried_event_is_not_run_twice(events: Callable[..., Any], caplog: pytest.LogCaptureFixture) -> None:
    """The same signed event sent again with X-Slack-Retry-Num (Slack's retry, over loopback): one pet, one reply,
    one audit line; the log says it was a repeat."""
    caplog.set_level(logging.INFO, logger="petstore_bot.slack")
    e: Events = await events(extra="confirm_writes = false")
    before = await e.bot.pet_count()
    body = e.event(f"<@{BOT_USER}> add Echo --category 2", user=ALICE)
    assert (await e.post(body)).status_code == 200
    assert "Added pet" in block_text(await e.reply())
    retried = await e.post(body, **{"X-Slack-Retry-Num": "1", "X-Slack-Retry-Reason": "http_timeout"})
    assert retried.status_code == 200
    await e.post(e.event(f"<@{BOT_USER}> whoami", user=ALICE))  # answered after the retry was dropped
    assert "slack:T1/UALICE" in block_text(await e.reply(2))
    assert len(e.slack.messages) == 2 and await e.bot.pet_count() == before + 1
    assert len(e.bot.audit_lines()) == 1
    assert "(retry 1, http_timeout): already taken, not run twice" in caplog.text


async def test_text_from_chat_is_taken_as_typed_and_shown_literally(events: Callable[..., Any]) -> None:
    """Slack's mrkdwn in an event (<!channel>, <@U123>, links, &lt;) is read back as the person typed it, and the
    reply escapes it again: nothing in it pings anyone or links anywhere."""
    e: Events = await events(extra="confirm_writes = false")
    typed = '"<!channel> <@U123|ann> &lt;b&gt; *x* <http://evil.example|click>" --category 1'
    await e.post(e.event(f"<@{BOT_USER}> add {typed}", user=ALICE))
    created = await e.reply()
    shown = block_text(created) + created["text"]
    assert "@channel @ann &lt;b&gt; *x* click" in shown
    assert "<" not in shown and ">" not in shown


@pytest.mark.parametrize(
    ("mrkdwn", "typed"),
    [
        ("<!here> <!subteam^S1|@ops> <#C1|general> <@U1>", "@here @ops #general @U1"),
        (
            "<https://x.example/a?b=1&amp;c=2> <mailto:a@b.example|a@b.example>",
            "https://x.example/a?b=1&c=2 a@b.example",
        ),
        ("&lt;@U1&gt; &amp;lt;", "<@U1> &lt;"),
    ],
)
def test_slack_text_is_read_back_as_typed(mrkdwn: str, typed: str) -> None:
    assert typed_text(mrkdwn) == typed


async def test_a_prompt_in_the_channel_is_settled_by_its_askers_press_alone(events: Callable[..., Any]) -> None:
    """A write asked for in a mention: its prompt is a channel message, so only the asker's Confirm replaces it
    (in place, for the channel, no buttons left); anyone else's press is told to them alone and replaces nothing."""
    e: Events = await events()
    before = await e.bot.pet_count()
    await e.post(e.event(f"<@{BOT_USER}> add Mention --category 2", user=ALICE))
    prompt = await e.reply()
    code = buttons(prompt)[CONFIRM_ACTION]
    await e.press(CANCEL_ACTION, code, user=OSCAR, prompt=prompt)
    refused = await e.slack.wait_for(lambda: e.slack.hooks)
    assert refused[0]["response_type"] == "ephemeral" and "replace_original" not in refused[0]
    await e.press(CONFIRM_ACTION, code, user=ALICE, prompt=prompt)
    await e.slack.wait_for(lambda: len(e.slack.hooks) >= 2)
    await e.face.drain()
    assert len(e.slack.hooks) == 2
    done = e.slack.hooks[1]
    assert done["replace_original"] is True and done["response_type"] == "in_channel" and buttons(done) == {}
    assert "Added pet" in block_text(done) and await e.bot.pet_count() == before + 1


async def test_when_the_channel_refuses_the_write_the_ephemeral_prompt_becomes_the_result(
    events: Callable[..., Any],
) -> None:
    """An ephemeral prompt (as a slash command's) confirmed where the channel post is refused (response_url answers
    404, as Slack does for a channel the app cannot post to): the prompt is replaced by the result itself, so the
    asker still sees what was written."""
    e: Events = await events()
    await e.post(e.event(f"<@{BOT_USER}> add Lonely --category 2", user=ALICE))
    prompt = {**(await e.reply()), "response_type": "ephemeral"}
    await e.press(CONFIRM_ACTION, buttons(prompt)[CONFIRM_ACTION], user=ALICE, prompt=prompt, hook="no-channel")
    refused, replaced = await e.slack.wait_for(lambda: e.slack.hooks[:2] if len(e.slack.hooks) >= 2 else None)
    assert refused["response_type"] == "in_channel" and replaced["replace_original"] is True
    assert "Added pet" in block_text(replaced) and buttons(replaced) == {}


async def test_without_a_bot_token_events_are_acknowledged_and_the_log_says_why_once(
    make_bot: Callable[..., Bot], caplog: pytest.LogCaptureFixture
) -> None:
    bot = make_bot(roles=(OPERATORS, VIEWERS), platform="slack", prefix="/pets ")
    face = SlackFace(core=bot.core, flavour="slack", post=post_json, signature=SlackSignature(SECRET))
    async with serving(face.app()) as base, httpx.AsyncClient() as http:
        e = Events(bot=bot, face=face, slack=SlackServer(), http=http, base=base)
        for _ in range(3):
            assert (await e.post(e.event(f"<@{BOT_USER}> whoami", user=BOB))).status_code == 200
    assert caplog.text.count("bot_token is not set: mentions and DMs are not answered") == 1


async def test_the_command_answers_a_mention_with_the_bot_token_from_its_environment(tmp_path: Path) -> None:
    """The real ``petstore bot slack`` process over HTTP: auth.test and chat.postMessage go below [bot.slack] api_url
    (the stand-in Slack server), the bot token comes from the environment and is never in its log."""
    async with slack_server() as slack:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        config = tmp_path / "bot.toml"
        config.write_text(f'[bot]\nrate_limit = "off"\n[bot.slack]\napi_url = "{slack.api_url}"\n', encoding="utf-8")
        env = {k: v for k, v in os.environ.items() if not k.startswith("PETSTORE_")}
        env.update(XDG_CONFIG_HOME=str(tmp_path), XDG_DATA_HOME=str(tmp_path))
        env.update(PETSTORE_BOT__SLACK__SIGNING_SECRET=SECRET, PETSTORE_BOT__SLACK__BOT_TOKEN=BOT_TOKEN)
        argv = ["-m", "petstore_cli", "--config", str(config), "bot", "slack", "--port", str(port)]
        proc = await asyncio.create_subprocess_exec(sys.executable, *argv, env=env, stderr=asyncio.subprocess.PIPE)
        base = f"http://127.0.0.1:{port}"
        try:
            async with httpx.AsyncClient(timeout=30) as http:
                await slack.wait_for(lambda: "auth.test" in slack.calls or proc.returncode is not None, timeout=60)
                while proc.returncode is None:  # the port opens just after auth.test
                    with contextlib.suppress(httpx.TransportError):
                        if (await http.get(f"{base}/healthz")).status_code == 200:
                            break
                    await asyncio.sleep(0.05)
                body = event_body(1, f"<@{BOT_USER}> whoami", user=BOB)
                signed = {**sign(body), "Content-Type": "application/json"}
                assert (await http.post(f"{base}/slack/events", content=body, headers=signed)).status_code == 200
            posted = await slack.wait_for(lambda: slack.messages)
        finally:
            if proc.returncode is None:
                proc.send_signal(signal.SIGTERM)
            _, stderr = await asyncio.wait_for(proc.communicate(), 30)
    assert posted[0]["channel"] == "C1" and "slack:T1/UBOB" in block_text(posted[0])
    log = stderr.decode()
    assert proc.returncode == 0, log
    assert BOT_TOKEN not in log and SECRET not in log and "Traceback" not in log

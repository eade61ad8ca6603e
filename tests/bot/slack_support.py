"""The Slack face on a real loopback socket (in-process, or the real ``petstore bot slack`` process), a capture server
for response_url, and signed test requests."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

SECRET = "test-signing-secret-0123456789abcdef"
TOKEN = "mattermost-command-token-42"


class _Server(uvicorn.Server):
    """uvicorn without its signal handlers: in a test it would restore a handler of an event loop that has ended
    (pytest-asyncio runs set-up, test and tear-down in separate runs), leaving SIGINT broken for later tests."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


@contextlib.asynccontextmanager
async def serving(app: Any) -> AsyncIterator[str]:
    """``app`` on 127.0.0.1 (a free port) in this event loop; yields its base URL; stopped at exit."""
    server = _Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="error", lifespan="on"))
    task = asyncio.create_task(server.serve())
    while not server.started:
        if task.done():
            task.result()
        await asyncio.sleep(0.005)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await task


@dataclass
class Capture:
    """A stand-in for Slack's response_url endpoint: records every JSON body posted to it."""

    posts: list[dict[str, Any]] = field(default_factory=list)
    arrived: asyncio.Event = field(default_factory=asyncio.Event)

    def app(self) -> Starlette:
        async def hook(request: Request) -> Response:
            self.posts.append(json.loads(await request.body()))
            self.arrived.set()
            return Response("ok")

        return Starlette(routes=[Route("/hook/{rest:path}", hook, methods=["POST"])])

    async def next_post(self, timeout: float = 20.0) -> dict[str, Any]:
        await asyncio.wait_for(self.arrived.wait(), timeout)
        self.arrived.clear()
        return self.posts[-1]

    async def until(self, count: int, timeout: float = 20.0) -> list[dict[str, Any]]:
        """Every post so far, once there are at least ``count``."""
        async with asyncio.timeout(timeout):
            while len(self.posts) < count:
                self.arrived.clear()
                await self.arrived.wait()
        self.arrived.clear()
        return self.posts


def sign(body: bytes, *, secret: str = SECRET, timestamp: int | str | None = None) -> dict[str, str]:
    """Slack's headers for ``body``: its v0 signature with ``secret`` at ``timestamp`` (now by default)."""
    ts = str(int(time.time()) if timestamp is None else timestamp)
    digest = hmac.new(secret.encode(), f"v0:{ts}:".encode() + body, hashlib.sha256).hexdigest()
    return {
        "X-Slack-Request-Timestamp": ts,
        "X-Slack-Signature": f"v0={digest}",
        "Content-Type": "application/x-www-form-urlencoded",
    }


@dataclass
class SlackClient:
    """Sends what Slack would send, signed, to the face over loopback."""

    http: httpx.AsyncClient
    base: str
    hook: str
    team: str = "T1"
    channel: str = "C1"
    _n: int = 0

    def command_body(self, text: str, *, user: str, **extra: str) -> bytes:
        self._n += 1
        form = {
            "command": "/pets",
            "text": text,
            "user_id": user,
            "user_name": user.lower(),
            "team_id": self.team,
            "channel_id": self.channel,
            "response_url": f"{self.hook}/hook/cmd{self._n}",
            "trigger_id": f"trigger-{self._n}-{time.monotonic_ns()}",
            **extra,
        }
        return urlencode(form).encode()

    async def command(self, text: str, *, user: str, **extra: str) -> httpx.Response:
        body = self.command_body(text, user=user, **extra)
        return await self.http.post(f"{self.base}/slack/commands", content=body, headers=sign(body))

    def press_body(
        self, action: str, code: str, *, user: str, team: str | None = None, prompt: dict[str, Any] | None = None
    ) -> bytes:
        self._n += 1
        payload = press_payload(action, code, user=user, team=team or self.team, channel=self.channel, prompt=prompt)
        payload["response_url"] = f"{self.hook}/hook/press{self._n}"
        return urlencode({"payload": json.dumps(payload)}).encode()

    async def press(
        self, action: str, code: str, *, user: str, prompt: dict[str, Any] | None = None, team: str | None = None
    ) -> httpx.Response:
        """``prompt``: the message with the buttons (its block id and whether it was ephemeral go with the press);
        ``team``: the team the press comes from (default: the client's)."""
        body = self.press_body(action, code, user=user, team=team, prompt=prompt)
        return await self.http.post(f"{self.base}/slack/interactions", content=body, headers=sign(body))


def press_payload(
    action: str, code: str, *, user: str, team: str, channel: str, prompt: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A block_actions payload as Slack sends it for a press on ``prompt`` (an ephemeral one unless its
    ``response_type`` is in_channel or it has none, as a chat.postMessage body has not)."""
    block_id = next((b["block_id"] for b in (prompt or {}).get("blocks", []) if b["type"] == "actions"), None)
    ephemeral = prompt is None or prompt.get("response_type") == "ephemeral"
    element: dict[str, Any] = {"action_id": action, "value": code, "action_ts": str(time.time())}
    if block_id is not None:
        element["block_id"] = block_id
    return {
        "type": "block_actions",
        "user": {"id": user, "team_id": team},
        "team": {"id": team},
        "channel": {"id": channel},
        "container": {"type": "message", "channel_id": channel, "is_ephemeral": ephemeral},
        "trigger_id": f"press-{time.monotonic_ns()}",
        "response_url": "",
        "actions": [element],
    }


def block_text(payload: dict[str, Any]) -> str:
    """The text of every section block of a Block Kit payload, joined."""
    return "\n".join(b["text"]["text"] for b in payload.get("blocks", []) if b["type"] == "section")


def buttons(payload: dict[str, Any]) -> dict[str, str]:
    return {
        e["action_id"]: e["value"] for b in payload.get("blocks", []) if b["type"] == "actions" for e in b["elements"]
    }


@dataclass
class BotProcess:
    """A real ``petstore bot slack [--mattermost]`` process on a free loopback port, its stderr in a file."""

    base: str
    stderr: Path
    audit: Path
    proc: subprocess.Popen[bytes]
    _read: int = 0

    def new_log(self) -> str:
        """What the process wrote on stderr since the last call."""
        text = self.stderr.read_text(encoding="utf-8", errors="replace")
        new, self._read = text[self._read :], len(text)
        return new


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def bot_process(
    tmp: Path,
    *,
    mattermost: bool = False,
    config: str = "",
    env: dict[str, str] | None = None,
    args: Sequence[str] = (),
) -> Iterator[BotProcess]:
    """Start the bot on the sandbox (rate limit off unless ``config`` sets one; ``env``: more of its environment;
    ``args``: more of its command line, e.g. ``-v``), wait for /healthz, SIGTERM at exit."""
    port = _free_port()
    toml = tmp / "bot.toml"
    rate = "" if "rate_limit" in config else 'rate_limit = "off"\n'
    toml.write_text(f"[bot]\n{rate}{config}\n", encoding="utf-8")
    extra, env = env or {}, {k: v for k, v in os.environ.items() if not k.startswith("PETSTORE_")}
    env.update(extra)
    env.update(XDG_CONFIG_HOME=str(tmp / "config"), XDG_DATA_HOME=str(tmp / "data"))
    env.update(PETSTORE_BOT__SLACK__SIGNING_SECRET=SECRET, PETSTORE_BOT__MATTERMOST__TOKEN=TOKEN)
    env.update(PETSTORE_BOT__MATTERMOST__URL="http://127.0.0.1:9")
    argv = [sys.executable, "-m", "petstore_cli", "--config", str(toml), "bot", "slack", "--port", str(port), *args]
    stderr = tmp / "stderr.log"
    with stderr.open("wb") as err:
        proc = subprocess.Popen([*argv, *(["--mattermost"] if mattermost else [])], env=env, stderr=err)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        with httpx.Client() as http:  # one client: each new one builds a TLS context (~40 ms of CPU)
            while True:
                try:
                    if http.get(f"{base}/healthz").status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"petstore bot slack did not start: {stderr.read_text(errors='replace')}")
                time.sleep(0.05)
        yield BotProcess(base=base, stderr=stderr, audit=tmp / "data" / "petstore" / "audit.ndjson", proc=proc)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

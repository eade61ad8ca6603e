"""A stand-in for Slack's servers, written to Slack's published protocols (Slack cannot be reached from here).

- Web API (``POST <api>/auth.test``, ``chat.postMessage``, ``apps.connections.open``): bearer tokens checked as Slack
  checks them (``invalid_auth`` otherwise), JSON answers with ``ok``.
- Socket Mode (https://api.slack.com/apis/socket-mode): ``apps.connections.open`` with the app-level token returns a
  one-use ``wss`` URL (here ``ws://127.0.0.1``); on connecting, the server sends ``hello``; envelopes
  (``envelope_id``, ``type``, ``payload``, ``accepts_response_payload``, ``retry_attempt``) go out, and the app's
  acknowledgement (``envelope_id`` and an optional ``payload``) comes back; ``disconnect`` asks the app to open a new
  connection.
- response_url: ``POST /hook/...`` bodies are recorded (below ``/hook/no-channel``, one for the channel is refused
  with a 404, as for a channel the app cannot post to).

Everything runs on aiohttp's server in the test's event loop, on 127.0.0.1 and a free port.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import socket
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from aiohttp import WSMsgType, web

from petstore_bot.core import BotCore
from petstore_bot.slack import SlackFace, post_json
from petstore_bot.slack_web import SlackWeb

BOT_TOKEN = "xoxb-test-bot-token-0123456789"
APP_TOKEN = "xapp-1-test-app-token-0123456789"
BOT_USER = "UPETBOT"


@dataclass
class SlackServer:
    """What the app did: Web API calls, chat.postMessage bodies, response_url posts, Socket Mode connections."""

    base: str = ""
    calls: list[str] = field(default_factory=list)
    messages: list[dict[str, Any]] = field(default_factory=list)
    hooks: list[dict[str, Any]] = field(default_factory=list)
    connections: list[web.WebSocketResponse] = field(default_factory=list)
    acks: dict[str, dict[str, Any]] = field(default_factory=dict)
    changed: asyncio.Condition = field(default_factory=asyncio.Condition)
    _tickets: set[str] = field(default_factory=set)
    _ids: itertools.count[int] = field(default_factory=itertools.count)

    @property
    def api_url(self) -> str:
        return f"{self.base}/api/"

    @property
    def hook_url(self) -> str:
        return f"{self.base}/hook"

    def bot_env(self, *, service: str, api_key: str) -> dict[str, str]:
        """The environment of a ``petstore bot slack`` process on ``service`` whose Web API calls (the bot token's)
        come here."""
        return {
            "PETSTORE_BASE_URL": service,
            "PETSTORE_API_KEY": api_key,
            "PETSTORE_BOT__SLACK__BOT_TOKEN": BOT_TOKEN,
            "PETSTORE_BOT__SLACK__API_URL": self.api_url,
        }

    async def wait_for(self, check: Any, timeout: float = 20.0) -> Any:
        """The first truthy ``check()``, re-evaluated each time the server records something."""
        async with asyncio.timeout(timeout), self.changed:
            while not (found := check()):
                await self.changed.wait()
            return found

    async def _note(self) -> None:
        async with self.changed:
            self.changed.notify_all()

    # -- Socket Mode: what the test sends ---------------------------------------------------------------------

    async def send(self, kind: str, payload: dict[str, Any], *, retry: int = 0, accepts: bool = False) -> str:
        """An envelope on the newest connection; its envelope_id."""
        envelope_id = f"env-{next(self._ids)}"
        envelope = {
            "envelope_id": envelope_id,
            "type": kind,
            "payload": payload,
            "accepts_response_payload": accepts,
            "retry_attempt": retry,
            "retry_reason": "timeout" if retry else "",
        }
        await self.connections[-1].send_str(json.dumps(envelope))
        return envelope_id

    async def ack(self, envelope_id: str, timeout: float = 20.0) -> dict[str, Any]:
        """The app's acknowledgement of ``envelope_id``."""
        found: dict[str, Any] = await self.wait_for(lambda: self.acks.get(envelope_id), timeout)
        return found

    async def disconnect(self) -> None:
        """Ask the app to reconnect, as Slack does before it retires a connection."""
        message = {"type": "disconnect", "reason": "refresh_requested", "debug_info": {"host": "test"}}
        await self.connections[-1].send_str(json.dumps(message))

    # -- the server -------------------------------------------------------------------------------------------

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/api/{method}", self._api)
        app.router.add_get("/link/{ticket}", self._link)
        app.router.add_post("/hook/{rest:.*}", self._hook)
        return app

    async def _api(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        self.calls.append(method)
        token = request.headers.get("Authorization", "").removeprefix("Bearer ")
        wanted = APP_TOKEN if method == "apps.connections.open" else BOT_TOKEN
        if token != wanted:
            await self._note()
            return web.json_response({"ok": False, "error": "invalid_auth"})
        if method == "auth.test":
            answer: dict[str, Any] = {
                "ok": True,
                "user_id": BOT_USER,
                "user": "petbot",
                "bot_id": "BPETBOT",
                "team_id": "T1",
            }
        elif method == "chat.postMessage":
            body = await request.json()
            self.messages.append(body)
            answer = {"ok": True, "channel": body["channel"], "ts": f"{len(self.messages)}.000100"}
        elif method == "apps.connections.open":
            ticket = f"ticket-{next(self._ids)}"
            self._tickets.add(ticket)
            answer = {"ok": True, "url": f"{self.base.replace('http://', 'ws://')}/link/{ticket}"}
        else:
            answer = {"ok": False, "error": "unknown_method"}
        await self._note()
        return web.json_response(answer)

    async def _link(self, request: web.Request) -> web.StreamResponse:
        ticket = request.match_info["ticket"]
        if ticket not in self._tickets:  # a URL is good for one connection
            return web.Response(status=401, text="invalid ticket")
        self._tickets.discard(ticket)
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        self.connections.append(ws)
        hello = {"type": "hello", "num_connections": 1, "connection_info": {"app_id": "A1"}, "debug_info": {}}
        await ws.send_str(json.dumps(hello))
        await self._note()
        async for message in ws:
            if message.type == WSMsgType.TEXT:
                ack = json.loads(message.data)
                self.acks[ack["envelope_id"]] = ack
                await self._note()
        return ws

    async def _hook(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.hooks.append(body)
        await self._note()
        if "no-channel" in request.path and body.get("response_type") == "in_channel":  # a channel the app left
            return web.Response(status=404, text="channel_not_found")
        return web.Response(text="ok")


async def face_on_server(stack: AsyncExitStack, core: BotCore, **options: Any) -> tuple[SlackServer, SlackFace]:
    """A :class:`SlackServer` (stopped with ``stack``) and a Slack face whose Web API calls and response_url posts go
    to it, started (it knows the bot's user id); ``options``: more of SlackFace's."""
    slack = await stack.enter_async_context(slack_server())
    face = SlackFace(
        core=core,
        flavour="slack",
        post=post_json,
        response_origin=slack.base,
        web=SlackWeb(bot_token=BOT_TOKEN, api_url=slack.api_url),
        **options,
    )
    await face.start()
    return slack, face


@asynccontextmanager
async def slack_server() -> AsyncIterator[SlackServer]:
    """A :class:`SlackServer` on 127.0.0.1 (a free port), stopped at exit."""
    server = SlackServer()
    runner = web.AppRunner(server.app())
    await runner.setup()
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    await web.SockSite(runner, sock).start()
    server.base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    try:
        yield server
    finally:
        for ws in list(server.connections):
            await ws.close()
        await runner.cleanup()
        sock.close()

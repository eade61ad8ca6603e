"""The aiohttp server: the token gate, the app page, textual-serve's static client, one app per websocket.

No access log (aiohttp's would print query strings, and the first URL carries the token). The token is taken
from ``/?token=...`` once, put in an HttpOnly, SameSite=Strict cookie, and the browser sent back to ``/`` so
the token leaves the address bar; every page, asset and websocket without the cookie gets 401.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import textual_serve
from aiohttp import WSMsgType, web
from textual_serve.download_manager import DownloadManager

from .access import cookie_name, same_token
from .pages import APP_PAGE, NO_TOKEN, sessions_full
from .sessions import GRACE, AppProcess, SessionLimit

#: textual-serve's browser client: textual.js (xterm.js and the session protocol), its CSS and fonts.
STATIC = Path(textual_serve.__file__).resolve().parent / "static"
#: Seconds between websocket pings: a browser gone without closing its socket is noticed within two.
HEARTBEAT = 15.0
HTML = "text/html"


@dataclass(frozen=True, kw_only=True)
class WebOptions:
    """What ``petstore web`` serves: ``argv`` is the app command run for every session."""

    host: str
    port: int
    token: str
    argv: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict)
    max_sessions: int = 4
    grace: float = GRACE
    heartbeat: float = HEARTBEAT


class WebServer:
    def __init__(self, options: WebOptions) -> None:
        self.options = options
        self.sessions = SessionLimit(options.max_sessions)
        self.sockets: set[web.WebSocketResponse] = set()
        self.downloads = DownloadManager()
        self.port = options.port

    def application(self) -> web.Application:
        app = web.Application(middlewares=[self._guard])
        app.add_routes(
            [
                web.get("/", self.index),
                web.get("/ws", self.websocket),
                web.static("/static", STATIC, show_index=False),
            ]
        )
        return app

    @web.middleware
    async def _guard(self, request: web.Request, handler: Callable[[web.Request], object]) -> web.StreamResponse:
        token, cookie = self.options.token, cookie_name(self.port)
        if "token" in request.query:
            if request.path != "/" or not same_token(request.query.get("token"), token):
                return _refusal()
            response = web.Response(status=303, headers={"Location": "/"})  # the token leaves the address bar
            response.set_cookie(cookie, token, httponly=True, samesite="Strict", path="/")
            return response
        if not same_token(request.cookies.get(cookie), token):
            return _refusal()
        result = await handler(request)  # type: ignore[misc]
        assert isinstance(result, web.StreamResponse)
        return result

    async def index(self, request: web.Request) -> web.Response:
        if self.sessions.full:
            return web.Response(status=503, text=sessions_full(self.sessions.limit), content_type=HTML)
        return web.Response(text=APP_PAGE, content_type=HTML, headers={"Cache-Control": "no-store"})

    async def websocket(self, request: web.Request) -> web.StreamResponse:
        if self.sessions.full:
            return web.Response(status=503, text=sessions_full(self.sessions.limit), content_type=HTML)
        if not _same_origin(request):
            return web.Response(status=403, text="petstore web: a page of another site may not open a session")
        # autoclose off: the closing handshake is answered once the app has ended and its slot is free.
        socket = web.WebSocketResponse(heartbeat=self.options.heartbeat, autoclose=False)

        ending = False

        async def close() -> None:  # the app says it exits: end the session, unless it is being ended
            if not ending:
                await socket.close()

        app = AppProcess(
            self.options.argv,
            write_bytes=socket.send_bytes,
            write_str=socket.send_str,
            close=close,
            downloads=self.downloads,
            env=self.options.env,
            grace=self.options.grace,
        )
        self.sessions.apps.add(app)  # before any await: the limit holds against concurrent sockets
        self.sockets.add(socket)
        try:
            await socket.prepare(request)
            await app.start(_size(request, "width", 80), _size(request, "height", 24))
            await _relay(socket, app)
        finally:
            ending = True
            await app.stop()
            self.sessions.apps.discard(app)
            self.sockets.discard(socket)
            await socket.close()
        return socket

    async def close(self) -> None:
        """End every app (bounded by the grace period) and close every socket."""
        await self.sessions.stop_all()
        for socket in list(self.sockets):
            with contextlib.suppress(Exception):
                await socket.close(code=1001, message=b"server stopping")


def _same_origin(request: web.Request) -> bool:
    """The websocket comes from our own page: its Origin names this host (or the one a proxy says it forwards).

    The SameSite cookie already keeps other sites out; this also keeps out pages on other ports of this host,
    which browsers count as the same site."""
    origin = request.headers.get("Origin")
    if origin is None:  # not a browser
        return True
    host = origin.split("://", 1)[-1]
    return host in {request.host, request.headers.get("X-Forwarded-Host", "").split(",")[0].strip()}


def _refusal() -> web.Response:
    return web.Response(status=401, text=NO_TOKEN, content_type=HTML)


def _size(request: web.Request, name: str, default: int) -> int:
    try:
        return min(max(int(request.query.get(name, default)), 1), 1000)
    except ValueError:
        return default


async def _relay(socket: web.WebSocketResponse, app: AppProcess) -> None:
    """The browser's messages to the app: keys, resizes, pings, focus (textual-serve's envelopes)."""
    async for message in socket:
        if message.type != WSMsgType.TEXT:
            continue
        try:
            envelope = json.loads(message.data)
            kind, data = envelope[0], envelope[1] if len(envelope) > 1 else None
        except (ValueError, TypeError, IndexError, KeyError):
            continue  # not the client's protocol: ignored
        if kind == "stdin" and isinstance(data, str):
            await app.send_bytes(data.encode("utf-8"))
        elif kind == "resize" and isinstance(data, dict):
            width, height = data.get("width"), data.get("height")
            if isinstance(width, int) and isinstance(height, int) and 0 < width <= 1000 and 0 < height <= 1000:
                await app.set_terminal_size(width, height)
        elif kind == "ping":
            await socket.send_json(["pong", data])
        elif kind == "blur":
            await app.blur()
        elif kind == "focus":
            await app.focus()


def url_of(host: str, port: int, token: str) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/?token={token}"


def serve(options: WebOptions, *, announce: Callable[[str], None]) -> int:
    """Serve until SIGINT or SIGTERM; ``announce`` gets the URL (with the token) once, when listening."""
    return asyncio.run(_serve(options, announce))


async def _serve(options: WebOptions, announce: Callable[[str], None]) -> int:
    server = WebServer(options)
    runner = web.AppRunner(server.application(), access_log=None, shutdown_timeout=1.0)
    await runner.setup()
    try:
        await web.TCPSite(runner, options.host, options.port).start()
    except OSError as exc:
        await runner.cleanup()
        print(f"petstore: cannot listen on {options.host}:{options.port}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    server.port = runner.addresses[0][1]
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stopping.set)
    announce(url_of(options.host, server.port, options.token))
    try:
        await stopping.wait()
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
        await server.close()
        await runner.cleanup()
    return 0

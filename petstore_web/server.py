"""The aiohttp server: the login, the app page, textual-serve's static client, one app per websocket, downloads.

A person logs in by posting their token to ``/login`` (the form at ``/``; an Origin naming another host is
refused). The answer is an HttpOnly, SameSite=Strict cookie that names the person (derived from the token, not
the token; ``Secure`` when the request came over TLS) and a 303 to ``/``. Every page, asset, websocket and
download without that cookie gets 401; a token in the address (``?token=``) gets 400, since proxy logs keep
addresses. Each websocket runs the app as the cookie's person (``--web-actor``/``--web-role``: the browser has
no say). Every response forbids framing by other sites. No access log.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

import textual_serve
from aiohttp import WSMsgType, web
from textual_serve.download_manager import DownloadManager

from .access import People, Person, Proxies, cookie_name
from .pages import APP_PAGE, LOGGED_OUT, LOGIN, LOGIN_FAILED, TOKEN_IN_ADDRESS, notice, sessions_full
from .sessions import GRACE, AppProcess, SessionLimit

#: textual-serve's browser client: textual.js (xterm.js and the session protocol), its CSS and fonts.
STATIC = Path(textual_serve.__file__).resolve().parent / "static"
#: Seconds between websocket pings: a browser gone without closing its socket is noticed within two.
HEARTBEAT = 15.0
HTML = "text/html"
#: Largest request body (the login form is one token).
MAX_BODY = 16 * 1024
#: On every response: no page of another site may frame this one (clickjacking), no sniffing, no referrer to others.
SAFE_HEADERS = {
    "Content-Security-Policy": "frame-ancestors 'self'",
    "X-Frame-Options": "SAMEORIGIN",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",  # not no-referrer: with it a form's Origin is "null"
}


@dataclass(frozen=True, kw_only=True)
class WebOptions:
    """What ``petstore web`` serves: ``argv`` is the app command run for every session."""

    host: str
    port: int
    people: People
    argv: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict)
    #: Peers whose X-Forwarded-Proto/-Host are believed (``--forwarded-allow-ips``; none by default).
    proxies: Proxies = field(default_factory=Proxies)
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
        app = web.Application(middlewares=[self._guard], client_max_size=MAX_BODY)
        app.add_routes(
            [
                web.get("/", self.index),
                web.post("/login", self.login),
                web.get("/login", _to_index),
                web.get("/ws", self.websocket),
                web.get("/download/{key}", self.download),
                web.static("/static", STATIC, show_index=False),
            ]
        )
        app.on_response_prepare.append(_safe_headers)
        return app

    @web.middleware
    async def _guard(
        self, request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        if "token" in request.query:  # already in a log somewhere: refused, so that no one gets used to it
            return _page(400, TOKEN_IN_ADDRESS)
        if request.path == "/login":
            return await handler(request)
        if self.person(request) is None:
            return _page(401, LOGIN if request.path == "/" else LOGGED_OUT)
        return await handler(request)

    def person(self, request: web.Request) -> Person | None:
        """Who the request's cookie names (None: no one; the guard lets only named requests through)."""
        return self.options.people.by_cookie(request.cookies.get(cookie_name(self.port)))

    async def login(self, request: web.Request) -> web.Response:
        """The form's token: the person's cookie and a 303 to ``/``, or the form again (401)."""
        if not _same_origin(request, self.options.proxies):  # login CSRF: a page elsewhere posting its token
            return _page(403, notice("Refused", "A page of another site may not log in here."))
        form = await request.post()
        token = form.get("token")
        person = self.options.people.by_token(token if isinstance(token, str) else None)
        if person is None:
            return _page(401, LOGIN_FAILED)
        response = web.Response(status=303, headers={"Location": "/", "Cache-Control": "no-store"})
        response.set_cookie(
            cookie_name(self.port),
            person.cookie,
            httponly=True,
            samesite="Strict",
            path="/",
            secure=_over_tls(request, self.options.proxies),
        )
        return response

    async def index(self, request: web.Request) -> web.Response:
        if self.sessions.full:
            return web.Response(status=503, text=sessions_full(self.sessions.limit), content_type=HTML)
        return web.Response(text=APP_PAGE, content_type=HTML, headers={"Cache-Control": "no-store"})

    async def websocket(self, request: web.Request) -> web.StreamResponse:
        if self.sessions.full:
            return web.Response(status=503, text=sessions_full(self.sessions.limit), content_type=HTML)
        if not _same_origin(request, self.options.proxies):
            return web.Response(status=403, text="petstore web: a page of another site may not open a session")
        person = self.person(request)
        assert person is not None  # the guard
        # autoclose off: the closing handshake is answered once the app has ended and its slot is free.
        socket = web.WebSocketResponse(heartbeat=self.options.heartbeat, autoclose=False)

        ending = False

        async def close() -> None:  # the app says it exits: end the session, unless it is being ended
            if not ending:
                await socket.close()

        app = AppProcess(
            (*self.options.argv, "--web-actor", person.name, "--web-role", person.role),
            person=person,
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

    async def download(self, request: web.Request) -> web.StreamResponse:
        """A file the person's own app delivers (``/history save``), streamed from the app, always as an attachment."""
        try:
            meta = await self.downloads.get_download_metadata(request.match_info["key"])
        except KeyError:
            meta = None
        app = meta.app_service if meta is not None else None
        if meta is None or not isinstance(app, AppProcess) or app.person != self.person(request):
            return web.Response(status=404, text="petstore web: no such download")
        charset = f"; charset={meta.encoding}" if meta.encoding else ""
        response = web.StreamResponse(
            headers={
                "Content-Type": meta.mime_type + charset,
                "Content-Disposition": attachment(meta.file_name),
                "Cache-Control": "no-store",
            }
        )
        await response.prepare(request)
        async for chunk in self.downloads.download(meta.delivery_key):
            await response.write(chunk)
        await response.write_eof()
        return response

    async def close(self) -> None:
        """End every app (bounded by the grace period) and close every socket."""
        await self.sessions.stop_all()
        for socket in list(self.sockets):
            with contextlib.suppress(Exception):
                await socket.close(code=1001, message=b"server stopping")


def _same_origin(request: web.Request, proxies: Proxies) -> bool:
    """The request comes from our own page: its Origin names this host (or the one a trusted proxy forwards).

    The SameSite cookie already keeps other sites out; this also keeps out pages on other ports of this host,
    which browsers count as the same site."""
    origin = request.headers.get("Origin")
    if origin is None:  # not a browser
        return True
    host = origin.split("://", 1)[-1]
    allowed = {request.host}
    if proxies.trusts(request.remote):
        allowed.add(request.headers.get("X-Forwarded-Host", "").split(",")[0].strip())
    return host in allowed


def _over_tls(request: web.Request, proxies: Proxies) -> bool:
    """The browser reached us over TLS: directly, or through a trusted proxy that says so (X-Forwarded-Proto,
    the value the nearest proxy added)."""
    if request.secure:
        return True
    if not proxies.trusts(request.remote):
        return False
    return request.headers.get("X-Forwarded-Proto", "").split(",")[-1].strip().lower() == "https"


async def _safe_headers(request: web.Request, response: web.StreamResponse) -> None:
    for name, value in SAFE_HEADERS.items():
        response.headers.setdefault(name, value)


async def _to_index(request: web.Request) -> web.Response:
    return web.Response(status=303, headers={"Location": "/"})


def _page(status: int, html: str) -> web.Response:
    return web.Response(status=status, text=html, content_type=HTML, headers={"Cache-Control": "no-store"})


def attachment(name: str) -> str:
    """A Content-Disposition that saves ``name`` (ASCII fallback, and the exact name per RFC 6266)."""
    plain = "".join(ch if ch.isascii() and ch.isprintable() and ch not in '"\\;' else "_" for ch in name)
    return f"attachment; filename=\"{plain or 'download'}\"; filename*=UTF-8''{quote(name, safe='')}"


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


def url_of(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/"


def serve(options: WebOptions, *, announce: Callable[[str], None]) -> int:
    """Serve until SIGINT or SIGTERM; ``announce`` gets the address (no token) once, when listening."""
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
    announce(url_of(options.host, server.port))
    try:
        await stopping.wait()
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
        await server.close()
        await runner.cleanup()
    return 0

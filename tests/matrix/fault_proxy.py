"""A pass-through HTTP proxy in front of Synapse that can refuse or rate-limit the bot's message sends: a fault on
demand.

Everything else (login, sync long-polls, joins) goes through unchanged. While ``refuse_sends`` is set, every
``PUT .../send/...`` answers 503 ``M_UNKNOWN`` (what a homeserver going away looks like to a client) and sets
``refused``; the test can then crash the bot between "the command reached the service" and "the reply went out",
the one window a real Synapse does not open on demand.

It also counts password logins (``logins``: every ``POST .../login``), can answer them 429 as Synapse's login limit
does (``limit_logins``), and can answer everything 503 (``refuse_all``: a homeserver out of reach).
"""

from __future__ import annotations

import asyncio
import re
from typing import Self

import aiohttp
from aiohttp import web

from matrix.synapse_server import free_port

_SEND = re.compile(r"/_matrix/client/v3/rooms/[^/]+/send/")
_LOGIN = re.compile(r"/_matrix/client/(v3|r0)/login$")
_HOP = {"host", "content-length", "transfer-encoding", "connection", "keep-alive"}


class ForwardingProxy:
    """Passes every request on to ``upstream`` unchanged; a subclass answers some itself (:meth:`intercept`) or
    acts on an answer before passing it back (:meth:`answered`)."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.rstrip("/")
        self.port = free_port()
        self._session: aiohttp.ClientSession | None = None
        self._runner: web.AppRunner | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self) -> Self:
        self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=None), auto_decompress=False)
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._forward)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", self.port).start()
        return self

    async def aclose(self) -> None:
        """Closes the upstream session first: a long-poll in flight ends now, not when the upstream answers it."""
        if self._session is not None:
            await self._session.close()
        if self._runner is not None:
            await self._runner.cleanup()

    async def intercept(self, request: web.Request) -> web.StreamResponse | None:
        """The proxy's own answer to ``request`` (None: pass it on)."""
        return None

    async def answered(self, request: web.Request) -> None:
        """Called once the upstream has answered ``request``, before the answer is passed back."""

    async def _forward(self, request: web.Request) -> web.StreamResponse:
        own = await self.intercept(request)
        if own is not None:
            return own
        assert self._session is not None
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP}
        async with self._session.request(
            request.method, self.upstream + request.path_qs, headers=headers, data=await request.read()
        ) as upstream:
            body = await upstream.read()
            kept = {k: v for k, v in upstream.headers.items() if k.lower() not in _HOP}
        await self.answered(request)
        return web.Response(status=upstream.status, body=body, headers=kept)


class FaultProxy(ForwardingProxy):
    def __init__(self, upstream: str) -> None:
        super().__init__(upstream)
        self.refuse_sends = False
        #: Message sends still to answer 429 ``M_LIMIT_EXCEEDED`` (as Synapse's rate limiter does), then pass.
        self.limit_sends = 0
        self.refused = asyncio.Event()
        #: Password logins seen (passed on or refused); the next ones still to answer 429, then pass.
        self.logins = 0
        self.limit_logins = 0
        #: While set, every request answers 503 (the homeserver is out of reach).
        self.refuse_all = False

    async def intercept(self, request: web.Request) -> web.StreamResponse | None:
        if self.refuse_all:
            return web.json_response({"errcode": "M_UNKNOWN", "error": "proxy: homeserver unavailable"}, status=503)
        if request.method == "POST" and _LOGIN.match(request.path):
            self.logins += 1
            if self.limit_logins:
                self.limit_logins -= 1
                limited = {"errcode": "M_LIMIT_EXCEEDED", "error": "Too Many Requests", "retry_after_ms": 20}
                return web.json_response(limited, status=429)
        if self.limit_sends and request.method == "PUT" and _SEND.match(request.path):
            self.limit_sends -= 1
            limited = {"errcode": "M_LIMIT_EXCEEDED", "error": "Too Many Requests", "retry_after_ms": 20}
            return web.json_response(limited, status=429)
        if self.refuse_sends and request.method == "PUT" and _SEND.match(request.path):
            self.refused.set()
            return web.json_response({"errcode": "M_UNKNOWN", "error": "proxy: homeserver unavailable"}, status=503)
        return None

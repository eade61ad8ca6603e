"""The one middleware around the app: each HTTP request counted in the metrics and written to the access log.

Both see the same thing of a request (its status, its body's size, whether a create was replayed, its duration),
so one wrapper of ``send`` and one pair of clock reads serve both: as two middlewares, each was a layer of its own
that every request went through (a coroutine, a ``send`` wrapper and two clock reads each). ``/metrics`` is answered
here (and logged, not counted).
"""

from __future__ import annotations

import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .accesslog import AccessLog
from .metrics import METRICS_PATH, Metrics

__all__ = ["Observed"]

_REPLAYED = (b"idempotent-replayed", b"true")


class Observed:
    """ASGI middleware handing each HTTP request to ``metrics`` (None: not counted, ``/metrics`` not answered) and
    to ``log`` (None: not logged)."""

    def __init__(self, app: ASGIApp, *, metrics: Metrics | None = None, log: AccessLog | None = None) -> None:
        self._app = app
        self._metrics = metrics
        self._log = log

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        started = time.perf_counter()
        status, size, replayed = 500, 0, False

        async def sending(message: Message) -> None:
            nonlocal status, size, replayed
            if message["type"] == "http.response.start":
                status = message["status"]
                replayed = status == 201 and _REPLAYED in message.get("headers", ())
            else:
                size += len(message.get("body", b""))
            await send(message)

        metrics = self._metrics
        scrape = metrics is not None and scope["path"] == METRICS_PATH
        try:
            if scrape:
                assert metrics is not None
                await metrics.scrape(scope, sending)
            else:
                await self._app(scope, receive, sending)
        finally:
            seconds = time.perf_counter() - started
            if metrics is not None and not scrape:
                metrics.count(scope, status=status, replayed=replayed, seconds=seconds)
            if self._log is not None:
                self._log.write(scope, status=status, size=size, seconds=seconds)

"""Shared helpers of the client tests (constants, a scripted MockTransport handler, a sleep recorder)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx

CANARY = "sk-CANARY-1234567890abcdef"
BASE = "http://127.0.0.1/v1"
PET = {"id": 1, "name": "Rex", "categoryId": 3, "status": "available"}

Handler = Callable[[httpx.Request], httpx.Response]


class SleepRecorder:
    """Stands in for asyncio.sleep: records each requested delay, sleeps not at all."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


class Script:
    """A MockTransport handler that answers from a list, one reply per request, and records requests."""

    def __init__(self, *replies: httpx.Response | Exception | Handler) -> None:
        self.replies = list(replies)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        reply = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
        if isinstance(reply, Exception):
            raise reply
        if callable(reply) and not isinstance(reply, httpx.Response):
            return reply(request)
        return reply


def jresp(status: int, data: Any, **headers: str) -> httpx.Response:
    headers = {"Content-Type": "application/json", **headers}
    return httpx.Response(status, content=json.dumps(data).encode(), headers=headers)

"""A small misbehaving HTTP server on loopback, for faults a real server won't produce on demand.

One server serves every fault; the fault is chosen by the first path segment,
so a test points a client (or a ``petstore run`` subprocess) at
``http://127.0.0.1:PORT/<fault>/v1``. It runs on a :class:`loopserver.LoopServer`
(its own event loop in a thread). Every request is
recorded (method, path, headers) so tests can count retries and check that
the key never went anywhere it should not.
"""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from loopserver import LoopServer

PET = {"id": 1, "name": "Rex", "categoryId": 3, "status": "available"}

Writer = asyncio.StreamWriter


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


def _response(status: int, body: bytes, *, ctype: str = "application/json", extra: str = "") -> bytes:
    reason = {
        200: "OK",
        201: "Created",
        400: "Bad Request",
        429: "Too Many Requests",
        500: "Internal Server Error",
        502: "Bad Gateway",
        503: "Service Unavailable",
        504: "Gateway Timeout",
    }.get(status, "Status")
    head = (
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: {ctype}\r\nContent-Length: {len(body)}\r\n"
        f"Connection: close\r\n{extra}\r\n"
    )
    return head.encode() + body


def _json(status: int, data: object, extra: str = "") -> bytes:
    return _response(status, json.dumps(data).encode(), extra=extra)


def _error(status: int) -> bytes:
    return _json(status, {"code": f"fault_{status}", "message": f"fault server says {status}", "status": status})


STATIC: dict[str, bytes] = {
    "ok": _json(200, [PET]),
    "status_500": _error(500),
    "status_502": _error(502),
    "status_503": _error(503),
    "status_503_retry_after": _response(503, b"", extra="Retry-After: 0\r\n"),
    "status_429": _json(429, {"code": "rate_limited", "message": "slow down", "status": 429}, "Retry-After: 0\r\n"),
    "retry_after_too_long": _response(503, b"", extra="Retry-After: 3600\r\n"),
    "html": _response(200, b"<!doctype html><html><body><h1>Welcome to nginx!</h1></body></html>", ctype="text/html"),
    "html_error": _response(502, b"<html><body>Bad Gateway</body></html>", ctype="text/html"),
    "truncated_json": _response(200, b'[{"id": 1, "name": "Re'),
    "pet_without_id": _json(200, [{"name": "Rex", "categoryId": 3}]),
    "id_as_string": _json(200, [{"id": "1", "name": "Rex", "categoryId": 3}]),
    "not_a_list": _json(200, {"pets": [PET]}),
    "error_missing_fields": _json(400, {"message": "something was wrong"}),
    "unknown_status_and_extra": _json(200, [{**PET, "status": "adopted", "colour": "brown"}]),
}


@dataclass
class FaultServer:
    requests: list[Recorded] = field(default_factory=list)
    _server: LoopServer | None = None

    @property
    def port(self) -> int:
        assert self._server is not None, "start() first"
        return self._server.port

    def url(self, fault: str) -> str:
        return f"http://127.0.0.1:{self.port}/{fault}/v1"

    def count(self, fault: str) -> int:
        return sum(1 for r in self.requests if r.path.startswith(f"/{fault}/"))

    # -- lifecycle ---------------------------------------------------------
    def start(self) -> FaultServer:
        self._server = LoopServer(self._handle).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()
            self._server = None

    # -- HTTP ----------------------------------------------------------------
    async def _handle(self, reader: asyncio.StreamReader, writer: Writer) -> None:
        try:
            recorded = await _read_request(reader)
            if recorded is None:
                return
            self.requests.append(recorded)
            fault = recorded.path.strip("/").split("/")[0]
            await self._answer(fault, recorded, writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    async def _answer(self, fault: str, req: Recorded, writer: Writer) -> None:
        if fault in STATIC:
            writer.write(STATIC[fault])
            await writer.drain()
            return
        handler = DYNAMIC.get(fault)
        if handler is None:
            writer.write(_error(404))
        else:
            await handler(self, req, writer)
        await writer.drain()


async def _read_request(reader: asyncio.StreamReader) -> Recorded | None:
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    method, path, _ = lines[0].split(" ", 2)
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            k, v = line.split(":", 1)
            headers[k.strip().lower()] = v.strip()
    body = await reader.readexactly(int(headers.get("content-length", "0") or 0))
    return Recorded(method=method, path=path, headers=headers, body=body)


async def _hang(server: FaultServer, req: Recorded, writer: Writer) -> None:
    await asyncio.sleep(3600)


async def _close_mid_body(server: FaultServer, req: Recorded, writer: Writer) -> None:
    writer.write(b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n[{"id": 1,')
    await writer.drain()


async def _trickle(server: FaultServer, req: Recorded, writer: Writer) -> None:
    """Headers at once, then one byte every 0.2 s: per-read timeouts never fire."""
    writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n[")
    for _ in range(100000):
        writer.write(b" ")
        await writer.drain()
        await asyncio.sleep(0.2)


async def _huge(server: FaultServer, req: Recorded, writer: Writer) -> None:
    """A 64 MiB JSON array, streamed: the client must cap what it reads."""
    item = json.dumps(PET).encode() + b","
    count = (64 * 1024 * 1024) // len(item)
    writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
    chunk = b"[" + item * 1000
    for _ in range(count // 1000):
        writer.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
        await writer.drain()
        chunk = item * 1000
    writer.write(b"0\r\n\r\n")


async def _commit_then_drop(server: FaultServer, req: Recorded, writer: Writer) -> None:
    """POST: 'commit' (count it), then drop the connection without answering the first time."""
    key = req.headers.get("idempotency-key", "")
    seen = [r for r in server.requests if r.headers.get("idempotency-key") == key and r.method == "POST"]
    if len(seen) == 1:
        return  # connection closed with no response: did it commit? the client cannot know
    writer.write(_json(201, {**PET, "id": 42}))


Handler = Callable[[FaultServer, Recorded, Writer], Awaitable[None]]
DYNAMIC: dict[str, Handler] = {
    "hang": _hang,
    "close_mid_body": _close_mid_body,
    "trickle": _trickle,
    "huge": _huge,
    "commit_then_drop": _commit_then_drop,
}

FAULTS = sorted([*STATIC, *DYNAMIC, "refuse"])


def refused_url() -> str:
    """A loopback URL on which nothing listens (connection refused)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"

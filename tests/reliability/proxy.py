"""A small HTTP/1.1-aware TCP proxy on loopback, in front of the real service, that can lose answers.

It relays request by request (keep-alive included). For each POST it takes the
next action from ``plan`` (default ``forward``):

* ``forward``: relay the request and the response;
* ``drop_after``: relay the request, read the whole response (the service has
  committed), then close the client's connection without a byte of it;
* ``drop_before``: close the client's connection without forwarding anything;
* ``error_500``: answer 500 itself with ``error_body``, forwarding nothing.

Runs on a :class:`loopserver.LoopServer` (its own event loop in a thread).
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from loopserver import LoopServer

ERROR_500 = {"code": "proxy_500", "message": "the proxy failed this", "status": 500}


def _500(body: dict) -> bytes:
    data = json.dumps(body).encode()
    head = f"HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/json\r\nContent-Length: {len(data)}\r\n"
    return head.encode() + b"Connection: close\r\n\r\n" + data


@dataclass
class Exchange:
    method: str
    path: str
    headers: dict[str, str]
    action: str
    status: int | None = None
    response_headers: dict[str, str] = field(default_factory=dict)


def _head(raw: bytes) -> tuple[str, dict[str, str]]:
    lines = raw.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
    return lines[0], headers


async def _message(reader: asyncio.StreamReader) -> tuple[bytes, str, dict[str, str]]:
    raw = await reader.readuntil(b"\r\n\r\n")
    first, headers = _head(raw)
    body = await reader.readexactly(int(headers.get("content-length", "0") or 0))
    return raw + body, first, headers


class Proxy:
    def __init__(self, upstream_url: str) -> None:
        parts = urlsplit(upstream_url)
        self.upstream = (parts.hostname or "127.0.0.1", parts.port or 80)
        self.plan: list[str] = []
        self.error_body: dict = dict(ERROR_500)
        self.exchanges: list[Exchange] = []
        self._server = LoopServer(self._handle)

    @property
    def port(self) -> int:
        return self._server.port

    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def posts(self) -> list[Exchange]:
        return [e for e in self.exchanges if e.method == "POST"]

    def start(self) -> Proxy:
        self._server.start()
        return self

    def stop(self) -> None:
        self._server.stop()

    def __enter__(self) -> Proxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection(*self.upstream)
        try:
            while await self._relay_one(reader, writer, up_reader, up_writer):
                pass
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            up_writer.close()
            writer.close()

    async def _relay_one(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        up_reader: asyncio.StreamReader,
        up_writer: asyncio.StreamWriter,
    ) -> bool:
        """One request; False when the client's connection must end."""
        request, first, headers = await _message(reader)
        method, path, _ = first.split(" ", 2)
        action = (self.plan.pop(0) if self.plan else "forward") if method == "POST" else "forward"
        exchange = Exchange(method=method, path=path, headers=headers, action=action)
        self.exchanges.append(exchange)
        if action == "drop_before":
            return False
        if action == "error_500":
            writer.write(_500(self.error_body))
            await writer.drain()
            return False
        up_writer.write(request)
        await up_writer.drain()
        response, status_line, response_headers = await _message(up_reader)
        exchange.status = int(status_line.split(" ", 2)[1])
        exchange.response_headers = response_headers
        if action == "drop_after":
            return False  # committed upstream; the client never hears of it
        writer.write(response)
        await writer.drain()
        return True

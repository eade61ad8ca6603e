"""Structured access logs: one JSON object per line for every HTTP request.

Fields: ``time`` (UTC, RFC 3339), ``method``, ``path``, ``query``, ``status``, ``bytes`` (response
body), ``duration_ms``, ``client``, ``pid`` (the worker). Request headers are never logged, so
neither is the API key, right or wrong. Lines are written together, at most :data:`FLUSH_EVERY` seconds after
their request was answered, as nginx's ``access_log ... flush=`` does (a write to a pipe or file is a system call
that wakes its reader: one a request cost the service more than the line itself), and when the worker stops; a
worker killed outright loses at most that much of its log. Writes hold whole lines on an ``O_APPEND`` descriptor,
so several workers can share a file without interleaving lines. ``petstore serve`` writes them to standard error
unless told otherwise (``--access-log FILE``, a file made 0600; ``-`` for standard output; ``--no-access-log``).
"""

from __future__ import annotations

import asyncio
import json
import os
import select
import time
from datetime import UTC, datetime
from typing import TypeVar

from starlette.types import Scope

from petstore_os import open_private

__all__ = ["FLUSH_EVERY", "STDERR", "AccessLog", "open_access_log"]

#: The ``--access-log`` target when none is named: standard error.
STDERR = "<stderr>"
#: Seconds a line may wait to be written.
FLUSH_EVERY = 0.1
#: Lines that are written at once, whatever their wait.
_MOST_PENDING = 512
K = TypeVar("K")


class AccessLog:
    """One JSON line per HTTP request answered, written to ``fd`` within ``flush_every`` seconds (0: at the next turn
    of the event loop); :class:`~.observed.Observed` hands it each request."""

    def __init__(self, *, fd: int, flush_every: float = FLUSH_EVERY) -> None:
        self._fd = fd
        self._pid = os.getpid()
        self._second = -1
        self._stamp = ""
        self._flush_every = flush_every
        #: Lines not yet written; a flush is scheduled whenever this is not empty.
        self._pending: list[str] = []
        #: The fields of a request line and of a client already rendered (a client asks for the same few again and
        #: again): at most :data:`_MOST_REMEMBERED` each, short ones only.
        self._requests: dict[tuple[str, str, bytes], str] = {}
        self._clients: dict[tuple[str, int] | None, str] = {}

    def write(self, scope: Scope, *, status: int, size: int, seconds: float) -> None:
        """The line of the request ``scope``, answered ``status`` with a body of ``size`` bytes in ``seconds``."""
        now = time.time()
        whole = int(now)
        if whole != self._second:  # the date and time to the second, formatted once a second
            self._second = whole
            self._stamp = datetime.fromtimestamp(whole, UTC).strftime("%Y-%m-%dT%H:%M:%S")
        asked = (scope["method"], scope["path"], scope["query_string"])
        request = self._requests.get(asked)
        if request is None:
            request = f'"method": {_text(asked[0])}, "path": {_text(asked[1])}, "query": {_text(_query(asked[2]))}'
            _remember(self._requests, asked, request, size=len(asked[1]) + len(asked[2]))
        client = scope.get("client")
        peer = self._clients.get(client)
        if peer is None:
            peer = _text(f"{client[0]}:{client[1]}") if client else "null"
            _remember(self._clients, client, peer, size=len(peer))
        line = (
            f'{{"time": "{self._stamp}.{int((now - whole) * 1000):03d}Z", {request}, "status": {status}, '
            f'"bytes": {size}, "duration_ms": {round(seconds * 1000, 3)}, "client": {peer}, "pid": {self._pid}}}\n'
        )
        if not self._pending:
            loop = asyncio.get_running_loop()
            if self._flush_every > 0:
                loop.call_later(self._flush_every, self.flush)
            else:
                loop.call_soon(self.flush)
        self._pending.append(line)
        if len(self._pending) >= _MOST_PENDING:
            self.flush()  # the flush scheduled finds nothing, or the lines after these

    def flush(self) -> None:
        """Write the lines pending (the event loop calls this when their time is up, and the worker as it stops).
        Writes hold whole lines and at most ``PIPE_BUF`` bytes, as one line did: on a pipe shared by
        several workers a write that size is atomic, so their lines never interleave."""
        pending, self._pending = self._pending, []
        chunk = ""
        for line in pending:
            if chunk and len(chunk) + len(line) > select.PIPE_BUF:
                _write_all(self._fd, chunk.encode())
                chunk = ""
            chunk += line
        if chunk:
            _write_all(self._fd, chunk.encode())


#: Most request fields (and clients) :class:`AccessLog` keeps rendered, and the longest it keeps.
_MOST_REMEMBERED = 256
_LONGEST_REMEMBERED = 200


def _remember(rendered: dict[K, str], key: K, text: str, *, size: int) -> None:
    """Keep ``text``, rendered for ``key``, unless it is long; forget them all when ``rendered`` is full."""
    if size <= _LONGEST_REMEMBERED:
        if len(rendered) >= _MOST_REMEMBERED:
            rendered.clear()
        rendered[key] = text


def _write_all(fd: int, data: bytes) -> None:
    while data:
        data = data[os.write(fd, data) :]


_text = json.JSONEncoder(ensure_ascii=True).encode


#: Query parameters the service reads, logged as sent; any other's value is logged as ``***`` (a client that put
#: its key in the URL must not find it in the log).
_LOGGED_PARAMS = frozenset({"limit", "status", "cursor"})


def _query(raw: bytes) -> str:
    if not raw:
        return ""
    parts = []
    for item in raw.decode("latin-1").split("&"):
        name, sep, _ = item.partition("=")
        parts.append(item if name in _LOGGED_PARAMS or not sep else f"{name}=***")
    return "&".join(parts)


def open_access_log(target: str) -> int:
    """A descriptor for ``--access-log``: ``-`` is standard output, :data:`STDERR` standard error, else a file
    opened for appending (created 0600, an existing one tightened)."""
    if target == "-":
        return 1
    if target == STDERR:
        return 2
    return open_private(target)

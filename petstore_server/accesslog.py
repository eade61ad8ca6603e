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

from starlette.types import Scope

from petstore_os import open_private

__all__ = ["FLUSH_EVERY", "STDERR", "AccessLog", "open_access_log"]

#: The ``--access-log`` target when none is named: standard error.
STDERR = "<stderr>"
#: Seconds a line may wait to be written.
FLUSH_EVERY = 0.1
#: Lines that are written at once, whatever their wait.
_MOST_PENDING = 512


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

    def write(self, scope: Scope, *, status: int, size: int, seconds: float) -> None:
        """The line of the request ``scope``, answered ``status`` with a body of ``size`` bytes in ``seconds``."""
        now = time.time()
        whole = int(now)
        if whole != self._second:  # the date and time to the second, formatted once a second
            self._second = whole
            self._stamp = datetime.fromtimestamp(whole, UTC).strftime("%Y-%m-%dT%H:%M:%S")
        client = scope.get("client")
        line = (
            f'{{"time": "{self._stamp}.{int((now - whole) * 1000):03d}Z", "method": {_text(scope["method"])}, '
            f'"path": {_text(scope["path"])}, "query": {_text(_query(scope["query_string"]))}, "status": {status}, '
            f'"bytes": {size}, "duration_ms": {round(seconds * 1000, 3)}, '
            f'"client": {_text(f"{client[0]}:{client[1]}") if client else "null"}, "pid": {self._pid}}}\n'
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

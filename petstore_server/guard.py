"""uvicorn's fast HTTP/1.1 protocol (httptools) with the limits a client must not get around: deadlines for the
whole request head and the whole request body, and a cap on open connections.

uvicorn (0.54) bounds the idle time between requests (``timeout_keep_alive``) but not the time a request head
or body may take: a client that sends nothing, half a request line, a header every few seconds, or a head and then
a body that trickles or never comes holds its connection for ever. Here a head must be complete within
``head_timeout`` seconds of the connection opening or of its first byte arriving (the whole head, not each read),
and a body within ``body_timeout`` seconds of its head's end, else the connection is closed (the request being
answered sees the client gone). A connection accepted past
``max_connections`` open ones (in this worker) gets a 503 Error body with ``Connection: close`` and is closed at
once, before it can hold a file descriptor for long.

It reads through asyncio's buffered-protocol interface into one buffer per thread, reused: asyncio's plain reads
allocate a fresh 256 KiB buffer for every read and shrink it to the bytes read, which glibc's allocator may serve
with ``mmap``, ``mremap`` and ``munmap`` and fresh pages each time (seen on this service: three system calls and a
page fault a request, about a tenth of its CPU). Each read is copied out of the buffer before the next.

This subclasses ``uvicorn.protocols.http.httptools_impl.HttpToolsProtocol`` (the protocol uvicorn itself picks when
httptools is installed) and uses its public parser callbacks (``on_message_begin``, ``on_headers_complete``,
``on_message_complete``, which tell where a request's head and body begin and end) and its ``connections`` set:
pyproject pins uvicorn to its minor version for that (``uvicorn>=0.54,<0.55``), and, as the parser whose
callbacks those are, pins httptools to its minor version (``httptools>=0.9,<0.10``).

Why uvicorn (bench/README.md, "Which HTTP server runs the service"): of uvicorn, Granian, Hypercorn and gunicorn with
uvicorn workers, none closes a silent connection, a trickled head and a connection past a cap by itself, and each
leaves its workers serving after ``kill -9`` of its master (:mod:`.supervision` handles that here). uvicorn takes
the protocol class through a public option, so the limits are this module; Granian, the fastest, would have to be
patched from outside for them.
"""

from __future__ import annotations

import asyncio
import enum
import threading

import uvicorn
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from .wire import error_body

__all__ = [
    "DEFAULT_BODY_TIMEOUT",
    "DEFAULT_HEAD_TIMEOUT",
    "DEFAULT_KEEP_ALIVE",
    "GuardedConfig",
    "GuardedHttpToolsProtocol",
    "refusal",
]

#: Seconds a client has to send a whole request head.
DEFAULT_HEAD_TIMEOUT = 10.0
#: Seconds a client has to send a whole request body, from the end of its head.
DEFAULT_BODY_TIMEOUT = 10.0
#: Seconds an idle keep-alive connection stays open.
DEFAULT_KEEP_ALIVE = 5


class GuardedConfig(uvicorn.Config):
    """uvicorn's Config plus the limits :class:`GuardedHttpToolsProtocol` applies (pickled into each worker)."""

    def __init__(
        self,
        *args: object,
        head_timeout: float,
        max_connections: int | None,
        body_timeout: float = DEFAULT_BODY_TIMEOUT,
        **kwargs: object,
    ) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.head_timeout = head_timeout
        self.body_timeout = body_timeout
        self.max_connections = max_connections


def refusal() -> bytes:
    """The whole response sent to a connection over the cap."""
    body = error_body(503, "too many open connections; try again shortly")
    head = (
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\nretry-after: 1\r\nconnection: close\r\n\r\n"
    )
    return head.encode() + body


_REFUSAL = refusal()
#: Most bytes a read takes from a connection.
READ_SIZE = 65536
#: Each thread's read buffer (a loop's protocols run on its thread, and a read is used up before the next).
_buffers = threading.local()


class Part(enum.Enum):
    """What of a request the connection is waiting for."""

    #: A request's first byte (the connection is new, or its last request was read whole).
    NEXT = enum.auto()
    #: The rest of a head that has begun.
    HEAD = enum.auto()
    #: The rest of a body whose head was read.
    BODY = enum.auto()


class GuardedHttpToolsProtocol(HttpToolsProtocol, asyncio.BufferedProtocol):
    """:class:`HttpToolsProtocol` with whole-head and whole-body deadlines and a connection cap, reading into a
    reused buffer (see the module's docstring)."""

    def get_buffer(self, sizehint: int) -> memoryview:
        """The thread's read buffer, for asyncio to read into."""
        buffer: memoryview | None = getattr(_buffers, "view", None)
        if buffer is None:
            buffer = _buffers.view = memoryview(bytearray(READ_SIZE))
        return buffer

    def buffer_updated(self, nbytes: int) -> None:
        """``nbytes`` read into the buffer: handled as :meth:`data_received` handles a read."""
        self.data_received(bytes(_buffers.view[:nbytes]))

    _head_timer: asyncio.TimerHandle | None = None
    _body_timer: asyncio.TimerHandle | None = None
    #: When the head now awaited began (the connection, or the request's first byte); None when no head is awaited.
    _head_started: float | None = None
    _part = Part.NEXT
    _refused = False

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        config = self.config
        cap = config.max_connections if isinstance(config, GuardedConfig) else None
        if cap is not None and len(self.connections) >= cap:
            self._refused = True
            transport.write(_REFUSAL)
            transport.close()
            return
        super().connection_made(transport)
        self._head_started = self.loop.time()
        self._arm_head_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._refused:
            return
        self._disarm_head_timer()
        self._disarm_body_timer()
        super().connection_lost(exc)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._part = Part.HEAD

    def on_headers_complete(self) -> None:
        super().on_headers_complete()
        self._part = Part.BODY
        self._head_started = None

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._part = Part.NEXT

    def data_received(self, data: bytes) -> None:
        """A request that arrives whole in one read (the usual case) costs no timer; a head that does not gets one,
        due when the head's time is up (from the connection's start or the head's first byte, which this read
        brought if none came before), and a body that does not one due when the body's time is up."""
        if self._refused:
            return
        super().data_received(data)
        part = self._part
        if part is Part.HEAD:
            if self._head_started is None:
                self._head_started = self.loop.time()
            self._arm_head_timer()
            return
        if self._head_started is None:  # no head awaited since the connection began: none is timed
            self._disarm_head_timer()
        if part is Part.BODY:
            self._arm_body_timer()
        else:
            self._disarm_body_timer()

    def _arm_head_timer(self) -> None:
        if self._head_timer is None and self._head_started is not None:
            timeout = self.config.head_timeout if isinstance(self.config, GuardedConfig) else DEFAULT_HEAD_TIMEOUT
            self._head_timer = self.loop.call_at(self._head_started + timeout, self._head_timed_out)

    def _disarm_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_timed_out(self) -> None:
        self._head_timer = None
        if self._part is not Part.BODY and self._head_started is not None and not self.transport.is_closing():
            self.transport.close()

    def _arm_body_timer(self) -> None:
        if self._body_timer is None:
            timeout = self.config.body_timeout if isinstance(self.config, GuardedConfig) else DEFAULT_BODY_TIMEOUT
            self._body_timer = self.loop.call_later(timeout, self._body_timed_out)

    def _disarm_body_timer(self) -> None:
        if self._body_timer is not None:
            self._body_timer.cancel()
            self._body_timer = None

    def _body_timed_out(self) -> None:
        self._body_timer = None
        if self._part is Part.BODY and not self.transport.is_closing():
            self.transport.close()

"""A TCP server on 127.0.0.1 with its own event loop in a thread (the fault server and the proxy run on it).

In its own thread, so in-process async tests (on their own loop) and subprocesses can
both talk to it. ``stop()`` closes the listener, cancels every connection and joins.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


class LoopServer:
    def __init__(self, handle: Handler) -> None:
        self.port = 0
        self._handle = handle
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._ready = threading.Event()
        self._server: asyncio.Server | None = None

    def start(self) -> LoopServer:
        self._thread.start()
        self._ready.wait(10)
        return self

    def stop(self) -> None:
        async def close() -> None:
            assert self._server is not None
            self._server.close()
            for task in asyncio.all_tasks():
                if task is not asyncio.current_task():
                    task.cancel()

        asyncio.run_coroutine_threadsafe(close(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._server = self._loop.run_until_complete(asyncio.start_server(self._handle, "127.0.0.1", 0))
        self.port = self._server.sockets[0].getsockname()[1]
        self._ready.set()
        self._loop.run_forever()

"""One thread that owns a SQLite connection and runs calls for the event loop, cheaply.

``loop.run_in_executor`` costs a request more than SQLite's own work on a small page: a concurrent Future
chained to an asyncio one, a work item, the pool's locks, and one wake-up of the loop (a write to its self-pipe)
per call. Here the loop puts ``(future, call)`` on a queue; the thread runs every call waiting, then settles the
whole batch with one ``call_soon_threadsafe``: under load, one wake-up for many calls.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["SqliteThread", "settle"]

T = TypeVar("T")
_Job = tuple[asyncio.AbstractEventLoop, "asyncio.Future[Any]", Callable[[], Any]]
_Done = tuple["asyncio.Future[Any]", Any, BaseException | None]
_STOP = None


class SqliteThread:
    """Runs callables in order on one thread (the only one that touches the connection)."""

    def __init__(self, *, name: str = "petstore-sqlite") -> None:
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._serve, name=name, daemon=True)
        self._thread.start()

    def run(self, call: Callable[[], T]) -> asyncio.Future[T]:
        """Queue ``call``; the future settles on the calling loop with its result or exception."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        self._jobs.put((loop, future, call))
        return future

    def stop(self) -> None:
        """Finish the calls already queued, then end the thread (waits for it)."""
        self._jobs.put(_STOP)
        self._thread.join()

    def _serve(self) -> None:
        while True:
            job = self._jobs.get()
            batches: dict[asyncio.AbstractEventLoop, list[_Done]] = {}
            while job is not _STOP:
                loop, future, call = job
                try:
                    batches.setdefault(loop, []).append((future, call(), None))
                except BaseException as exc:  # noqa: BLE001 -- handed to the awaiting coroutine
                    batches.setdefault(loop, []).append((future, None, exc))
                try:
                    job = self._jobs.get_nowait()
                except queue.Empty:
                    break
            for loop, done in batches.items():
                try:
                    loop.call_soon_threadsafe(settle, done)
                except RuntimeError:  # the loop is closed: nobody waits any more
                    pass
            if job is _STOP:
                return


def settle(done: list[_Done]) -> None:
    """On the loop: each ``(future, result, exception)`` settled, unless its future was cancelled or answered."""
    for future, result, exc in done:
        if future.done():
            continue
        if exc is not None:
            future.set_exception(exc)
        else:
            future.set_result(result)

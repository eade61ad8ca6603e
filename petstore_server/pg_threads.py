"""PostgreSQL connections on threads of their own, fed by the event loop through one queue.

psycopg's async connection pays, per query, a round trip through the event loop for each wait and the pool's
checkout and return under asyncio locks; its sync connection on a thread waits in libpq with the interpreter
released. Here each of ``size`` threads owns one connection; the loop puts ``(future, job)`` on a shared queue and
any idle thread runs the job (a function of the connection). Results finished close together are settled with one
wake-up of the loop (``call_soon_threadsafe``), as :mod:`.sqlite_thread` does.

What the database coming and going asks of it:

- **Checked before use.** Before a job a thread makes sure its connection is usable without a round trip: an idle
  connection has nothing to read, so one whose socket is readable was closed by the server (a restart or
  ``pg_terminate_backend`` sends an error, then closes it); it is replaced by a fresh one.
- **Refusals are quick.** A connection that cannot be made, or fails mid-job, is
  :class:`~.records.StoreUnavailable` for that job (503). After a failed connection attempt, jobs within
  :data:`RETRY_INTERVAL` seconds are refused at once without trying again, so a database that is down is tried
  a few times a second, not once per request, and one that answers again is in use within that interval.
- **Waits are bounded.** A job not settled within :data:`OPERATION_TIMEOUT` seconds (a frozen server, a host gone
  without closing the connection, or a queue behind those) is answered :class:`~.records.StoreUnavailable` by the
  loop, whatever its thread is doing; a job whose time is up before a thread takes it is not run. Connections
  use TCP keepalives, so a thread stuck on a vanished host gets its connection back as broken.
"""

from __future__ import annotations

import asyncio
import queue
import select
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

import psycopg

from .records import StoreUnavailable
from .sqlite_thread import settle

__all__ = ["OPERATION_TIMEOUT", "RETRY_INTERVAL", "PgThreads", "closed_by_server"]

T = TypeVar("T")
Job = Callable[[psycopg.Connection[Any]], T]
_Item = tuple["asyncio.Future[Any]", Callable[[psycopg.Connection[Any]], Any]]
_Done = tuple["asyncio.Future[Any]", Any, BaseException | None]
_STOP = None

#: Seconds a job may take, queued and run, before its request is answered 503.
OPERATION_TIMEOUT = 6.0
#: Seconds after a failed connection attempt during which jobs are refused without another attempt.
RETRY_INTERVAL = 0.5
#: How often (seconds) the loop looks for jobs past their time.
_SWEEP_EVERY = 0.5


def closed_by_server(conn: psycopg.Connection[Any]) -> bool:
    """True for a connection that cannot be used: closed, broken, or (idle and readable) closed by the server."""
    if conn.closed or conn.broken:
        return True
    poller = select.poll()
    poller.register(conn.fileno(), select.POLLIN)
    return bool(poller.poll(0))


def _reason(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


class PgThreads:
    """``size`` threads with a connection each to ``conninfo``, running jobs for the event loop that made it."""

    def __init__(self, conninfo: str, *, size: int) -> None:
        self._conninfo = conninfo
        self._loop = asyncio.get_running_loop()
        self._jobs: queue.SimpleQueue[_Item | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._done: list[_Done] = []
        #: When each job still unsettled was queued (the loop's clock); only the loop touches it.
        self._queued: dict[asyncio.Future[Any], float] = {}
        self._busy = [False] * size
        #: ``time.monotonic()`` before which no new connection is attempted (after a failed one).
        self._retry_at = 0.0
        self._threads = [
            threading.Thread(target=self._serve, args=(slot,), name=f"petstore-pg-{slot}", daemon=True)
            for slot in range(size)
        ]
        for thread in self._threads:
            thread.start()
        self._sweeper = self._loop.create_task(self._sweep())

    def run(self, job: Job[T]) -> asyncio.Future[T]:
        """Queue ``job``; the future settles with its result, its exception, or StoreUnavailable."""
        future: asyncio.Future[T] = self._loop.create_future()
        self._queued[future] = self._loop.time()
        self._jobs.put((future, job))
        return future

    def stats(self) -> tuple[int, int]:
        """(connections running a job, jobs waiting for a thread)."""
        return sum(self._busy), self._jobs.qsize()

    async def stop(self) -> None:
        """Finish the jobs queued, close the connections, end the threads (a thread stuck on a dead server is left
        to the process's exit)."""
        self._sweeper.cancel()
        for _ in self._threads:
            self._jobs.put(_STOP)
        await asyncio.to_thread(self._join)

    def _join(self) -> None:
        deadline = time.monotonic() + OPERATION_TIMEOUT
        for thread in self._threads:
            thread.join(max(0.0, deadline - time.monotonic()))

    async def _sweep(self) -> None:
        while True:
            await asyncio.sleep(_SWEEP_EVERY)
            late = self._loop.time() - OPERATION_TIMEOUT
            for future in [future for future, queued in self._queued.items() if queued <= late]:
                del self._queued[future]
                if not future.done():
                    future.set_exception(StoreUnavailable(f"no answer within {OPERATION_TIMEOUT:g} s"))

    def _serve(self, slot: int) -> None:
        conn: psycopg.Connection[Any] | None = None
        try:
            while (item := self._jobs.get()) is not _STOP:
                future, job = item
                if future.done():  # answered 503 already (its time is up): not run
                    continue
                self._busy[slot] = True
                try:
                    conn = self._usable(conn)
                    self._finish((future, job(conn), None))
                except psycopg.OperationalError as exc:
                    self._finish((future, None, StoreUnavailable(_reason(exc))))
                except BaseException as exc:  # noqa: BLE001 -- handed to the awaiting coroutine
                    self._finish((future, None, exc))
                finally:
                    self._busy[slot] = False
        finally:
            if conn is not None:
                conn.close()

    def _usable(self, conn: psycopg.Connection[Any] | None) -> psycopg.Connection[Any]:
        """``conn`` if the server has not closed it, else a fresh connection (StoreUnavailable when none can be
        made, or one failed less than :data:`RETRY_INTERVAL` ago)."""
        if conn is not None:
            if not closed_by_server(conn):
                return conn
            conn.close()
        if time.monotonic() < self._retry_at:
            raise StoreUnavailable("the database did not answer a moment ago")
        try:
            return psycopg.connect(self._conninfo, autocommit=True)
        except psycopg.OperationalError:
            self._retry_at = time.monotonic() + RETRY_INTERVAL
            raise

    def _finish(self, done: _Done) -> None:
        """Hand a result to the loop; one wake-up settles every result handed over before the loop gets to it."""
        with self._lock:
            self._done.append(done)
            wake = len(self._done) == 1
        if wake:
            try:
                self._loop.call_soon_threadsafe(self._settle)
            except RuntimeError:  # the loop is closed: nobody waits any more
                pass

    def _settle(self) -> None:
        with self._lock:
            done, self._done = self._done, []
        for future, _, _ in done:
            self._queued.pop(future, None)
        settle(done)

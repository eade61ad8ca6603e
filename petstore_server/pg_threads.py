"""PostgreSQL connections on threads of their own ("lanes"), fed by the event loop, with work batched.

psycopg's async connection pays, per query, a round trip through the event loop for each wait and the pool's
checkout and return under asyncio locks; its sync connection on a thread waits in libpq with the interpreter
released. Here each lane is one thread owning one connection, fed through a queue: the store sends reads to one
lane and writes to another, so a create waiting for the create lock (held by another worker until its commit) never
holds up a page. Threads competing for the interpreter cost more than they give on a worker's single core, so a
worker has these two and no more; several processes (``--workers``, several hosts) are how the service scales.

A lane takes every job queued when it wakes, not one: jobs of one *group* run together through the group's runner
(creates: one transaction, so one commit and one WAL flush for all the creates that arrived meanwhile), other jobs
one after the other; results finished close together are settled with one wake-up of the loop
(``call_soon_threadsafe``), as :mod:`.sqlite_thread` does. Under load, work comes in batches and costs less a job.

What the database coming and going asks of it:

- **Checked before use.** Before a batch a lane makes sure its connection is usable without a round trip: an idle
  connection has nothing to read, so one whose socket is readable was closed by the server (a restart or
  ``pg_terminate_backend`` sends an error, then closes it); it is replaced by a fresh one.
- **Refusals are quick.** A connection that cannot be made, or fails mid-job, is
  :class:`~.records.StoreUnavailable` for that job (503). After a failed connection attempt, jobs within
  :data:`RETRY_INTERVAL` seconds are refused at once without trying again, so a database that is down is tried
  a few times a second, not once per request, and one that answers again is in use within that interval.
- **Waits are bounded.** A job not settled within :data:`OPERATION_TIMEOUT` seconds (a frozen server, a host gone
  without closing the connection, or a queue behind those) is answered :class:`~.records.StoreUnavailable` by the
  loop, whatever its thread is doing; a job whose time is up before its lane takes it is not run. Connections
  use TCP keepalives, so a thread stuck on a vanished host gets its connection back as broken.
"""

from __future__ import annotations

import asyncio
import queue
import select
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import psycopg

from .records import StoreUnavailable
from .sqlite_thread import settle

__all__ = [
    "LANES",
    "OPERATION_TIMEOUT",
    "RETRY_INTERVAL",
    "GroupRunner",
    "PgThreads",
    "Query",
    "Session",
    "closed_by_server",
    "in_one_transaction",
    "pipelined",
]

T = TypeVar("T")
Conn = psycopg.Connection[Any]
Job = Callable[[Conn], T]
#: Runs the jobs of one group together on a connection: one outcome each, ``(result, None)`` or ``(None, error)``.
GroupRunner = Callable[["Session", Sequence[Job[Any]]], list[tuple[Any, BaseException | None]]]
_Done = tuple["asyncio.Future[Any]", Any, BaseException | None]

#: The lanes of a store: one for reads, one for writes.
LANES = ("read", "write")
#: Seconds a job may take, queued and run, before its request is answered 503.
OPERATION_TIMEOUT = 6.0
#: Seconds after a failed connection attempt during which jobs are refused without another attempt.
RETRY_INTERVAL = 0.5
#: Most jobs a lane takes at once.
_BATCH = 64
#: How often (seconds) the loop looks for jobs past their time.
_SWEEP_EVERY = 0.5


@dataclass(frozen=True, slots=True)
class _Item:
    future: asyncio.Future[Any]
    job: Job[Any]
    group: GroupRunner | None


def closed_by_server(conn: Conn) -> bool:
    """True for a connection that cannot be used: closed, broken, or (idle and readable) closed by the server."""
    if conn.closed or conn.broken:
        return True
    poller = select.poll()
    poller.register(conn.fileno(), select.POLLIN)
    return bool(poller.poll(0))


def _reason(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


class Session:
    """A lane's connection and the cursors kept on it for reuse: a new cursor a query cost more than the driver's
    own work on a small query (in a pipeline of 8 reads, 70 against 50 us of CPU a query)."""

    __slots__ = ("_client", "_cursors", "conn")

    def __init__(self, conn: Conn) -> None:
        self.conn = conn
        self._cursors: list[psycopg.Cursor[Any]] = []
        self._client: psycopg.ClientCursor[Any] | None = None

    def client_cursor(self) -> psycopg.ClientCursor[Any]:
        """A cursor that binds parameters itself, for several statements in one query string."""
        if self._client is None:
            self._client = psycopg.ClientCursor(self.conn)
        return self._client

    def cursors(self, count: int) -> list[psycopg.Cursor[Any]]:
        """``count`` cursors of the connection, each free for one statement (results read before the next)."""
        while len(self._cursors) < count:
            self._cursors.append(self.conn.cursor())
        return self._cursors[:count]


def _outcome(job: Job[Any], session: Session) -> tuple[Any, BaseException | None]:
    """``job`` run alone: its result, or the exception it raised (a connection failure as StoreUnavailable)."""
    try:
        if isinstance(job, Query):
            return job.run(session.cursors(1)[0]), None
        return job(session.conn), None
    except psycopg.OperationalError as exc:
        return None, StoreUnavailable(_reason(exc))
    except Exception as exc:  # noqa: BLE001 -- handed to the awaiting coroutine
        return None, exc


@dataclass(frozen=True, slots=True)
class Query(Generic[T]):
    """A job that is one statement: ``finish`` makes the result from its cursor. Queries queued together run in one
    pipeline (:func:`pipelined`): one round trip for all."""

    sql: str
    params: tuple[object, ...]
    finish: Callable[[psycopg.Cursor[Any]], T]

    def __call__(self, conn: Conn) -> T:
        return self.finish(conn.execute(self.sql, self.params))

    def run(self, cursor: psycopg.Cursor[Any]) -> T:
        """The statement on ``cursor`` (a reused one), and its result."""
        return self.finish(cursor.execute(self.sql, self.params))


def in_one_transaction(session: Session, jobs: Sequence[Job[Any]]) -> list[tuple[Any, BaseException | None]]:
    """A :data:`GroupRunner` for :class:`Query` jobs (writes): all sent as one query string, which PostgreSQL runs as
    one transaction (one write, one round trip, one commit: psycopg's pipeline writes each statement on its own and
    hands the interpreter over around each wait). When one fails, nothing of the transaction is kept and each job
    runs again alone, so one job's failure is its own; a connection lost (the commit's fate unknown) is
    StoreUnavailable for all."""
    if len(jobs) == 1:
        return [_outcome(jobs[0], session)]
    queries, cursor = _queries(jobs), session.client_cursor()
    try:
        cursor.execute(";".join(cursor.mogrify(query.sql, query.params) for query in queries))
        outcomes = []
        for index, query in enumerate(queries):
            if index:
                cursor.nextset()
            outcomes.append(_finished(query, cursor))
    except psycopg.OperationalError as exc:
        return [(None, StoreUnavailable(_reason(exc)))] * len(jobs)
    except Exception:  # noqa: BLE001 -- rolled back: nothing of the batch is committed, so each may run alone
        return [_outcome(job, session) for job in jobs]
    return outcomes


def pipelined(session: Session, jobs: Sequence[Job[Any]]) -> list[tuple[Any, BaseException | None]]:
    """A :data:`GroupRunner` for :class:`Query` jobs (reads: each its own statement, safe to run again): all sent
    before any answer is read. When any fails, each runs again alone, so one query's failure is its own."""
    if len(jobs) == 1:
        return [_outcome(jobs[0], session)]
    queries, conn = _queries(jobs), session.conn
    cursors = session.cursors(len(queries))
    try:
        with conn.pipeline():
            for query, cursor in zip(queries, cursors, strict=True):
                cursor.execute(query.sql, query.params)
    except Exception:  # noqa: BLE001 -- reads change nothing: each runs again alone, with its own outcome
        return [_outcome(job, session) for job in jobs]
    return [_finished(query, cursor) for query, cursor in zip(queries, cursors, strict=True)]


def _queries(jobs: Sequence[Job[Any]]) -> list[Query[Any]]:
    queries = [job for job in jobs if isinstance(job, Query)]
    if len(queries) != len(jobs):
        raise TypeError("this group runs Query jobs only")
    return queries


def _finished(query: Query[Any], cursor: psycopg.Cursor[Any]) -> tuple[Any, BaseException | None]:
    try:
        return query.finish(cursor), None
    except Exception as exc:  # noqa: BLE001 -- handed to the awaiting coroutine
        return None, exc


class _Lane:
    """One thread owning one connection, running the jobs queued for it in batches."""

    def __init__(self, owner: PgThreads, name: str) -> None:
        self._owner = owner
        #: Batches of jobs (each what one turn of the loop asked for); None: stop.
        self.jobs: queue.SimpleQueue[list[_Item] | None] = queue.SimpleQueue()
        #: Jobs handed to the lane (counted by the loop) and taken by it (counted by the lane): each counter has
        #: one writer, so the difference is the jobs waiting without a lock.
        self.posted = 0
        self.taken = 0
        self.busy = False
        self.thread = threading.Thread(target=self._serve, name=f"petstore-pg-{name}", daemon=True)
        self.thread.start()

    def _take(self, first: list[_Item]) -> tuple[list[_Item], bool]:
        """``first`` and the batches queued behind it (up to :data:`_BATCH` jobs), without the jobs answered
        already; and whether the stop mark was among them."""
        items, stop = list(first), False
        while len(items) < _BATCH:
            try:
                batch = self.jobs.get_nowait()
            except queue.Empty:
                break
            if batch is None:
                stop = True
                break
            items += batch
        self.taken += len(items)
        return [item for item in items if not item.future.done()], stop

    def _serve(self) -> None:
        session: Session | None = None
        stop = False
        try:
            while not stop and (first := self.jobs.get()) is not None:
                items, stop = self._take(first)
                if items:
                    self.busy = True
                    session = self._run(session, items)
                    self.busy = False
        finally:
            if session is not None:
                session.conn.close()

    def _run(self, session: Session | None, items: list[_Item]) -> Session | None:
        """``items`` run on ``session``'s connection, or on the one that replaced it (whose session is returned)."""
        try:
            conn = self._owner.usable(None if session is None else session.conn)
        except (psycopg.OperationalError, StoreUnavailable) as exc:
            error = exc if isinstance(exc, StoreUnavailable) else StoreUnavailable(_reason(exc))
            self._owner.finish([(item.future, None, error) for item in items])
            return None  # closed by usable(), if there was one
        if session is None or session.conn is not conn:
            session = Session(conn)
        self._owner.finish(_run(session, items))
        return session


def _run(session: Session, items: list[_Item]) -> list[_Done]:
    """Every item's outcome: runs of consecutive items of one group together, the others alone."""
    done: list[_Done] = []
    start = 0
    while start < len(items):
        group = items[start].group
        end = start + 1
        while group is not None and end < len(items) and items[end].group is group:
            end += 1
        run = items[start:end]
        outcomes = group(session, [item.job for item in run]) if group else [_outcome(run[0].job, session)]
        done += [(item.future, result, error) for item, (result, error) in zip(run, outcomes, strict=True)]
        start = end
    return done


class PgThreads:
    """A lane per name in ``lanes`` (one connection to ``conninfo`` each), running jobs for the loop that made it."""

    def __init__(self, conninfo: str, *, lanes: Sequence[str] = LANES) -> None:
        self._conninfo = conninfo
        self._loop = asyncio.get_running_loop()
        self._lock = threading.Lock()
        self._done: list[_Done] = []
        #: When each job still unsettled was queued (the loop's clock); only the loop touches it.
        self._queued: dict[asyncio.Future[Any], float] = {}
        #: ``time.monotonic()`` before which no new connection is attempted (after a failed one).
        self._retry_at = 0.0
        #: Jobs asked for in this turn of the loop, not yet handed to their lanes.
        self._outbox: list[tuple[_Lane, _Item]] = []
        self._lanes = {name: _Lane(self, name) for name in lanes}
        self._sweeper = self._loop.create_task(self._sweep())

    def run(self, job: Job[T], *, lane: str = LANES[0], group: GroupRunner | None = None) -> asyncio.Future[T]:
        """Queue ``job`` on ``lane`` (with the other jobs of ``group`` queued beside it, run by that runner);
        the future settles with its result, its exception, or StoreUnavailable."""
        future: asyncio.Future[T] = self._loop.create_future()
        self._queued[future] = self._loop.time()
        if not self._outbox:
            self._loop.call_soon(self._post)
        self._outbox.append((self._lanes[lane], _Item(future, job, group)))
        return future

    def _post(self) -> None:
        """The jobs this turn of the loop asked for, handed to their lanes at once: a lane woken by the first job
        finds the others beside it, and runs (or commits) them together."""
        outbox, self._outbox = self._outbox, []
        batches: dict[_Lane, list[_Item]] = {}
        for lane, item in outbox:
            batches.setdefault(lane, []).append(item)
        for lane, items in batches.items():
            lane.posted += len(items)
            lane.jobs.put(items)

    def stats(self) -> tuple[int, int]:
        """(connections running a job, jobs waiting for one)."""
        lanes = self._lanes.values()
        return sum(lane.busy for lane in lanes), sum(lane.posted - lane.taken for lane in lanes)

    async def stop(self) -> None:
        """Finish the jobs queued, close the connections, end the threads (a thread stuck on a dead server is left
        to the process's exit)."""
        self._sweeper.cancel()
        for lane in self._lanes.values():
            lane.jobs.put(None)
        await asyncio.to_thread(self._join)

    def _join(self) -> None:
        deadline = time.monotonic() + OPERATION_TIMEOUT
        for lane in self._lanes.values():
            lane.thread.join(max(0.0, deadline - time.monotonic()))

    async def _sweep(self) -> None:
        while True:
            await asyncio.sleep(_SWEEP_EVERY)
            late = self._loop.time() - OPERATION_TIMEOUT
            for future in [future for future, queued in self._queued.items() if queued <= late]:
                del self._queued[future]
                if not future.done():
                    future.set_exception(StoreUnavailable(f"no answer within {OPERATION_TIMEOUT:g} s"))

    def usable(self, conn: Conn | None) -> Conn:
        """``conn`` if the server has not closed it, else a fresh connection (StoreUnavailable when one failed less
        than :data:`RETRY_INTERVAL` ago; psycopg's OperationalError when none can be made)."""
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

    def finish(self, done: list[_Done]) -> None:
        """Hand results to the loop; one wake-up settles every result handed over before the loop gets to it."""
        with self._lock:
            wake = not self._done
            self._done += done
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

"""A lease that exactly one process holds: which of several bot replicas answers and runs background work.

On PostgreSQL the lease is a session advisory lock (``pg_try_advisory_lock``) on a connection of its own: it is held
while that connection lives, so a holder killed with SIGKILL (its socket closed by the kernel) loses it at once, and
one on a vanished host within about nine seconds (TCP keepalives, asked of the server in the connection options).
The holder runs ``SELECT 1`` on that connection every ``check`` seconds: a connection that broke or does not answer
within ``check`` seconds means the lease is lost.

On SQLite (one host, one file) the lease is a row ``(name, holder, expires_at)``: taken when free or expired, its
expiry pushed ``ttl`` seconds ahead every ``check`` seconds by the holder (a heartbeat); a holder killed with SIGKILL
stops beating and the lease is free ``ttl`` seconds later.

:meth:`Lease.hold` keeps trying to take the lease (every ``retry`` seconds) and checks it while held, until stopped;
:attr:`Lease.held` says whether this process holds it now, :meth:`Lease.wait_held` and :meth:`Lease.wait_lost`
wait for a change.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import secrets
import socket
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar

from petstore_os.db_url import redact, shown

from .db import Database, StateError, Transaction, open_database, parse_state_url

if TYPE_CHECKING:
    import psycopg

__all__ = ["Fence", "Lease", "open_lease"]

log = logging.getLogger("petstore_state.lease")
T = TypeVar("T")

_SCHEMA = [
    "CREATE TABLE IF NOT EXISTS lease_leases ("
    " name TEXT PRIMARY KEY, holder TEXT NOT NULL, expires_at DOUBLE PRECISION NOT NULL)"
]
#: The lease's PostgreSQL session: server-side keepalives (a holder whose host vanished is dropped in ~9 s); the
#: connection also sets client keepalives and a TCP user timeout (a check on a silent network fails within ~5 s).
_PG_OPTIONS = "-c tcp_keepalives_idle=5 -c tcp_keepalives_interval=2 -c tcp_keepalives_count=2"


@dataclass(frozen=True)
class Fence:
    """A SQL condition (``?`` placeholders, for :class:`~petstore_state.db.Transaction`) true only while this
    process holds the lease, checked inside another transaction of the same database: work guarded by it is not done
    by a holder that lost the lease without knowing yet."""

    sql: str
    params: tuple[object, ...]


#: No lease held (yet): a condition that is never true.
_NOT_HELD = Fence("1 = 0", ())


class _Backend(Protocol):
    """One way of holding a lease; every call blocks (the lease runs it on a thread of its own)."""

    def take(self) -> bool: ...

    def fence(self) -> Fence: ...

    def still_held(self) -> bool: ...

    def give_up(self) -> None: ...

    def close(self) -> None: ...


class Lease:
    """A named lease (see the module docstring). Open with :func:`open_lease`; :meth:`hold` it until stopped."""

    def __init__(self, *, name: str, holder: str, backend: _Backend, check: float, retry: float) -> None:
        self.name = name
        #: Who this process is in the lease's records and logs: host, pid and a random part.
        self.holder = holder
        self._backend = backend
        self._check = check
        self._retry = retry
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="petstore-lease")
        self._held = False
        self._closed = False
        self._failing = False
        self._got = asyncio.Event()
        self._lost = asyncio.Event()
        self._lost.set()

    def __repr__(self) -> str:
        return f"Lease(name={self.name!r}, holder={self.holder!r}, held={self._held})"

    @property
    def held(self) -> bool:
        """Whether this process holds the lease now (as of its last check)."""
        return self._held

    async def wait_held(self) -> None:
        """Returns once this process holds the lease."""
        await self._got.wait()

    async def wait_lost(self) -> None:
        """Returns once this process does not hold the lease."""
        await self._lost.wait()

    def fence(self) -> Fence:
        """The condition, for a statement in the same database, that this process holds the lease right then."""
        return self._backend.fence() if self._held else _NOT_HELD

    async def acquire(self) -> bool:
        """One attempt to take the lease (True: held now); a database failure counts as not held."""
        self._set(await self._call(self._backend.take, "take"))
        return self._held

    async def check(self) -> bool:
        """The holder's check (and, on SQLite, heartbeat): False when the lease was lost."""
        if self._held:
            self._set(await self._call(self._backend.still_held, "check"))
        return self._held

    async def release(self) -> None:
        """Give the lease up now (the other replica takes it at its next try)."""
        was, self._held = self._held, False
        self._set(False)
        if was:
            log.info("lease %s released by %s", self.name, self.holder)
            await self._call(self._backend.give_up, "release")

    async def hold(self, stop: asyncio.Event) -> None:
        """Take the lease as soon as it is free and check it while held, until ``stop``; then release it."""
        try:
            while not stop.is_set():
                await (self.check() if self._held else self.acquire())
                wait = self._check if self._held else self._retry
                try:
                    await asyncio.wait_for(stop.wait(), timeout=wait)
                except TimeoutError:
                    pass
        finally:
            await self.release()

    def close(self) -> None:
        """Release (if held) and close the lease's connection; call after :meth:`hold` returned."""
        self._set(False)
        if not self._closed:
            self._closed = True
            self._thread.submit(self._backend.close).result()
            self._thread.shutdown(wait=True)

    def _set(self, held: bool) -> None:
        if held and not self._held:
            log.info("lease %s taken by %s", self.name, self.holder)
        elif self._held and not held:
            log.warning("lease %s lost by %s", self.name, self.holder)
        self._held = held
        (self._lost.clear if held else self._lost.set)()
        (self._got.set if held else self._got.clear)()

    async def _call(self, work: Callable[[], bool] | Callable[[], None], what: str) -> bool:
        loop = asyncio.get_running_loop()
        try:
            done = bool(await asyncio.wait_for(loop.run_in_executor(self._thread, work), timeout=self._check + 5))
        except (StateError, TimeoutError) as exc:
            if not self._failing:  # once per outage: a replica tries every second
                log.warning("lease %s: %s failed (%s)", self.name, what, exc or type(exc).__name__)
            self._failing = True
            return False
        if self._failing:
            log.info("lease %s: the state database answers again", self.name)
            self._failing = False
        return done


class _SqliteLease:
    """The lease row of a SQLite state database (see the module docstring)."""

    def __init__(self, database: Database, *, name: str, holder: str, ttl: float) -> None:
        self._db, self._name, self._holder, self._ttl = database, name, holder, ttl
        database.ensure_schema("lease", _SCHEMA)

    def take(self) -> bool:
        def take(tx: Transaction) -> bool:
            now = time.time()
            changed = tx.execute(
                "INSERT INTO lease_leases (name, holder, expires_at) VALUES (?, ?, ?) ON CONFLICT (name) DO UPDATE"
                " SET holder = excluded.holder, expires_at = excluded.expires_at"
                " WHERE lease_leases.expires_at < ? OR lease_leases.holder = excluded.holder",
                (self._name, self._holder, now + self._ttl, now),
            )
            return changed == 1

        return self._db.run_sync(take)

    def fence(self) -> Fence:
        return Fence(
            "EXISTS (SELECT 1 FROM lease_leases WHERE name = ? AND holder = ? AND expires_at >= ?)",
            (self._name, self._holder, time.time()),
        )

    def still_held(self) -> bool:
        def beat(tx: Transaction) -> bool:
            changed = tx.execute(
                "UPDATE lease_leases SET expires_at = ? WHERE name = ? AND holder = ? AND expires_at >= ?",
                (time.time() + self._ttl, self._name, self._holder, time.time()),
            )
            return changed == 1

        return self._db.run_sync(beat)

    def give_up(self) -> None:
        try:
            self._db.run_sync(
                lambda tx: tx.execute(
                    "DELETE FROM lease_leases WHERE name = ? AND holder = ?", (self._name, self._holder)
                )
            )
        except StateError as exc:  # it expires by itself
            log.warning("lease %s: release failed (%s)", self._name, exc)

    def close(self) -> None:
        self.give_up()
        self._db.close()


class _PgLease:
    """A session advisory lock on a PostgreSQL connection of the lease's own (see the module docstring)."""

    def __init__(self, url: str, *, name: str, where: str) -> None:
        self._url, self._where = url, where
        digest = hashlib.sha256(f"petstore lease {name}".encode()).digest()
        self._key = int.from_bytes(digest[:8], "big", signed=True)
        self._conn: psycopg.Connection[tuple[object, ...]] | None = None
        self._pid = 0

    def fence(self) -> Fence:
        """The lock in ``pg_locks``: held by this lease's session (its backend pid), granted."""
        return Fence(
            "EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted AND pid = ?"
            " AND classid::bigint = ? AND objid::bigint = ? AND objsubid = 1)",
            (self._pid, (self._key >> 32) & 0xFFFFFFFF, self._key & 0xFFFFFFFF),
        )

    def take(self) -> bool:
        import psycopg

        if self._conn is None or self._conn.closed or self._conn.broken:
            self._drop()
            try:
                self._conn = psycopg.connect(
                    self._url,
                    autocommit=True,
                    connect_timeout=5,
                    options=_PG_OPTIONS,
                    keepalives=1,
                    keepalives_idle=5,
                    keepalives_interval=2,
                    keepalives_count=2,
                    tcp_user_timeout=5000,
                )
                pid = self._conn.execute("SELECT pg_backend_pid()").fetchone()
            except psycopg.Error as exc:
                self._drop()
                raise StateError(
                    redact(f"cannot connect to the bot's state at {self._where}: {exc}", self._url)
                ) from None
            self._pid = pid[0] if pid and isinstance(pid[0], int) else 0
        try:
            row = self._conn.execute("SELECT pg_try_advisory_lock(%s)", (self._key,)).fetchone()
        except psycopg.Error as exc:
            self._drop()
            raise StateError(f"the bot's state database failed: {exc}") from None
        return bool(row and row[0])

    def still_held(self) -> bool:
        import psycopg

        if self._conn is None:
            return False
        try:
            self._conn.execute("SELECT 1").fetchone()
        except psycopg.Error:
            self._drop()
            return False
        return True

    def give_up(self) -> None:
        """The lock released before the connection closes: a session's end releases it too, but only once its
        backend has gone, after the close returns, so another replica's next try could still find it held."""
        import psycopg

        if self._conn is not None:
            try:
                self._conn.execute("SELECT pg_advisory_unlock(%s)", (self._key,))
            except psycopg.Error:
                pass  # a broken connection: its session's end releases the lock
        self._drop()

    def close(self) -> None:
        self._drop()

    def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.close()
            except Exception:  # noqa: BLE001 - a broken connection may fail to close; it is dropped either way
                pass


def open_lease(
    state: str | None,
    *,
    state_dir: Path,
    name: str,
    ttl: float = 6.0,
    check: float = 2.0,
    retry: float = 1.0,
) -> Lease:
    """The lease ``name`` in the state database ``state`` names (as ``[bot] state``; unset: SQLite in
    ``state_dir``). Not yet taken: :meth:`Lease.hold` or :meth:`Lease.acquire` it.

    ``ttl``: how long a SQLite lease outlives its holder's last heartbeat; ``check``: how often the holder checks
    (and beats); ``retry``: how often the others try to take it. A replica takes over at most ``ttl + retry``
    seconds after the holder died on SQLite, ``retry`` on PostgreSQL.
    """
    if not 0 < check < ttl:
        raise ValueError("the lease's check interval must be shorter than its ttl")
    holder = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"
    try:
        dialect, target = parse_state_url(state, state_dir=state_dir)
    except ValueError as exc:
        raise StateError(f"[bot] state: {exc}") from None
    backend: _Backend
    if dialect == "sqlite":
        backend = _SqliteLease(open_database(state, state_dir=state_dir), name=name, holder=holder, ttl=ttl)
    else:
        backend = _PgLease(target, name=name, where=shown(target))  # connects when first taken
    return Lease(name=name, holder=holder, backend=backend, check=check, retry=retry)

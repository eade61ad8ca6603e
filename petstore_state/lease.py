"""A lease that exactly one process holds, and fences: which of several bot replicas answers and runs background work.

The lease is a row ``lease_holders(name, holder, epoch, expires_at)`` in the state database, on SQLite and on
PostgreSQL alike, its times on the database's clock. A process takes it when it is expired (or its own), which
moves ``epoch`` on by one and sets ``expires_at`` to the database's now + ``ttl``; the holder renews it every
``check`` seconds (``UPDATE ... WHERE holder = me AND epoch = my epoch AND expires_at > now``: 0 rows, lost).
A holder that stops renewing (killed, frozen by SIGSTOP, cut off) loses it ``ttl`` seconds after its last renewal,
whatever its sockets do: a frozen process's PostgreSQL session stays open, so no session lock could tell.

The holder acts only while the lease is valid by its own monotonic clock (:attr:`Lease.held`): from the moment it
*sent* its last successful renewal (or take), for ``ttl`` minus a margin; the row expires later than that in the
database, so a holder frozen past its lease wakes up knowing it is no longer valid, before it does anything.
Every side effect is also claimed in the store in a transaction that checks the lease there
(:meth:`Lease.fence`: ``holder = me AND epoch = my epoch AND expires_at > now``), so a holder that lost the lease
without knowing yet claims nothing, and a claim made under an older epoch never stands beside a newer holder's.

:meth:`Lease.hold` keeps trying to take the lease (every ``retry`` seconds) and renews it while held, until
stopped; :meth:`Lease.wait_held` and :meth:`Lease.wait_lost` wait for a change.
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import socket
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from petstore_os.db_url import redact, shown

from .db import Database, Dialect, StateError, Transaction, open_database, parse_state_url

__all__ = ["Fence", "Lease", "fenced", "open_lease"]

log = logging.getLogger("petstore_state.lease")

#: Version 1, the lease before it fenced (a SQLite row, a PostgreSQL advisory lock); version 2, the fencing row. A
#: SQLite process of version 1 still running loses its lease with its table (it stops acting rather than act beside
#: one of version 2).
_SCHEMA = [
    "CREATE TABLE IF NOT EXISTS lease_leases ("
    " name TEXT PRIMARY KEY, holder TEXT NOT NULL, expires_at DOUBLE PRECISION NOT NULL)"
]
_UPGRADES = [
    [
        "CREATE TABLE IF NOT EXISTS lease_holders (name TEXT PRIMARY KEY, holder TEXT NOT NULL, epoch BIGINT NOT NULL,"
        " expires_at DOUBLE PRECISION NOT NULL)",
        "DROP TABLE IF EXISTS lease_leases",
    ]
]
#: The database's clock, in seconds since the epoch: every process compares expiries with the same clock.
_NOW: dict[Dialect, str] = {
    "sqlite": "((julianday('now') - 2440587.5) * 86400.0)",
    "postgresql": "EXTRACT(EPOCH FROM clock_timestamp())::double precision",
}
#: The part of ``ttl`` a holder does not use: it stops acting this much before its lease can expire in the database.
MARGIN = 0.2
#: The lease's PostgreSQL session: server-side keepalives, and no statement of the lease waits more than 5 s (a
#: renewal that cannot finish is a lost one); the connection also sets client keepalives and a TCP user timeout.
_PG_OPTIONS = (
    "-c tcp_keepalives_idle=5 -c tcp_keepalives_interval=2 -c tcp_keepalives_count=2 -c statement_timeout=5000"
)


@dataclass(frozen=True)
class Fence:
    """A SQL condition (``?`` placeholders, for :class:`~petstore_state.db.Transaction`) true only while this
    process holds the lease under the epoch it took, checked inside another transaction of the same database: work
    guarded by it is not done by a holder that lost the lease without knowing yet."""

    sql: str
    params: tuple[object, ...]


#: No lease held (yet), or no longer valid by the holder's clock: a condition that is never true.
_NOT_HELD = Fence("1 = 0", ())


def fenced(fence: Fence | None) -> tuple[str, tuple[object, ...]]:
    """``fence`` as the end of a ``WHERE`` (`` AND (...)``) and its parameters; nothing when there is no lease."""
    return ("", ()) if fence is None else (f" AND ({fence.sql})", fence.params)


class Lease:
    """A named lease (see the module docstring). Open with :func:`open_lease`; :meth:`hold` it until stopped."""

    def __init__(self, *, row: _LeaseRow, ttl: float, check: float, retry: float) -> None:
        self.name = row.name
        #: Who this process is in the lease's records and logs: host, pid and a random part.
        self.holder = row.holder
        self._row = row
        self._ttl, self._check, self._retry = ttl, check, retry
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="petstore-lease")
        self._held = False
        self._valid_until = 0.0
        self._lapse: asyncio.TimerHandle | None = None
        self._closed = False
        self._failing = False
        self._got = asyncio.Event()
        self._lost = asyncio.Event()
        self._lost.set()

    def __repr__(self) -> str:
        return f"Lease(name={self.name!r}, holder={self.holder!r}, held={self.held})"

    @property
    def held(self) -> bool:
        """Whether this process may act now: its last take or renewal succeeded, and by its own monotonic clock
        less than ``ttl`` minus the margin has passed since it sent that."""
        return self._held and time.monotonic() < self._valid_until

    @property
    def epoch(self) -> int:
        """The epoch this process took the lease under (0 before its first take)."""
        return self._row.epoch

    async def wait_held(self) -> None:
        """Returns once this process holds the lease (as of its last take or renewal)."""
        await self._got.wait()

    async def wait_lost(self) -> None:
        """Returns once this process does not hold the lease (as of its last renewal)."""
        await self._lost.wait()

    def fence(self) -> Fence:
        """The condition, for a statement in the same database, that this process holds the lease under its epoch
        right then (never true once its own clock says the lease is no longer valid)."""
        return self._row.fence() if self.held else _NOT_HELD

    async def acquire(self) -> bool:
        """One attempt to take the lease (True: held now); a database failure counts as not held."""
        await self._renewed(self._row.take, "take")
        return self._held

    async def check(self) -> bool:
        """The holder's renewal: False when the lease was lost (or could not be renewed)."""
        if self._held:
            await self._renewed(self._row.renew, "renewal")
        return self._held

    async def release(self) -> None:
        """Give the lease up now (the other replica takes it at its next try)."""
        was = self._held
        self._set(False)
        if was:
            log.info("lease %s released by %s", self.name, self.holder)
            await self._call(self._row.give_up, "release")

    async def hold(self, stop: asyncio.Event) -> None:
        """Take the lease as soon as it is free and renew it while held, until ``stop``; then release it."""
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
            self._thread.submit(self._row.close).result()
            self._thread.shutdown(wait=True)

    async def _renewed(self, work: Callable[[], bool], what: str) -> None:
        """Run a take or renewal; when it succeeds the lease is valid for ``ttl`` minus the margin from now (the
        moment it was sent, before the database set the new expiry)."""
        sent = time.monotonic()
        if await self._call(work, what):
            self._valid_until = sent + self._ttl * (1 - MARGIN)
            self._set(True)
            if self._lapse is not None:
                self._lapse.cancel()
            # the loop's clock is time.monotonic: at the end of the validity, waiters hear it is lost
            self._lapse = asyncio.get_running_loop().call_at(self._valid_until, self._lapsed)
        else:
            self._set(False)

    def _lapsed(self) -> None:
        """The validity ran out before a renewal came back (a slow database, or this process was frozen)."""
        if self._held and time.monotonic() >= self._valid_until:
            log.warning("lease %s: no renewal in time, %s stops acting", self.name, self.holder)
            self._set(False)

    def _set(self, held: bool) -> None:
        if held and not self._held:
            log.info("lease %s taken by %s (epoch %d)", self.name, self.holder, self._row.epoch)
        elif self._held and not held:
            log.warning("lease %s lost by %s", self.name, self.holder)
        self._held = held
        if not held:
            self._valid_until = 0.0
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


class _LeaseRow:
    """The lease's row in a database of its own connection (see the module docstring); every call blocks (the
    lease runs it on a thread of its own)."""

    def __init__(self, database: Database, *, name: str, holder: str, ttl: float) -> None:
        self._db, self.name, self.holder, self._ttl = database, name, holder, ttl
        self._now = _NOW[database.dialect]
        #: The epoch of this process's last take (0: never taken).
        self.epoch = 0

    def take(self) -> bool:
        """Take the lease when it is expired or this process's own: a new epoch, ``ttl`` from the database's now."""
        self._db.ensure_schema("lease", _SCHEMA, upgrades=_UPGRADES)
        now = self._now

        def take(tx: Transaction) -> int | None:
            row = tx.one(
                f"INSERT INTO lease_holders (name, holder, epoch, expires_at) VALUES (?, ?, 1, {now} + ?)"
                " ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, epoch = lease_holders.epoch + 1,"
                f" expires_at = excluded.expires_at WHERE lease_holders.expires_at <= {now}"
                " OR lease_holders.holder = excluded.holder RETURNING epoch",
                (self.name, self.holder, self._ttl),
            )
            return None if row is None else int(str(row[0]))

        epoch = self._db.run_sync(take)
        if epoch is None:
            return False
        self.epoch = epoch
        return True

    def renew(self) -> bool:
        now = self._now
        changed = self._db.run_sync(
            lambda tx: tx.execute(
                f"UPDATE lease_holders SET expires_at = {now} + ? WHERE name = ? AND holder = ? AND epoch = ?"
                f" AND expires_at > {now}",
                (self._ttl, self.name, self.holder, self.epoch),
            )
        )
        return changed == 1

    def fence(self) -> Fence:
        return Fence(
            "EXISTS (SELECT 1 FROM lease_holders WHERE name = ? AND holder = ? AND epoch = ?"
            f" AND expires_at > {self._now})",
            (self.name, self.holder, self.epoch),
        )

    def give_up(self) -> None:
        """Expire the row now (kept, so the next take's epoch is still a new one)."""
        try:
            self._db.run_sync(
                lambda tx: tx.execute(
                    "UPDATE lease_holders SET expires_at = 0 WHERE name = ? AND holder = ? AND epoch = ?",
                    (self.name, self.holder, self.epoch),
                )
            )
        except StateError as exc:  # it expires by itself
            log.warning("lease %s: release failed (%s)", self.name, exc)

    def close(self) -> None:
        if self.epoch:
            self.give_up()
        self._db.close()


def _lease_database(dialect: Dialect, target: str, *, state: str | None, state_dir: Path) -> Database:
    """The lease's own connection: SQLite's file as the bot's state; PostgreSQL with keepalives and a statement
    timeout, connected when first used."""
    if dialect == "sqlite":
        return open_database(state, state_dir=state_dir)
    where = shown(target)

    def connect() -> object:
        import psycopg

        try:
            return psycopg.connect(
                target,
                connect_timeout=5,
                options=_PG_OPTIONS,
                keepalives=1,
                keepalives_idle=5,
                keepalives_interval=2,
                keepalives_count=2,
                tcp_user_timeout=5000,
            )
        except psycopg.Error as exc:
            said = " ".join(str(exc).split())  # libpq's messages span several lines
            raise StateError(redact(f"cannot connect to the bot's state at {where}: {said}", target)) from None

    return Database(dialect="postgresql", connect=connect, where=where)


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

    ``ttl``: how long the lease outlives its holder's last renewal in the database; ``check``: how often the
    holder renews it (at most ``ttl`` minus the margin: ``ttl / 3`` leaves two tries); ``retry``: how often the
    others try to take it. A replica takes over at most ``ttl + retry`` seconds after the holder died or froze.
    """
    if not 0 < check < ttl * (1 - MARGIN):
        raise ValueError("the lease's check interval must be shorter than its ttl (less the margin)")
    holder = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"
    try:
        dialect, target = parse_state_url(state, state_dir=state_dir)
    except ValueError as exc:
        raise StateError(f"[bot] state: {exc}") from None
    database = _lease_database(dialect, target, state=state, state_dir=state_dir)
    return Lease(row=_LeaseRow(database, name=name, holder=holder, ttl=ttl), ttl=ttl, check=check, retry=retry)

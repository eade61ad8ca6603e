"""The lease on both backends: one holder at a time, released on stop, lost when the holder is killed or its
connection ends, taken over by a waiting process."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

import psycopg
import pytest

from petstore_state import open_database
from petstore_state.lease import Lease, open_lease

HOLDER = Path(__file__).with_name("lease_holder.py")


def _lease(state_url: str, tmp_path: Path, name: str = "bot") -> Lease:
    return open_lease(state_url, state_dir=tmp_path, name=name, ttl=3.0, check=1.0, retry=0.2)


@asynccontextmanager
async def _holding(lease: Lease) -> AsyncIterator[asyncio.Task[None]]:
    stop = asyncio.Event()
    task = asyncio.create_task(lease.hold(stop))
    try:
        yield task
    finally:
        stop.set()
        await task
        lease.close()


@contextmanager
def _holder_process(state_url: str, tmp_path: Path, name: str = "bot") -> Iterator[subprocess.Popen[str]]:
    process = subprocess.Popen(
        [sys.executable, str(HOLDER), state_url, str(tmp_path), name],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        yield process
    finally:
        if process.poll() is None:
            os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=10)


async def test_one_holder_at_a_time_and_the_next_after_release(state_url: str, tmp_path: Path) -> None:
    first, second = _lease(state_url, tmp_path), _lease(state_url, tmp_path)
    try:
        assert await first.acquire()
        assert not await second.acquire()
        assert await first.check()
        await first.release()
        assert not first.held
        assert await second.acquire()
        assert not await first.acquire()
    finally:
        first.close()
        second.close()


async def test_leases_of_other_names_are_independent(state_url: str, tmp_path: Path) -> None:
    matrix, slack = _lease(state_url, tmp_path, "matrix"), _lease(state_url, tmp_path, "slack")
    try:
        assert await matrix.acquire()
        assert await slack.acquire()
    finally:
        matrix.close()
        slack.close()


async def test_hold_takes_it_when_the_holder_stops_and_releases_on_stop(state_url: str, tmp_path: Path) -> None:
    first, second = _lease(state_url, tmp_path), _lease(state_url, tmp_path)
    async with _holding(first):
        await asyncio.wait_for(first.wait_held(), timeout=10)
        async with _holding(second):
            assert not second.held
            await first.release()  # the holder steps down: the waiting one takes it at its next try
            await asyncio.wait_for(second.wait_held(), timeout=10)
        assert not second.held
    third = _lease(state_url, tmp_path)
    try:
        assert await third.acquire(), "hold() released the lease when stopped"
    finally:
        third.close()


async def test_a_holder_killed_with_sigkill_loses_the_lease_and_the_other_takes_over(
    state_url: str, tmp_path: Path
) -> None:
    with _holder_process(state_url, tmp_path) as holder:
        assert holder.stdout is not None
        assert await asyncio.to_thread(holder.stdout.readline) == "held\n"
        standby = _lease(state_url, tmp_path)
        async with _holding(standby):
            assert not await standby.acquire()
            os.kill(holder.pid, signal.SIGKILL)
            await asyncio.wait_for(standby.wait_held(), timeout=10)


async def test_a_lease_held_by_another_process_is_not_taken(state_url: str, tmp_path: Path) -> None:
    """The other process's first try fails while this one holds it; it takes the lease once this one stopped."""
    mine, stop = _lease(state_url, tmp_path), asyncio.Event()
    holding = asyncio.create_task(mine.hold(stop))
    try:
        await asyncio.wait_for(mine.wait_held(), timeout=10)
        with _holder_process(state_url, tmp_path) as other:
            assert other.stdout is not None
            assert await asyncio.to_thread(other.stdout.readline) == "waiting\n"
            assert await mine.check()
            stop.set()
            await holding  # released: the other process takes the lease at its next try
            line = await asyncio.wait_for(asyncio.to_thread(other.stdout.readline), timeout=10)
            assert line == "held\n"
    finally:
        stop.set()
        await holding
        mine.close()


@pytest.mark.parametrize("state_url", ["postgresql"], indirect=True)
async def test_the_holder_notices_its_connection_ended(state_url: str, tmp_path: Path) -> None:
    """PostgreSQL: the lock lives with the lease's session; ended by the server, the holder's check says lost,
    and another process takes the lease."""
    holder, other = _lease(state_url, tmp_path), _lease(state_url, tmp_path)
    try:
        assert await holder.acquire()
        with psycopg.connect(state_url, autocommit=True) as admin:
            ended = admin.execute(
                # this database's lock only (tests beside it hold advisory locks too), its session waited for
                "SELECT pg_terminate_backend(pid, 10000) FROM pg_locks WHERE locktype = 'advisory' AND granted"
                " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
            ).fetchall()
        assert ended == [(True,)]
        assert not await holder.check()
        assert await other.acquire()
    finally:
        holder.close()
        other.close()


@pytest.mark.parametrize("state_url", ["sqlite"], indirect=True)
async def test_an_expired_lease_row_is_taken_and_its_old_holder_knows(state_url: str, tmp_path: Path) -> None:
    """SQLite: a holder that stopped beating (its row expired) loses the lease to the next one."""
    holder, other = _lease(state_url, tmp_path), _lease(state_url, tmp_path)
    try:
        assert await holder.acquire()
        db = open_database(state_url, state_dir=tmp_path)
        await db.run(lambda tx: tx.execute("UPDATE lease_leases SET expires_at = 0"))
        db.close()
        assert await other.acquire()
        assert not await holder.check()
    finally:
        holder.close()
        other.close()


def test_a_check_interval_beyond_the_ttl_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="shorter than its ttl"):
        open_lease(None, state_dir=tmp_path, name="bot", ttl=1.0, check=2.0)

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

import pytest

from petstore_state import Database, open_database
from petstore_state.lease import Fence, Lease, open_lease

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


async def test_an_expired_lease_is_taken_under_a_new_epoch_and_its_old_holder_knows(
    state_url: str, tmp_path: Path
) -> None:
    """A holder that stopped renewing (its row expired in the database) loses the lease to the next one, whose
    epoch is the next; the old holder's renewal fails and its fence no longer holds."""
    holder, other = _lease(state_url, tmp_path), _lease(state_url, tmp_path)
    db = open_database(state_url, state_dir=tmp_path)
    try:
        assert await holder.acquire()
        old_fence = holder.fence()
        assert await _holds(db, old_fence)
        await db.run(lambda tx: tx.execute("UPDATE lease_holders SET expires_at = 0"))
        assert not await _holds(db, old_fence), "an expired lease still fences in"
        assert await other.acquire()
        assert other.epoch == holder.epoch + 1
        assert not await holder.check()
        assert not await _holds(db, old_fence)
        assert await _holds(db, other.fence())
        assert not await _holds(db, holder.fence()), "a holder that knows it lost the lease fences nothing in"
    finally:
        db.close()
        holder.close()
        other.close()


async def test_a_holder_that_stops_renewing_is_replaced_after_the_ttl_and_knows_it_by_its_own_clock(
    state_url: str, tmp_path: Path
) -> None:
    """No renewal (the holder frozen, or its renewals lost), its session alive: the other takes the lease once the
    row expired in the database, and by then the old holder's own clock says its lease is no longer valid."""
    holder, other = _lease(state_url, tmp_path), _lease(state_url, tmp_path)
    try:
        assert await holder.acquire()
        assert holder.held
        async with _holding(other):
            await asyncio.wait_for(other.wait_held(), timeout=10)
            assert not holder.held, "two processes may act at once"
            assert holder.fence().sql == "1 = 0"
            await asyncio.wait_for(holder.wait_lost(), timeout=10)  # its waiters heard it at the end of its validity
    finally:
        holder.close()


async def test_a_released_lease_is_taken_at_once_under_a_new_epoch(state_url: str, tmp_path: Path) -> None:
    first, second = _lease(state_url, tmp_path), _lease(state_url, tmp_path)
    try:
        assert await first.acquire()
        await first.release()
        assert await second.acquire()
        await second.release()
        assert await first.acquire()
        assert (second.epoch, first.epoch) == (2, 3), "a release keeps the epoch counting"
    finally:
        first.close()
        second.close()


async def _holds(db: Database, fence: Fence) -> bool:
    return await db.run(lambda tx: tx.one(f"SELECT 1 WHERE {fence.sql}", fence.params)) is not None


def test_a_check_interval_beyond_the_ttl_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="shorter than its ttl"):
        open_lease(None, state_dir=tmp_path, name="bot", ttl=1.0, check=2.0)

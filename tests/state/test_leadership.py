"""Background work on the lease holder only (petstore_bot.replicas.Leadership), on both backends: started where the
lease is held, cancelled when it is lost, started on the next holder."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from petstore_bot.replicas import Leadership
from petstore_state.lease import open_lease


class _Watch:
    """Background work that says when it runs and when it was cancelled."""

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.cancelled = asyncio.Event()

    async def run(self) -> None:
        self.started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled.set()
            raise


async def test_work_runs_on_the_holder_only_and_moves_with_the_lease(state_url: str, tmp_path: Path) -> None:
    first, second = (
        open_lease(state_url, state_dir=tmp_path, name="slack", ttl=3.0, check=1.0, retry=0.1) for _ in "ab"
    )
    watches = [_Watch(), _Watch()]
    leaderships = [Leadership(first), Leadership(second)]
    for leadership, watch in zip(leaderships, watches, strict=True):
        leadership.add("watches", watch.run)
    stops = [asyncio.Event(), asyncio.Event()]
    running = [asyncio.create_task(leaderships[0].run(stops[0]))]
    try:
        await asyncio.wait_for(watches[0].started.wait(), timeout=10)
        running.append(asyncio.create_task(leaderships[1].run(stops[1])))  # the second starts once the first holds
        assert first.held and not second.held
        assert await leaderships[0].leading() and not await leaderships[1].leading()
        assert not await second.acquire()
        assert not watches[1].started.is_set()
        stops[0].set()  # the holder stops: its work is cancelled, the other process's starts
        await asyncio.wait_for(watches[1].started.wait(), timeout=10)
        assert watches[0].cancelled.is_set()
    finally:
        for stop in stops:
            stop.set()
        await asyncio.gather(*running)
        first.close()
        second.close()
    assert watches[1].cancelled.is_set()


def test_one_name_is_added_once(tmp_path: Path) -> None:
    leadership = Leadership(open_lease(None, state_dir=tmp_path, name="bot"))
    leadership.add("watches", _Watch().run)
    with pytest.raises(ValueError, match="added already"):
        leadership.add("watches", _Watch().run)
    leadership.lease.close()

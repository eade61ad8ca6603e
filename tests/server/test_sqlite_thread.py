"""SqliteThread: calls run in order on one thread, results and errors reach the right awaiter, the loop runs on."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator

import pytest

from petstore_server.sqlite_thread import SqliteThread


@pytest.fixture
def worker() -> Iterator[SqliteThread]:
    thread = SqliteThread(name="test-sqlite")
    yield thread
    thread.stop()


async def test_calls_run_in_order_on_one_thread_and_each_awaiter_gets_its_result(worker: SqliteThread) -> None:
    seen: list[int] = []
    names: set[str] = set()

    def call(i: int) -> int:
        seen.append(i)
        names.add(threading.current_thread().name)
        return i * i

    results = await asyncio.gather(*(worker.run(lambda i=i: call(i)) for i in range(500)))
    assert results == [i * i for i in range(500)]
    assert seen == list(range(500)) and names == {"test-sqlite"}


async def test_an_exception_reaches_its_awaiter_only(worker: SqliteThread) -> None:
    def fail() -> int:
        raise ValueError("no such pet")

    ok, bad, after = await asyncio.gather(
        worker.run(lambda: 1), worker.run(fail), worker.run(lambda: 3), return_exceptions=True
    )
    assert (ok, after) == (1, 3)
    assert isinstance(bad, ValueError) and str(bad) == "no such pet"


async def test_the_loop_runs_while_the_thread_works(worker: SqliteThread) -> None:
    loop_ran = threading.Event()
    waiting = worker.run(lambda: loop_ran.wait(timeout=30))  # True only if the loop went on meanwhile
    await asyncio.sleep(0)
    loop_ran.set()  # the loop got here while the call was still running on the thread
    assert await waiting is True


async def test_a_cancelled_awaiter_does_not_stop_later_calls(worker: SqliteThread) -> None:
    gate = threading.Event()
    slow = worker.run(lambda: gate.wait(timeout=30))
    slow.cancel()
    gate.set()
    assert await worker.run(lambda: "still here") == "still here"


def test_calls_from_successive_event_loops_each_settle_on_their_own_loop(worker: SqliteThread) -> None:
    async def one(value: int) -> tuple[int, asyncio.AbstractEventLoop]:
        return await worker.run(lambda: value), asyncio.get_running_loop()

    first, second = asyncio.run(one(1)), asyncio.run(one(2))
    assert (first[0], second[0]) == (1, 2) and first[1] is not second[1]


async def test_stop_finishes_what_is_queued_then_ends_the_thread() -> None:
    thread = SqliteThread(name="test-stop")
    pending = [thread.run(lambda i=i: i) for i in range(50)]
    await asyncio.to_thread(thread.stop)
    assert await asyncio.gather(*pending) == list(range(50))
    assert not any(t.name == "test-stop" for t in threading.enumerate())

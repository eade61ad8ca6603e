"""The Matrix dispatcher on its own: order per person, people side by side, the safe token (no homeserver)."""

from __future__ import annotations

import asyncio

import pytest

from petstore_bot.matrix_dispatch import Dispatcher


class Log:
    """What happened, in order, and which batches became safe."""

    def __init__(self) -> None:
        self.events: list[str] = []
        self.safe: list[str] = []

    def work(self, name: str, *, gate: asyncio.Event | None = None, ok: bool = True):  # type: ignore[no-untyped-def]
        async def run() -> bool:
            self.events.append(f"start {name}")
            if gate is not None:
                await gate.wait()
            self.events.append(f"end {name}")
            return ok

        return run


async def test_a_slow_message_holds_only_its_sender_and_the_token_waits_for_it() -> None:
    log = Log()
    dispatcher = Dispatcher(on_safe=log.safe.append)
    gate = asyncio.Event()
    first = dispatcher.begin("t1")
    await dispatcher.submit(first, key="alice", event_id="a1", work=log.work("a1", gate=gate))
    await dispatcher.submit(first, key="alice", event_id="a2", work=log.work("a2"))
    dispatcher.close(first)
    second = dispatcher.begin("t2")
    await dispatcher.submit(second, key="bob", event_id="b1", work=log.work("b1"))
    dispatcher.close(second)
    for _ in range(10):
        await asyncio.sleep(0)
    assert log.events == ["start a1", "start b1", "end b1"]  # bob answered while alice's first is in hand
    assert log.safe == [] and dispatcher.in_hand("a1") and dispatcher.holds("b1")  # t2 waits for t1
    gate.set()
    await dispatcher.drain()
    assert log.events[3:] == ["end a1", "start a2", "end a2"]  # alice's second only after her first
    assert log.safe == ["t1", "t2"] and not dispatcher.holds("b1") and not dispatcher.in_hand("a1")


async def test_a_message_left_unanswered_keeps_its_batch_and_later_ones_from_being_safe() -> None:
    log = Log()
    dispatcher = Dispatcher(on_safe=log.safe.append)
    first = dispatcher.begin("t1")
    await dispatcher.submit(first, key="alice", event_id="a1", work=log.work("a1", ok=False))
    dispatcher.close(first)
    second = dispatcher.begin("t2")
    await dispatcher.submit(second, key="bob", event_id="b1", work=log.work("b1"))
    dispatcher.close(second)
    await dispatcher.drain()
    assert log.safe == [] and dispatcher.holds("b1")  # a restart syncs from before t1 and skips b1 by its id


async def test_a_failing_work_counts_as_unanswered_and_the_others_go_on() -> None:
    log = Log()
    dispatcher = Dispatcher(on_safe=log.safe.append)

    async def boom() -> bool:
        raise RuntimeError("handler bug")

    batch = dispatcher.begin("t1")
    await dispatcher.submit(batch, key="alice", event_id="a1", work=boom)
    await dispatcher.submit(batch, key="alice", event_id="a2", work=log.work("a2"))
    dispatcher.close(batch)
    await dispatcher.drain()
    assert log.events == ["start a2", "end a2"] and log.safe == []


async def test_an_empty_batch_is_safe_when_closed_and_batches_become_safe_in_order() -> None:
    log = Log()
    dispatcher = Dispatcher(on_safe=log.safe.append)
    gate = asyncio.Event()
    first = dispatcher.begin("t1")
    await dispatcher.submit(first, key="alice", event_id="a1", work=log.work("a1", gate=gate))
    second = dispatcher.begin("t2")
    dispatcher.close(second)
    assert log.safe == []  # t1 is not closed yet
    dispatcher.close(first)
    gate.set()
    await dispatcher.drain()
    assert log.safe == ["t1", "t2"]


async def test_no_more_than_limit_messages_are_in_hand() -> None:
    log = Log()
    dispatcher = Dispatcher(on_safe=log.safe.append, limit=2)
    gates = [asyncio.Event() for _ in range(3)]
    batch = dispatcher.begin("t1")
    await dispatcher.submit(batch, key="a", event_id="1", work=log.work("1", gate=gates[0]))
    await dispatcher.submit(batch, key="b", event_id="2", work=log.work("2", gate=gates[1]))
    third = asyncio.ensure_future(dispatcher.submit(batch, key="c", event_id="3", work=log.work("3")))
    for _ in range(10):
        await asyncio.sleep(0)
    assert not third.done() and not dispatcher.in_hand("3")  # waits for room
    gates[0].set()
    await third
    dispatcher.close(batch)
    gates[1].set()
    await dispatcher.drain()
    assert log.safe == ["t1"] and sorted(e for e in log.events if e.startswith("end")) == ["end 1", "end 2", "end 3"]


async def test_cancel_stops_what_is_in_hand() -> None:
    log = Log()
    dispatcher = Dispatcher(on_safe=log.safe.append)
    batch = dispatcher.begin("t1")
    await dispatcher.submit(batch, key="a", event_id="1", work=log.work("1", gate=asyncio.Event()))
    dispatcher.close(batch)
    await asyncio.sleep(0)
    dispatcher.cancel()
    await dispatcher.drain()
    assert log.events == ["start 1"] and log.safe == [] and not dispatcher.in_hand("1")


def test_limit_must_be_positive() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        Dispatcher(on_safe=lambda _token: None, limit=0)

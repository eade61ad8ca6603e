"""The acknowledgement queue on an event loop whose clock the test moves (no waiting, no timing)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine

import pytest

from petstore_bot.slack_acks import Acks


class _ClockedLoop(asyncio.SelectorEventLoop):
    """An event loop whose ``time()`` is set by the test: timers fall due when the test moves it past them."""

    now = 1000.0

    def time(self) -> float:
        return self.now


def _run(scenario: Coroutine[object, object, None]) -> None:
    loop = _ClockedLoop()
    try:
        loop.run_until_complete(scenario)
    finally:
        loop.close()


async def _at(now: float) -> None:
    """Move the clock to ``now`` and let the loop run what fell due."""
    loop = asyncio.get_running_loop()
    assert isinstance(loop, _ClockedLoop)
    loop.now = now
    for _ in range(3):
        await asyncio.sleep(0)


def test_only_commands_still_running_when_due_are_acknowledged_once_in_order() -> None:
    async def scenario() -> None:
        acks, fired = Acks(1.5), list[str]()
        a = acks.start(lambda: fired.append("a"))  # due at 1001.5
        await _at(1001.0)
        b = acks.start(lambda: fired.append("b"))  # due at 1002.5
        c = acks.start(lambda: fired.append("c"))  # due at 1002.5, ends in time
        await _at(1001.4)
        assert fired == []
        await _at(1001.6)
        assert fired == ["a"]
        acks.end(a)  # ends after its acknowledgement: nothing more
        acks.end(c)
        await _at(1002.4)
        assert fired == ["a"]
        await _at(1002.6)
        assert fired == ["a", "b"]
        acks.end(b)
        d = acks.start(lambda: fired.append("d"))  # the queue was empty: a timer again, due at 1004.1
        acks.end(d)
        e = acks.start(lambda: fired.append("e"))
        await _at(1010.0)
        assert fired == ["a", "b", "e"]
        acks.end(e)
        await _at(1020.0)
        assert fired == ["a", "b", "e"]

    _run(scenario())


def test_an_acknowledgement_that_fails_is_logged_and_the_next_still_comes(caplog: pytest.LogCaptureFixture) -> None:
    async def scenario() -> None:
        acks, fired = Acks(1.0), list[str]()

        def broken() -> None:
            raise RuntimeError("boom")

        acks.start(broken)
        await _at(1000.5)
        acks.start(lambda: fired.append("second"))  # due at 1001.5
        await _at(1001.2)
        assert fired == []
        await _at(1001.6)
        assert fired == ["second"]

    with caplog.at_level(logging.ERROR, logger="petstore_bot.slack"):
        _run(scenario())
    assert "acknowledging a slow command failed" in caplog.text

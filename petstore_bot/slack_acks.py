"""When the commands in flight are due their acknowledgement: one loop timer for all of them.

Slack waits 3 s for a slash command's response; a command still running after ``after`` seconds is acknowledged
at once and its result posted later. Every command waits the same ``after``, so they fall due in the order they
started: a queue, oldest first, and a single timer for the oldest. A command that ends in time only clears its
entry (most end at once); a timer of its own per command (``call_later``, then ``cancel``, and the loop's upkeep of
the cancelled handles) cost more than that.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Callable

__all__ = ["Acks", "Due"]

log = logging.getLogger("petstore_bot.slack")


class Due:
    """One command's place in the queue: when it is due, and what acknowledges it (None once ended or fired)."""

    __slots__ = ("acknowledge", "at")

    def __init__(self, at: float, acknowledge: Callable[[], None]) -> None:
        self.at = at
        self.acknowledge: Callable[[], None] | None = acknowledge


class Acks:
    """``start`` when a command starts, ``end`` when it ends; ``acknowledge`` is called if it is still running
    ``after`` seconds after its start (once, on the event loop, as a ``call_later`` callback would be)."""

    def __init__(self, after: float) -> None:
        self._after = after
        self._queue: deque[Due] = deque()
        self._timer: asyncio.TimerHandle | None = None

    def start(self, acknowledge: Callable[[], None]) -> Due:
        loop = asyncio.get_running_loop()
        due = Due(loop.time() + self._after, acknowledge)
        self._queue.append(due)
        if self._timer is None:
            self._timer = loop.call_at(due.at, self._fire, loop)
        return due

    def end(self, due: Due) -> None:
        due.acknowledge = None
        queue = self._queue
        while queue and queue[0].acknowledge is None:
            queue.popleft()

    def _fire(self, loop: asyncio.AbstractEventLoop) -> None:
        """Acknowledge every command due by now; the timer then waits for the oldest still running."""
        now, queue = loop.time(), self._queue
        while queue and (queue[0].acknowledge is None or queue[0].at <= now):
            due = queue.popleft()
            acknowledge, due.acknowledge = due.acknowledge, None
            if acknowledge is not None:
                try:
                    acknowledge()
                except Exception:  # as the loop would log a failed call_later callback; the others still run
                    log.exception("acknowledging a slow command failed")
        self._timer = loop.call_at(queue[0].at, self._fire, loop) if queue else None

"""Messages of a Matrix sync handled side by side: one person's slow command does not hold the others.

The sync loop hands every timeline event to :class:`Dispatcher` and goes on syncing. Each event runs in a
task of its own, after the previous event of the same key (room and sender) has finished, so one person's
messages are answered in the order they were sent, while other people's run meanwhile. At most ``limit``
events are in hand at once; past that, :meth:`Dispatcher.submit` waits (the loop stops syncing for a moment).

What is safe to write down: the sync token of a batch may go on disk only when every event of that batch, and
of every batch before it, has been answered. :meth:`Dispatcher.close` ends a batch; ``on_safe(next_batch)`` is
called, in batch order, for each batch that becomes safe, so the transport can move its token forward and
forget the ids it answered, except those :meth:`Dispatcher.holds` (in hand, or answered in a later batch).
An event whose work reports ``False`` (stopped before its reply went out) keeps its batch, and every later
one, from becoming safe in this run: a restart syncs from the last safe token again and answers what was
left, once.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass, field

log = logging.getLogger("petstore_bot.matrix")

#: One event's work: True when it is answered (or needs no answer), False when stopped before its reply.
Work = Callable[[], Awaitable[bool]]


@dataclass(eq=False)
class Batch:
    """One sync response's events in hand."""

    next_batch: str
    answered: list[str] = field(default_factory=list)
    pending: int = 0
    closed: bool = False
    failed: bool = False


class Dispatcher:
    """Runs events as tasks, in order per key; reports the batches that become safe (see the module docstring)."""

    def __init__(self, *, on_safe: Callable[[str], None], limit: int = 32) -> None:
        if limit < 1:
            raise ValueError("limit must be at least 1")
        self._on_safe = on_safe
        self._limit = limit
        self._batches: deque[Batch] = deque()
        self._chains: dict[Hashable, asyncio.Task[None]] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._ids: set[str] = set()

    def begin(self, next_batch: str) -> Batch:
        """A new batch, after every batch begun before it."""
        batch = Batch(next_batch=next_batch)
        self._batches.append(batch)
        return batch

    def in_hand(self, event_id: str) -> bool:
        """The event is being handled now (a later sync or backfill brought it again)."""
        return event_id in self._ids

    def holds(self, event_id: str) -> bool:
        """The event is in hand, or answered in a batch not yet safe."""
        return event_id in self._ids or any(event_id in batch.answered for batch in self._batches)

    async def submit(self, batch: Batch, *, key: Hashable, event_id: str, work: Work) -> None:
        """Start ``work`` after the key's previous event; waits while ``limit`` events are in hand."""
        while len(self._tasks) >= self._limit:
            await asyncio.wait(set(self._tasks), return_when=asyncio.FIRST_COMPLETED)
        batch.pending += 1
        self._ids.add(event_id)
        task = asyncio.create_task(self._run(batch, self._chains.get(key), event_id, work))
        self._chains[key] = task
        self._tasks.add(task)
        task.add_done_callback(functools.partial(self._forget, key))

    def close(self, batch: Batch) -> None:
        """No more events for ``batch``: it becomes safe once its events are answered."""
        batch.closed = True
        self._advance()

    async def drain(self) -> None:
        """Wait for every event in hand (the caller's work sees its stop and skips what has not started)."""
        while self._tasks:
            await asyncio.wait(set(self._tasks))

    def cancel(self) -> None:
        """Cancel every event in hand (the loop itself was cancelled)."""
        for task in self._tasks:
            task.cancel()

    async def _run(self, batch: Batch, previous: asyncio.Task[None] | None, event_id: str, work: Work) -> None:
        ok = False
        try:
            if previous is not None:
                await asyncio.wait({previous})  # its outcome is its own: only the order matters here
            ok = await work()
        finally:
            self._ids.discard(event_id)
            batch.pending -= 1
            if ok:
                batch.answered.append(event_id)
            else:
                batch.failed = True
            self._advance()

    def _forget(self, key: Hashable, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if self._chains.get(key) is task:
            del self._chains[key]
        if not task.cancelled() and (exc := task.exception()) is not None:
            log.error("a message's handling failed (%s); it is answered after a restart", type(exc).__name__)

    def _advance(self) -> None:
        while self._batches:
            batch = self._batches[0]
            if not batch.closed or batch.pending or batch.failed:
                return
            self._batches.popleft()
            self._on_safe(batch.next_batch)

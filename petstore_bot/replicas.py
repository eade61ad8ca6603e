"""Several processes of one bot: the lease holder answers and runs the background work, the others stand by.

:class:`Replicas` is what a transport asks before it answers a message: :meth:`Replicas.turn` waits until this
process is to answer it (it holds the lease and claimed the message in the shared store) or another replica has
answered it; :meth:`Replicas.answered` records a reply sent. A standby keeps every message it was sent in hand until
it is answered, so when the holder dies the next holder answers what was left, and nothing twice: a message is
claimed in the store before it is handled, and a reply of the bot's own account seen in the timeline counts as
answered too (:meth:`Replicas.replied`: the holder died between its reply and its record).

:class:`Leadership` holds the lease and runs background work (watches, schedules, posting approval requests,
finishing writes left taken, pruning) on the holder only, and, given its transports' :class:`Reach`, only while each
of them reaches its chat server (logged in, syncing): a process that cannot reach one neither takes the lease nor
keeps it, so a replica that can answers. Background work runs one way only: ``leadership.add("watches", work)``,
started when the lease is taken and cancelled when it is lost (:func:`leader_only` is that for one piece of work).

Every side effect of the holder is fenced twice: claimed in the store under the lease's :meth:`~Lease.fence` (its
epoch, checked in the claim's transaction), and done only while :func:`may_act` (the lease valid by the holder's own
clock) just before it goes out. A holder frozen past its lease (SIGSTOP) wakes up with both saying no.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence

from petstore_state import StateError
from petstore_state.claims import Claims
from petstore_state.lease import Fence, Lease

__all__ = ["Leadership", "Reach", "Replicas", "Work", "fence_of", "leader_only", "may_act"]

log = logging.getLogger("petstore_bot.replicas")
#: Background work: runs until cancelled (the lease was lost, or the bot stops).
Work = Callable[[], Awaitable[None]]
#: Seconds between a standby's looks at the store for a message it holds.
POLL = 0.5
#: Seconds between prunings of old claims by the holder.
PRUNE_EVERY = 3600.0


class Replicas:
    """Who answers a message among the processes sharing ``lease`` and ``claims`` (see the module docstring)."""

    def __init__(self, *, lease: Lease, claims: Claims, poll: float = POLL) -> None:
        self.lease = lease
        self._claims = claims
        self._poll = poll
        self._replied: OrderedDict[str, None] = OrderedDict()

    @property
    def leading(self) -> bool:
        """Whether this process answers now."""
        return self.lease.held

    def replied(self, event_id: str) -> None:
        """The bot's account replied to ``event_id`` (seen in the timeline): it is answered, whoever sent it."""
        self._replied[event_id] = None
        if len(self._replied) > 2000:
            self._replied.popitem(last=False)

    async def turn(self, event_id: str, *, stop: asyncio.Event) -> bool | None:
        """True when this process is to answer ``event_id`` now, False when another replica answered it, None when
        ``stop`` came first. Waits meanwhile (the store is looked at every ``poll`` seconds)."""
        told = False
        while not stop.is_set():
            if event_id in self._replied:
                return False
            try:
                if self.lease.held:
                    mine = await self._claims.claim(event_id, holder=self.lease.holder, fence=self.lease.fence())
                    if mine is not None:
                        return mine
                    await self.lease.check()  # the database says the lease is gone: the holder's check learns it
                if await self._claims.is_answered(event_id):
                    return False
            except StateError as exc:
                if not told:
                    log.warning("the shared state failed (%s); %s waits", exc, event_id)
                told = True
            held = self.lease.held  # a holder fenced out waits a poll too, for its check to catch up
            await _first(stop.wait(), *([] if held else [self.lease.wait_held()]), timeout=self._poll)
        return None

    async def may_answer(self, event_id: str) -> bool:
        """Asked just before this process sends its answer to ``event_id`` (it had the turn): its claim still stands
        under its lease in the store, and its own clock says the lease is valid. False: it lost the lease while the
        command ran (the new holder answers); a store failure counts as False."""
        if not self.lease.held:
            return False
        try:
            mine = await self._claims.still_mine(event_id, holder=self.lease.holder, fence=self.lease.fence())
        except StateError as exc:
            log.warning("the shared state failed (%s); %s is not answered here", exc, event_id)
            return False
        return mine and self.lease.held

    async def answered(self, *event_ids: str) -> None:
        """The replies to ``event_ids`` went out (or none was needed): no replica answers them again."""
        try:
            await self._claims.answered(event_ids, holder=self.lease.holder)
        except StateError as exc:  # the reply is in the timeline: the next holder sees it there
            log.warning("could not record %d answered messages (%s)", len(event_ids), exc)

    async def prune(self) -> None:
        """Background work of the holder (:meth:`Leadership.add`): forget claims older than a day, hourly."""
        while True:
            try:
                await self._claims.prune()
            except StateError as exc:
                log.warning("could not prune old claims (%s)", exc)
            await asyncio.sleep(PRUNE_EVERY)


class Reach:
    """Whether a transport reaches its chat server now (logged in, its last sync through), set by the transport."""

    def __init__(self) -> None:
        self._up = asyncio.Event()
        self._down = asyncio.Event()
        self._down.set()

    @property
    def up(self) -> bool:
        return self._up.is_set()

    def set(self, *, up: bool) -> None:
        (self._up.set if up else self._up.clear)()
        (self._down.clear if up else self._down.set)()

    async def wait_up(self) -> None:
        await self._up.wait()

    async def wait_down(self) -> None:
        await self._down.wait()


class Leadership:
    """The lease of a bot and the background work that runs on its holder only."""

    def __init__(self, lease: Lease) -> None:
        self.lease = lease
        self._work: dict[str, Work] = {}

    async def leading(self) -> bool:
        """Whether this process holds the lease now (its metrics say so)."""
        return self.lease.held

    @property
    def work(self) -> tuple[str, ...]:
        """The names of the background work added, in order."""
        return tuple(self._work)

    def add(self, name: str, work: Work) -> None:
        """Run ``work`` on the lease holder: started when the lease is taken, cancelled when it is lost."""
        if name in self._work:
            raise ValueError(f"background work {name!r} is added already")
        self._work[name] = work

    async def run(self, stop: asyncio.Event, *, reach: Reach | Sequence[Reach] | None = None) -> None:
        """Hold the lease (while every ``reach`` is up, when given) and run the work while held, until ``stop``."""
        reaches = () if reach is None else (reach,) if isinstance(reach, Reach) else tuple(reach)
        named = [leader_only(self.lease, work, stop=stop, name=name) for name, work in self._work.items()]
        holding = self._hold_while(reaches, stop) if reaches else self.lease.hold(stop)
        await asyncio.gather(holding, *named)

    async def _hold_while(self, reaches: Sequence[Reach], stop: asyncio.Event) -> None:
        """The lease held while every one of ``reaches`` is up: tried for once they are, released as soon as one
        is down."""
        while not stop.is_set():
            if not await _first(_all_up(reaches), stop.wait()) or stop.is_set():
                continue
            down = asyncio.Event()
            holding = asyncio.create_task(self.lease.hold(down))
            await _first(*(one.wait_down() for one in reaches), stop.wait(), holding)
            if not stop.is_set():
                log.warning("chat server out of reach: %s does not hold lease %s", self.lease.holder, self.lease.name)
            down.set()
            await holding


async def leader_only(lease: Lease, work: Work, *, stop: asyncio.Event, name: str = "background work") -> None:
    """Runs ``work`` while this process holds ``lease`` (whoever holds it — :meth:`Lease.hold` — elsewhere): started
    when the lease is taken, cancelled when it is lost (the next holder starts its own), until ``stop``. Work that
    fails is logged and started again at the next taking of the lease, never twice at once."""
    while not stop.is_set():
        if not await _first(lease.wait_held(), stop.wait()) or stop.is_set():
            continue
        log.info("%s starts: this process holds the lease %s", name, lease.name)
        task: asyncio.Future[None] = asyncio.ensure_future(work())
        try:
            await _first(task, lease.wait_lost(), stop.wait())
        finally:
            if not task.done():
                task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.wait({task})
        if task.cancelled() and not stop.is_set():
            log.info("%s stops: this process lost the lease %s", name, lease.name)
        if not task.cancelled() and (exc := task.exception()) is not None:
            log.error("%s failed (%s: %s); it starts again with the next lease", name, type(exc).__name__, exc)
        if lease.held:  # it ended by itself while held: wait for the lease to change hands before a new start
            await _first(lease.wait_lost(), stop.wait())


async def _all_up(reaches: Sequence[Reach]) -> None:
    """Returns once every one of ``reaches`` is up."""
    while not all(one.up for one in reaches):
        await _first(*(one.wait_up() for one in reaches if not one.up))


def fence_of(lease: Lease | None) -> Fence | None:
    """The condition a claim of background work checks in the store: ``lease``'s fence, or none without a lease."""
    return None if lease is None else lease.fence()


def may_act(lease: Lease | None) -> bool:
    """Asked just before a side effect goes out: ``lease`` is valid by this process's own clock (no lease: yes)."""
    return lease is None or lease.held


async def _first(*waits: Awaitable[object], timeout: float | None = None) -> bool:
    """Waits for the first of ``waits`` to finish (the others are cancelled; a task or future given is left running);
    False on ``timeout``."""
    tasks = [w if asyncio.isfuture(w) else asyncio.ensure_future(w) for w in waits]
    try:
        done, _ = await asyncio.wait(tasks, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task, given in zip(tasks, waits, strict=True):
            if task is not given and not task.done():
                task.cancel()
    return bool(done)

"""What a bot runs beside its transport: the notifier (watches and schedules) and the poster of requests for approval
made at a terminal, wired from the ``[bot]`` settings, and the gates that keep them to the process that leads.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Protocol

from petstore_bot.chat import Reply
from petstore_bot.core import BotCore
from petstore_bot.notifier import BotNotifications, Notifier, ShouldRun, always
from petstore_bot.scheduler import Scheduler
from petstore_bot.seal import Seal
from petstore_bot.settings import BotSettings
from petstore_bot.watcher import Announce, Watcher
from petstore_state import Database
from petstore_state.bounds import Limits
from petstore_state.lease import Lease
from petstore_state.pending import PendingStore
from petstore_state.schedules import ScheduleStore
from petstore_state.watches import WatchStore

from .compose import Composition

if TYPE_CHECKING:
    from petstore_bot.approvals_room import Announce as PostRequest
    from petstore_bot.approvals_room import ApprovalPoster
    from petstore_bot.matrix import MatrixTransport

__all__ = ["Background", "all_of", "approval_poster", "beside", "bot_notifications", "connected", "notifier"]

Run = Callable[[asyncio.Event], Awaitable[None]]
"""A transport's run until the event is set (SIGTERM, Ctrl-C)."""


class Background(Protocol):
    """Work a bot runs beside its transport until the stop event (the notifier, the approvals poster)."""

    async def run(self, stop: asyncio.Event) -> None: ...


def bot_notifications(
    composition: Composition,
    bot: BotSettings,
    *,
    database: Database,
    announce: Announce,
    clock: Callable[[], float] = time.time,
    lease: Lease | None = None,
) -> BotNotifications:
    """Watches and schedules of this bot's service in ``database``, posted with ``announce`` (each announcement
    claimed under the replicas' ``lease``), at most as many as ``[bot] max_watches...`` and ``max_schedules...``
    allow."""
    service = composition.env.base_url
    watch_limits = Limits(per_room=bot.max_watches_per_room, total=bot.max_watches)
    watches = WatchStore(database, service=service, limits=watch_limits)
    watcher = Watcher(store=watches, client=composition.client, announce=announce, lease=lease)
    schedule_limits = Limits(per_room=bot.max_schedules_per_room, total=bot.max_schedules)
    return BotNotifications(
        watcher=watcher,
        schedules=ScheduleStore(database, service=service, limits=schedule_limits),
        interval=bot.watch_interval,
        timezone=bot.timezone,
        clock=clock,
    )


def notifier(
    notifications: BotNotifications,
    core: BotCore,
    *,
    announce: Announce,
    should_run: ShouldRun = always,
    lease: Lease | None = None,
) -> Notifier:
    """The bot's background task: polls for the watches, posts, runs the schedules as their creators via ``core``
    (each run claimed under the replicas' ``lease``)."""

    async def run_as(room: str, user: str, line: str) -> Reply:
        return await core.reply_as(room=room, user=user, line=line)

    scheduler = Scheduler(
        store=notifications.schedules,
        run_as=run_as,
        announce=announce,
        zone=notifications.zone,
        clock=notifications.clock,
        lease=lease,
    )
    return Notifier(
        watcher=notifications.watcher, scheduler=scheduler, interval=notifications.interval, should_run=should_run
    )


def approval_poster(
    bot: BotSettings, *, store: PendingStore, announce: PostRequest, seal: Seal, platform: str
) -> ApprovalPoster | None:
    """The poster of terminal requests for approval (in ``store``) in ``[bot] approvals_room``, when approvals and
    the room are set; None otherwise."""
    if not bot.approvals or not bot.approvals_room:
        return None
    from petstore_bot.approvals_room import ApprovalPoster

    return ApprovalPoster(store, room=bot.approvals_room, announce=announce, seal=seal, platform=platform)


def all_of(*gates: ShouldRun) -> ShouldRun:
    """A gate open when every one of ``gates`` is (asked in order, the first closed one ends it)."""

    async def every() -> bool:
        for gate in gates:
            if not await gate():
                return False
        return True

    return every


def connected(transport: MatrixTransport) -> ShouldRun:
    """Background work runs while the transport can post."""

    async def connected() -> bool:
        return transport.connected

    return connected


def beside(background: Sequence[Background], run: Run) -> Run:
    """``run``, with the bot's background tasks beside it until ``run`` ends."""
    if not background:
        return run

    async def both(stop: asyncio.Event) -> None:
        tasks = [asyncio.create_task(work.run(stop)) for work in background]
        try:
            await run(stop)
        finally:
            stop.set()
            await asyncio.gather(*tasks)

    return both

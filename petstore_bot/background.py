"""What a bot runs unasked, wired from the ``[bot]`` settings: watches and schedules (the notifier), the poster of
requests for approval, the finisher of writes left taken by a crash, and the process's health endpoint.

All but the health endpoint are background work of the lease holder (:meth:`~petstore_bot.replicas.Leadership.add`:
started when this process takes the lease, cancelled when it loses it): :func:`lease_work` makes one of them such
work. The health endpoint runs on every replica (it says which one leads).
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from petstore_state import Database
from petstore_state.bounds import Limits
from petstore_state.lease import Lease
from petstore_state.schedules import ScheduleStore
from petstore_state.watches import WatchStore

from .assembly import BotState, Service
from .notifier import BotNotifications, Notifier
from .pending import SWEEP_INTERVAL, Resume, TakenFinisher
from .replicas import Leadership, Work
from .scheduler import RunAs, Scheduler
from .settings import BotSettings
from .watcher import Announce, Watcher

if TYPE_CHECKING:  # pragma: no cover
    from .health import HealthServer

__all__ = ["bot_health", "bot_notifications", "finisher", "lease_work", "notifier"]


def lease_work(run: Callable[[asyncio.Event], Awaitable[None]]) -> Work:
    """``run(stop)`` (a loop until its event is set) as work of the lease holder: it runs until cancelled."""

    async def work() -> None:
        await run(asyncio.Event())

    return work


def bot_notifications(
    service: Service,
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
    where = service.env.base_url
    watch_limits = Limits(per_room=bot.max_watches_per_room, total=bot.max_watches)
    watches = WatchStore(database, service=where, limits=watch_limits)
    watcher = Watcher(store=watches, client=service.client, announce=announce, lease=lease)
    schedule_limits = Limits(per_room=bot.max_schedules_per_room, total=bot.max_schedules)
    return BotNotifications(
        watcher=watcher,
        schedules=ScheduleStore(database, service=where, limits=schedule_limits),
        interval=bot.watch_interval,
        timezone=bot.timezone,
        clock=clock,
    )


def notifier(
    notifications: BotNotifications, *, run_as: RunAs, announce: Announce, lease: Lease | None = None, step: float = 1.0
) -> Notifier:
    """The notifier: polls for the watches, posts, runs the schedules as their creators with ``run_as`` (each run
    claimed under the replicas' ``lease``), looking every ``step`` seconds."""
    scheduler = Scheduler(
        store=notifications.schedules,
        run_as=run_as,
        announce=announce,
        zone=notifications.zone,
        clock=notifications.clock,
        lease=lease,
    )
    return Notifier(watcher=notifications.watcher, scheduler=scheduler, interval=notifications.interval, step=step)


def finisher(
    state: BotState,
    *,
    platform: str,
    resume: Resume,
    announce: Announce,
    lease: Lease | None,
    interval: float = SWEEP_INTERVAL,
) -> TakenFinisher:
    """Finishes the writes of ``platform`` taken before this process started and never finished, each claimed under
    ``lease``; their rooms are told with ``announce``."""
    return TakenFinisher(
        state.pending.store,
        platform=platform,
        resume=resume,
        announce=announce,
        started=time.time(),
        lease=lease,
        interval=interval,
    )


def bot_health(state: BotState, leadership: Leadership, *, port: int | None) -> HealthServer | None:
    """The process's ``/healthz`` and ``/metrics`` on 127.0.0.1:``port`` (``--metrics-port``), beside the
    transports; None when not asked for (off by default)."""
    if port is None:
        return None
    from .health import BotMetrics, HealthServer

    async def held() -> dict[str, int]:
        waiting = await state.pending.store.recent(states=("waiting",), limit=10_000)
        return dict(Counter(write.kind for write in waiting))

    return HealthServer(BotMetrics(leading=leadership.leading, held=held), port=port)

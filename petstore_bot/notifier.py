"""What a bot does unasked: the background task (watches polled, announcements posted, schedules run) and the
:class:`~bot_commands.ports.Notifications` port the ``!watch`` and ``!every`` commands reach the store through.

:class:`Notifier` is background work of the lease holder (:meth:`~petstore_bot.replicas.Leadership.add`: started
when this process takes the lease, cancelled when it loses it), so it runs in one process while every replica
answers commands; it polls every ``interval`` seconds and, each ``step``, posts what is queued and runs what is
due. :class:`BotNotifications` makes a session's port, bound to its room and person: it refuses a schedule
or a watch past ``[bot] max_schedules_per_room`` / ``max_schedules`` (``max_watches_per_room`` / ``max_watches``)
in one line naming the limit, and lets a schedule be dropped by its creator or an admin of the room.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from bot_commands.every import Every
from bot_commands.notify import NotScheduled, TooMany
from bot_commands.policy import Actor, Role, room_of
from bot_commands.ports import ScheduledCommand
from petstore_state.bounds import LimitReached
from petstore_state.schedules import Schedule, ScheduleStore

from .scheduler import Scheduler
from .watcher import Watcher

__all__ = ["BotNotifications", "Notifier", "RoomNotifications"]

log = logging.getLogger("petstore_bot")


class Notifier:
    """The background task of one bot process (see the module docstring); ``run`` until ``stop`` is set."""

    def __init__(
        self,
        *,
        watcher: Watcher,
        scheduler: Scheduler,
        interval: float,
        step: float = 1.0,
    ) -> None:
        self.watcher = watcher
        self.scheduler = scheduler
        self.interval = interval
        self.step = min(step, interval)
        self._next_poll = 0.0

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            try:
                await self.once()
            except Exception:  # a bug must not end the bot's background work: logged, tried again next step
                log.exception("the bot's background work failed (tried again in %g s)", self.step)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), timeout=self.step)

    async def once(self) -> None:
        """One step: poll when the interval has passed, post what is queued, run what is due."""
        now = time.monotonic()
        if now >= self._next_poll:
            self._next_poll = max(self._next_poll + self.interval, now + self.step)
            await self.watcher.poll()
        await self.watcher.deliver()
        await self.scheduler.tick()


class BotNotifications:
    """Watches and schedules of one bot on one service; :meth:`for_actor` is a session's port."""

    def __init__(
        self,
        *,
        watcher: Watcher,
        schedules: ScheduleStore,
        interval: float,
        timezone: str,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.watcher = watcher
        self.schedules = schedules
        self.interval = interval
        self.timezone = timezone
        self.zone = ZoneInfo(timezone)
        self.clock = clock

    def for_actor(self, actor: Actor) -> RoomNotifications:
        """The port of a session whose actor is in a room (``where`` is ``platform:room``)."""
        return RoomNotifications(self, room=room_of(actor.where), actor=actor)

    def scheduled(self, found: Schedule) -> ScheduledCommand:
        return ScheduledCommand(
            id=found.id,
            rhythm=found.rhythm,
            command=found.command,
            creator=found.creator,
            next_run=datetime.fromtimestamp(found.next_run, self.zone),
        )


class RoomNotifications:
    """:class:`~bot_commands.ports.Notifications` for one room and person."""

    def __init__(self, bot: BotNotifications, *, room: str, actor: Actor) -> None:
        self._bot = bot
        self.room = room
        self.actor = actor

    @property
    def interval(self) -> float:
        return self._bot.interval

    @property
    def timezone(self) -> str:
        return self._bot.timezone

    async def watch(self, status: str) -> bool:
        await self._bot.watcher.start_filter(status)  # before the room: its first poll already knows where to start
        try:
            return await self._bot.watcher.store.add(status=status, room=self.room, by=self.actor.id)
        except LimitReached as exc:
            raise too_many(exc, what="watches", drop="/unwatch") from None

    async def unwatch(self, status: str) -> bool:
        return await self._bot.watcher.store.remove(status=status, room=self.room)

    async def watches(self) -> list[str]:
        return await self._bot.watcher.store.of_room(room=self.room)

    async def schedule(self, every: Every, command: str) -> ScheduledCommand:
        now = datetime.fromtimestamp(self._bot.clock(), UTC)
        try:
            made = await self._bot.schedules.add(
                room=self.room,
                creator=self.actor.id,
                rhythm=every.text,
                command=command,
                next_run=every.next_after(now, self._bot.zone).timestamp(),
            )
        except LimitReached as exc:
            raise too_many(exc, what="schedules", drop="/unschedule") from None
        return self._bot.scheduled(made)

    async def schedules(self) -> list[ScheduledCommand]:
        return [self._bot.scheduled(found) for found in await self._bot.schedules.of_room(self.room)]

    async def unschedule(self, schedule_id: int) -> ScheduledCommand:
        found = await self._bot.schedules.get(schedule_id)
        if found is None or found.room != self.room:
            raise NotScheduled(f"this room has no schedule {schedule_id}: /schedules lists them")
        if found.creator != self.actor.id and self.actor.role is not Role.ADMIN:
            raise NotScheduled(f"schedule {schedule_id} is {found.creator}'s: only they or an admin may drop it")
        await self._bot.schedules.remove(schedule_id)
        return self._bot.scheduled(found)


def too_many(exc: LimitReached, *, what: str, drop: str) -> TooMany:
    """The one-line refusal of a schedule or watch past its limit, naming the limit and its setting."""
    if exc.scope == "room":
        return TooMany(
            f"this room has {exc.limit} {what}, the most it may have ([bot] max_{what}_per_room): {drop} one first"
        )
    return TooMany(f"this bot has {exc.limit} {what} in all its rooms, the most it may have ([bot] max_{what})")

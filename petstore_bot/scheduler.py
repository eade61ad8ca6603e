"""Schedules (``!every``) run when due: the command as its creator, its answer posted in the room.

:meth:`Scheduler.tick` takes the schedules whose next run has come (by its clock, injectable), claims each run in
the store (so one process runs it; under the replicas' lease, whose holder alone claims), and runs it through
``run_as`` (the bot core: the creator's role in that room now, read-only); its answer is posted only while the
lease is valid. A run found more than ``max_late`` (an hour) late, because the bot was not running, is skipped
and the room is told; a later one runs once however many runs were missed.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from bot_commands.every import parse_every
from petstore_state.db import StateError
from petstore_state.lease import Lease
from petstore_state.schedules import Schedule, ScheduleStore

from .chat import Reply
from .replicas import fence_of, may_act
from .replies import headed, notice_reply
from .watcher import Announce

__all__ = ["MAX_LATE", "RunAs", "Scheduler", "next_run_after"]

log = logging.getLogger("petstore_bot.schedule")
#: A run found later than this (seconds) is skipped, and the room told.
MAX_LATE = 3600.0
RunAs = Callable[[str, str, str], Awaitable[Reply]]
"""``run_as(room, user, line)``: the reply to ``line`` run in ``room`` as ``user`` (their role there now)."""


def next_run_after(schedule: Schedule, *, now: float, zone: ZoneInfo) -> float:
    """The first run of ``schedule`` after ``now``: an interval keeps its beat from the run that was due."""
    rhythm = parse_every(schedule.rhythm)
    if rhythm.minutes is not None:
        step = rhythm.minutes * 60.0
        return schedule.next_run + step * (math.floor((now - schedule.next_run) / step) + 1)
    return rhythm.next_after(datetime.fromtimestamp(now, UTC), zone).timestamp()


class Scheduler:
    """Runs the due schedules of one service (see the module docstring)."""

    def __init__(
        self,
        *,
        store: ScheduleStore,
        run_as: RunAs,
        announce: Announce,
        zone: ZoneInfo,
        clock: Callable[[], float] = time.time,
        max_late: float = MAX_LATE,
        lease: Lease | None = None,
    ) -> None:
        self.store = store
        self.run_as = run_as
        self.announce = announce
        self.zone = zone
        self.clock = clock
        self.max_late = max_late
        #: The replicas' lease: each run is claimed under it, and its answer posted only while it is valid.
        self.lease = lease

    async def tick(self) -> int:
        """Run (or skip) every due schedule once; the number run."""
        now = self.clock()
        try:
            due = await self.store.due(now)
        except StateError as exc:
            log.warning("reading the schedules failed (tried again shortly): %s", exc)
            return 0
        ran = 0
        for schedule in due:
            ran += await self._one(schedule, now=now)
        return ran

    async def _one(self, schedule: Schedule, *, now: float) -> int:
        try:
            following = next_run_after(schedule, now=now, zone=self.zone)
            if not await self.store.claim(schedule, next_run=following, fence=fence_of(self.lease)):
                return 0  # another process has it (or this one lost the lease)
        except StateError as exc:
            log.warning("claiming schedule %s failed: %s", schedule.id, exc)
            return 0
        late = now - schedule.next_run
        if late > self.max_late:
            log.info("schedule %s skipped: %.0f s late", schedule.id, late)
            await self._post(schedule, self._skipped(schedule, now=now))
            return 0
        log.info("schedule %s runs %s as %s in %s", schedule.id, schedule.command, schedule.creator, schedule.room)
        try:
            reply = await self.run_as(schedule.room, schedule.creator, schedule.command)
        except Exception:  # a bug: the room hears one line, the log has the details, the scheduler goes on
            log.exception("schedule %s failed inside the bot", schedule.id)
            reply = notice_reply("an internal error stopped it (it has been logged)", level="warning")
        head = f"Schedule {schedule.id} ({schedule.rhythm}, by {schedule.creator}): {schedule.command}"
        await self._post(schedule, headed(head, reply))
        return 1

    async def _post(self, schedule: Schedule, reply: Reply) -> None:
        """Post a claimed run's answer, unless the lease ran out meanwhile (then nobody posts this run)."""
        if not may_act(self.lease):
            log.warning("schedule %s: its answer is not posted: this process lost the lease while it ran", schedule.id)
            return
        await self.announce(schedule.room, reply, key=None)

    def _skipped(self, schedule: Schedule, *, now: float) -> Reply:
        due = self._local(schedule.next_run)
        upcoming = self._local(next_run_after(schedule, now=now, zone=self.zone))
        text = (
            f"Schedule {schedule.id} ({schedule.rhythm} {schedule.command}) did not run at {due}: the bot "
            f"was not running then, and a run more than {self.max_late / 60:g} minutes late is skipped. "
            f"Next run: {upcoming}."
        )
        return notice_reply(text, level="warning")

    def _local(self, instant: float) -> str:
        return datetime.fromtimestamp(instant, self.zone).strftime("%Y-%m-%d %H:%M %Z")

"""Commands a Matrix bot missed while it was away: not run when older than ``max_backlog_age``, and the room told.

A command sent before the bot was listening (before it was ready, or during an outage: before the sync that came
through after failed ones began) was missed; :class:`Backlog` says which events of a sync batch are such commands
and too old to run. :class:`SkipNotices` posts one notice per room and catch-up saying how many were skipped (a later
batch of the same backlog edits it to the new total); the skipped commands count as answered.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from nio import AsyncClient

from petstore_bot.matrix_events import edit, notice, transaction_id
from petstore_bot.matrix_homeserver import Homeserver
from petstore_bot.matrix_state import Progress
from petstore_bot.replicas import Replicas

log = logging.getLogger("petstore_bot.matrix")

SKIPPED = (
    "Skipped {count} {commands} sent while I was away (older than {age}, see max_backlog_age): "
    "send again what is still needed."
)


@dataclass(frozen=True, slots=True)
class Backlog:
    """Which events of a sync batch are backlog not to run: sent before ``listening_since`` (missed) and more
    than ``max_age`` seconds before ``now`` (the batch came), by the homeserver's ``origin_server_ts``."""

    listening_since: float
    now: float
    max_age: float

    def skips(self, event: Mapping[str, object]) -> bool:
        sent = event.get("origin_server_ts")
        if not isinstance(sent, int):
            return False
        return sent < self.listening_since * 1000 and self.now * 1000 - sent > self.max_age * 1000


@dataclass(frozen=True, slots=True)
class _Told:
    """The skipped-commands notice of a room: the backlog's ``listening_since``, its event id, the count told."""

    listening_since: float
    event_id: str
    count: int


class SkipNotices:
    """The notices telling rooms how many missed commands were not run (see the module docstring)."""

    def __init__(
        self, *, homeserver: Homeserver, progress: Progress, replicas: Replicas | None, max_backlog_age: float
    ) -> None:
        self._homeserver = homeserver
        self._progress = progress
        self._replicas = replicas
        self._max_age = max_backlog_age
        self._told: dict[str, _Told] = {}

    async def tell(
        self, client: AsyncClient, *, room_id: str, skipped: Sequence[str], backlog: Backlog, stop: asyncio.Event
    ) -> bool:
        """Posts (or edits) the room's notice for ``skipped`` and marks them answered; False when stopped."""
        told = self._told.get(room_id)
        earlier = told.count if told is not None and told.listening_since == backlog.listening_since else 0
        count = earlier + len(skipped)
        log.info("skipped %d commands older than %gs in %s", count, self._max_age, room_id)
        tx = transaction_id("skipped " + skipped[0])
        text = self._text(count)
        content = notice(text) if told is None or not earlier else edit(told.event_id, notice(text))
        sent = await self._homeserver.deliver(
            client, room_id=room_id, content=content, tx_id=tx, stop=stop, what="notice"
        )
        if sent is None:
            return False
        if sent and not earlier:
            self._told[room_id] = _Told(backlog.listening_since, sent, count)
        elif told is not None and earlier:
            self._told[room_id] = _Told(told.listening_since, told.event_id, count)
        for event_id in skipped:
            self._progress.mark_done(event_id)
        self._progress.save()
        if self._replicas is not None:
            await self._replicas.answered(*skipped)
        return True

    def _text(self, count: int) -> str:
        minutes = self._max_age / 60
        return SKIPPED.format(
            count=count,
            commands="command" if count == 1 else "commands",
            age=f"{minutes:g} min" if minutes >= 1 else f"{self._max_age:g} s",
        )

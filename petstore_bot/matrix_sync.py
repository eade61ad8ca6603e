"""The sync loop of a Matrix bot: sync after sync, each batch's events handed to the dispatcher in order.

A first start takes the current sync token and answers nothing from before it. After that, each batch: its invites
handled, the events a limited timeline left out fetched back, rooms the bot cannot read told so, power levels kept
current (a change once the messages before it are answered, before the messages after it are handed on), missed
commands too old to run skipped (:mod:`petstore_bot.matrix_backlog`), the rest answered side by side
(:mod:`petstore_bot.matrix_dispatch`). The token on disk moves only past batches fully answered.

Each sync that comes through keeps the transport's :class:`~petstore_bot.replicas.Reach` up; syncs failing for
``unreachable_after`` seconds since the last one that came through put it down (the lease is given up meanwhile).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass

from nio import AsyncClient, SyncResponse
from nio.responses import RoomInfo

from petstore_bot.chat import Handler
from petstore_bot.matrix_answer import Answerer
from petstore_bot.matrix_backlog import Backlog, SkipNotices
from petstore_bot.matrix_crypto import Crypto
from petstore_bot.matrix_dispatch import Batch, Dispatcher
from petstore_bot.matrix_events import answered
from petstore_bot.matrix_homeserver import JSON, Homeserver
from petstore_bot.matrix_rooms import Rooms
from petstore_bot.matrix_state import Progress
from petstore_bot.replicas import Reach, Replicas

log = logging.getLogger("petstore_bot.matrix")
_NO_NOISE: JSON = {"not_types": ["*"]}
#: The most pages of a room's timeline fetched back to fill one gap.
GAP_PAGES = 100


def sync_filter(*, timeline_limit: int) -> JSON:
    """The filter of every sync: timelines up to ``timeline_limit`` events, members lazily, no presence or typing."""
    room = {"timeline": {"limit": timeline_limit}, "state": {"lazy_load_members": True}}
    return {"presence": _NO_NOISE, "account_data": _NO_NOISE, "room": {**room, "ephemeral": _NO_NOISE}}


@dataclass(frozen=True, slots=True)
class _BatchContext:
    """What handing on one sync batch works with: the client, the handler, the stop, where the events go."""

    client: AsyncClient
    handler: Handler
    stop: asyncio.Event
    dispatcher: Dispatcher
    batch: Batch
    backlog: Backlog


class SyncLoop:
    """Syncs and hands each batch on (see the module docstring); ``synced`` once a sync came through."""

    def __init__(
        self,
        *,
        homeserver: Homeserver,
        progress: Progress,
        crypto: Crypto,
        rooms: Rooms,
        answerer: Answerer,
        replicas: Replicas | None,
        max_backlog_age: float,
        sync_timeout_ms: int,
        reach: Reach,
        unreachable_after: float,
    ) -> None:
        self._homeserver = homeserver
        self._user_id = homeserver.user_id
        self._progress = progress
        self._crypto = crypto
        self._rooms = rooms
        self._answerer = answerer
        self._skips = SkipNotices(
            homeserver=homeserver, progress=progress, replicas=replicas, max_backlog_age=max_backlog_age
        )
        self._replicas = replicas
        self._max_backlog_age = max_backlog_age
        self._sync_timeout_ms = sync_timeout_ms
        self.synced = False
        self._sync_started = 0.0
        self._sync_attempts = 0
        self._reach = reach
        self._unreachable_after = unreachable_after
        self._reached_at = time.monotonic()

    def reached(self) -> None:
        """The homeserver answered (a login, a sync): the transport reaches it."""
        self._reached_at = time.monotonic()
        self._reach.set(up=True)

    async def first_sync(self, client: AsyncClient, *, stop: asyncio.Event) -> bool:
        """First start: take the current token, answer nothing from before it; handle invites and encryption."""
        response = await self._homeserver.retry(lambda: self._sync(client, since=None), stop=stop, what="initial sync")
        if response is None:
            return False
        await self._rooms.handle_invites(client, response, stop=stop)
        for room_id, info in response.rooms.join.items():
            self._rooms.see_levels(room_id, [e.source for e in [*info.state, *info.timeline.events]])
            if self._rooms.unreadable(room_id, [e.source for e in [*info.state, *info.timeline.events]]):
                await self._rooms.notify_encrypted(client, room_id, stop=stop)
        self._progress.start_at(response.next_batch)
        return True

    async def serve(self, client: AsyncClient, handler: Handler, *, stop: asyncio.Event, ready_at: float) -> None:
        """Sync after sync until ``stop``; the messages in hand finish before it returns (see the dispatcher).

        ``ready_at``: when the bot said it was ready (time.time()); what was sent before it was missed."""
        dispatcher = Dispatcher(on_safe=lambda next_batch: self._progress.safe(next_batch, keep=dispatcher.holds))
        since = self._progress.state.since
        try:
            # A command sent before the bot was listening (before it was ready, or during an outage: before the
            # sync that came through after failed ones began) was missed: not run when older than max_backlog_age.
            listening_since = ready_at
            while not stop.is_set():
                self._sync_attempts = 0
                call = functools.partial(self._sync, client, since=since)
                response = await self._homeserver.retry(call, stop=stop, what="sync")
                if response is None:
                    break
                if self._sync_attempts > 1:
                    listening_since = self._sync_started
                backlog = Backlog(listening_since=listening_since, now=time.time(), max_age=self._max_backlog_age)
                batch = dispatcher.begin(response.next_batch)
                ctx = _BatchContext(
                    client=client, handler=handler, stop=stop, dispatcher=dispatcher, batch=batch, backlog=backlog
                )
                if not await self._handle_batch(ctx, response, since=since):
                    break
                dispatcher.close(batch)
                since = response.next_batch
            await dispatcher.drain()
        except asyncio.CancelledError:
            dispatcher.cancel()
            raise

    async def _sync(self, client: AsyncClient, *, since: str | None) -> SyncResponse:
        self._sync_started = time.time()
        self._sync_attempts += 1
        try:
            response = await self._sync_once(client, since=since)
        except Exception:
            if time.monotonic() - self._reached_at > self._unreachable_after:
                self._reach.set(up=False)
            raise
        self.synced = True
        self.reached()
        await self._crypto.after_sync(client, response)
        return response

    async def _sync_once(self, client: AsyncClient, *, since: str | None) -> SyncResponse:
        if since is None:
            response = await client.sync(timeout=0, sync_filter=sync_filter(timeline_limit=1), full_state=True)
        else:
            # The first sync of a run carries every room's full state: the client then knows each room the bot is
            # in (and which are encrypted) before it posts in one unasked (announce), not only those that spoke.
            limit = sync_filter(timeline_limit=100)
            response = await client.sync(
                timeout=self._sync_timeout_ms, since=since, sync_filter=limit, full_state=not self.synced
            )
        if not isinstance(response, SyncResponse):
            raise self._homeserver.error("sync", response)
        return response

    async def _handle_batch(self, ctx: _BatchContext, response: SyncResponse, *, since: str | None) -> bool:
        """Hands one sync batch's events to the dispatcher; False when ``stop`` interrupted it (not all handed)."""
        await self._rooms.handle_invites(ctx.client, response, stop=ctx.stop)
        for room_id, info in response.rooms.join.items():
            events = await self._timeline(ctx, room_id, info, since=since)
            if events is None or not await self._handle_room(ctx, room_id, info, events):
                return False
        return not ctx.stop.is_set()

    async def _timeline(
        self, ctx: _BatchContext, room_id: str, info: RoomInfo, *, since: str | None
    ) -> list[Mapping[str, object]] | None:
        """A room's events in the batch, with those a limited timeline left out first; None when stopped."""
        events: list[Mapping[str, object]] = [e.source for e in info.timeline.events]
        if info.timeline.limited and since is not None:
            gap = await self._fill_gap(ctx.client, room_id, start=info.timeline.prev_batch, since=since, stop=ctx.stop)
            if gap is None:
                return None
            events = gap + events
        return events

    async def _handle_room(
        self, ctx: _BatchContext, room_id: str, info: RoomInfo, events: list[Mapping[str, object]]
    ) -> bool:
        """Hands one room's events on. A command of the backlog (missed, and too old) is not run: the room is told
        once how many were skipped. False when stopped."""
        if self._rooms.unreadable(room_id, [*(e.source for e in info.state), *events]):
            await self._rooms.notify_encrypted(ctx.client, room_id, stop=ctx.stop)
            return True
        self._rooms.see_levels(room_id, [e.source for e in info.state])
        await self._rooms.know_levels(ctx.client, room_id, stop=ctx.stop)
        skipped: list[str] = []
        for event in events:
            if ctx.stop.is_set():
                return False
            if self._rooms.levels.wanted(room_id) and event.get("type") == "m.room.power_levels":
                # The messages before the change run with the levels they were sent at.
                log.info("power levels of %s change: answering the messages before it first", room_id)
                await ctx.dispatcher.drain()
            self._rooms.see_levels(room_id, [event])
            if (event_id := await self._hand_on(ctx, room_id, event)) is not None:
                skipped.append(event_id)
        if skipped:
            return await self._skips.tell(
                ctx.client, room_id=room_id, skipped=skipped, backlog=ctx.backlog, stop=ctx.stop
            )
        return True

    async def _hand_on(self, ctx: _BatchContext, room_id: str, event: Mapping[str, object]) -> str | None:
        """Submits one event to the dispatcher unless it is answered or in hand already; its id when it is a
        backlog command to skip instead (this process tells the room: it holds the lease, or there is none)."""
        event_id = event.get("event_id")
        if self._replicas is not None and event.get("sender") == self._user_id and (asked := answered(event)):
            self._replicas.replied(asked)
        if not isinstance(event_id, str) or self._progress.is_done(event_id) or ctx.dispatcher.in_hand(event_id):
            return None
        stale = (
            ctx.backlog.skips(event) and self._answerer.command(ctx.client, room_id=room_id, event=event) is not None
        )
        if stale and (self._replicas is None or self._replicas.leading):
            return event_id
        answer = functools.partial(
            self._answerer.handle,
            ctx.client,
            room_id=room_id,
            event_id=event_id,
            event=event,
            handler=ctx.handler,
            stop=ctx.stop,
            stale=stale,
        )
        key = (room_id, event.get("sender"))
        await ctx.dispatcher.submit(ctx.batch, key=key, event_id=event_id, work=answer)
        return None

    async def _fill_gap(
        self, client: AsyncClient, room_id: str, *, start: str | None, since: str, stop: asyncio.Event
    ) -> list[Mapping[str, object]] | None:
        """The events a limited timeline left out, oldest first (None when stopped)."""
        found: list[Mapping[str, object]] = []
        token = start
        for _ in range(GAP_PAGES):
            fetch = functools.partial(self._homeserver.page, client, room_id=room_id, start=token, since=since)
            page = await self._homeserver.retry(fetch, stop=stop, what="backfill")
            if page is None:
                return None
            chunk, end = page
            found.extend(chunk)
            if not chunk or not end or end == token:
                break
            token = end
        found.reverse()
        return found

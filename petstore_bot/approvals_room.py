"""Requests for approval made at a terminal, posted by a running bot in ``[bot] approvals_room``.

``petstore add ...`` on an environment under ``[bot] approvals`` leaves a request in the shared state
(:mod:`petstore_state.pending`) and waits. :class:`ApprovalPoster` looks for requests no bot has posted yet every
``interval`` seconds, claims each one (:meth:`~petstore_state.pending.PendingStore.mark_posted`, under the
replicas' lease: one bot of several wins), binds it to the approvals room and seals what it will show
(:meth:`~petstore_state.pending.PendingStore.bind` with :class:`~petstore_bot.seal.Seal`: it is decided there only,
and runs only as shown) and posts it: who asks, what, every field it sends, the code to ``!approve`` or ``!deny``.
The approval itself is the chat command's (``!approve CODE`` runs the write as the asker, approved by the approver,
and records the result in the store, where the terminal reads it). Requests asked for in a chat room were answered
(and bound) there already: they are only marked.

The request is an :class:`~bot_commands.results.ApprovalNeeded` result, rendered through its view as every reply
is (:func:`request_reply`), and posted with the transport's ``announce`` (the one that owns the room) under the key
``approval CODE``: a platform that keeps keys posts it once however often it is tried.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

from bot_commands.outcome import Outcome
from bot_commands.results import ApprovalNeeded
from petstore_state import StateError
from petstore_state.lease import Lease
from petstore_state.pending import PendingStore, PendingWrite

from .chat import Reply
from .replicas import fence_of, may_act
from .replies import reply_for
from .seal import Seal
from .watcher import Announce

__all__ = ["ApprovalPoster", "request_reply"]

log = logging.getLogger("petstore_bot")


class ApprovalPoster:
    """Posts the terminal's requests for approval in ``room`` (see the module docstring)."""

    def __init__(
        self,
        store: PendingStore,
        *,
        room: str,
        announce: Announce,
        seal: Seal,
        platform: str,
        prefix: str = "!",
        interval: float = 1.0,
        should_run: Callable[[], Awaitable[bool]] | None = None,
        lease: Lease | None = None,
    ) -> None:
        self.store, self.room, self.announce, self.interval = store, room, announce, interval
        #: ``platform``: the name the room is bound under (``<platform>:<room>``); ``prefix``: the commands' prefix
        #: where the request is posted (``!approve CODE``).
        self.seal, self.platform, self.prefix = seal, platform, prefix
        #: Asked before each look: posting waits while it says no (the bot not connected, another replica leading).
        self.should_run = should_run
        #: The replicas' lease: each request is claimed under it and posted only while it is valid.
        self.lease = lease

    def gated(self, should_run: Callable[[], Awaitable[bool]], *, lease: Lease | None = None) -> ApprovalPoster:
        """This poster, looking only while ``should_run`` says yes, claiming under ``lease``."""
        return ApprovalPoster(
            self.store,
            room=self.room,
            announce=self.announce,
            seal=self.seal,
            platform=self.platform,
            prefix=self.prefix,
            interval=self.interval,
            should_run=should_run,
            lease=lease,
        )

    async def run(self, stop: asyncio.Event) -> None:
        """Post what waits every ``interval`` seconds until ``stop``; a failing store is logged and tried again."""
        while not stop.is_set():
            try:
                if self.should_run is None or await self.should_run():
                    await self.post_waiting()
            except StateError as exc:
                log.warning("approvals room: %s", exc)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), timeout=self.interval)

    async def post_waiting(self) -> int:
        """Post every request no bot has posted yet (claimed first: one bot posts each); how many were posted."""
        posted = 0
        for write in await self.store.unposted(kind="approve"):
            if not await self.store.mark_posted(write.code, fence=fence_of(self.lease)):
                continue  # another bot claimed it (or this one lost the lease)
            if write.where != "terminal":
                continue  # asked in a chat room: the answer there showed it
            bound = await self.store.bind(write.code, room=f"{self.platform}:{self.room}", seal=self.seal)
            if bound is None:
                continue  # decided (or bound) meanwhile
            if not may_act(self.lease):
                log.warning("request %s is not posted: the lease ran out; petstore approvals shows it", write.code)
                continue
            log.info("posting request %s of %s in %s", write.code, write.asker, self.room)
            if await self.announce(self.room, request_reply(bound, prefix=self.prefix), key=f"approval {write.code}"):
                posted += 1
            else:
                log.warning("request %s could not be posted in %s: petstore approvals shows it", write.code, self.room)
        return posted


def request_reply(write: PendingWrite, *, prefix: str = "!") -> Reply:
    """The message asking for a second person (who, what, on which environment, every field, the codes to type):
    the request as an :class:`~bot_commands.results.ApprovalNeeded` result, through its view."""
    result = ApprovalNeeded(
        code=write.code,
        what=write.what,
        line=write.line,
        ttl=round(write.expires - write.created),
        asker=write.asker,
        env=write.env,
        action=f"{write.what} from a terminal",
        fields=write.fields,
    )
    return reply_for(Outcome(line=write.line, result=result), prefix=prefix)

"""Requests for approval made at a terminal, posted by a running bot in ``[bot] approvals_room``.

``petstore add ...`` on an environment under ``[bot] approvals`` leaves a request in the shared state
(:mod:`petstore_state.pending`) and waits. :class:`ApprovalPoster` looks for requests no bot has posted yet every
``interval`` seconds, claims each one (:meth:`~petstore_state.pending.PendingStore.mark_posted`, under the
replicas' lease: one bot of several wins), binds it to the approvals room and seals what it will show
(:meth:`~petstore_state.pending.PendingStore.bind` with :class:`~petstore_bot.seal.Seal`: it is decided there only,
and runs only as shown) and posts it: who asks, what, every field it sends, the code to ``!approve`` or ``!deny``.
The approval itself is the chat command's (``!approve CODE`` runs the write as the asker, approved by the approver,
and records the result in the store, where the terminal reads it). A request asked for in a chat room was answered
there already: it is only marked, unless it was bound to the approvals room when it was made (``[bot]
approvals_room`` set, :class:`~petstore_bot.pending.StoredPending`): then it is posted there like a terminal's.

The request is an :class:`~bot_commands.results.ApprovalNeeded` result, rendered through its view as every reply
is (:func:`request_reply`), and posted with the transport's ``announce`` (the one that owns the room) under the key
``approval CODE``: a platform that keeps keys posts it once however often it is tried.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from bot_commands.outcome import Outcome
from bot_commands.policy import same_where, where_in
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
    """Posts the requests for approval bound to ``room`` (see the module docstring): work of the lease holder
    (:meth:`~petstore_bot.replicas.Leadership.add`), cancelled when the lease is lost."""

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
        lease: Lease | None = None,
    ) -> None:
        self.store, self.room, self.announce, self.interval = store, room, announce, interval
        #: ``platform``: the name the room is bound under (``<platform>:<room>``); ``prefix``: the commands' prefix
        #: where the request is posted (``!approve CODE``).
        self.seal, self.platform, self.prefix = seal, platform, prefix
        #: The replicas' lease: each request is claimed under it and posted only while it is valid.
        self.lease = lease

    async def run(self, stop: asyncio.Event) -> None:
        """Post what waits every ``interval`` seconds until ``stop``; a failing store is logged and tried again."""
        while not stop.is_set():
            try:
                await self.post_waiting()
            except StateError as exc:
                log.warning("approvals room: %s", exc)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), timeout=self.interval)

    async def _bound(self, write: PendingWrite) -> PendingWrite | None:
        """``write`` bound to this room: a terminal's, bound now; one asked in chat, bound here when it was made
        (``[bot] approvals_room``). None: one decided in the chat room it was asked in (the answer there showed it),
        or decided (or bound elsewhere) meanwhile."""
        here = where_in(self.platform, self.room)
        if write.where != "terminal":
            return write if same_where(write.room) == here else None
        return await self.store.bind(write.code, room=here, seal=self.seal)

    async def post_waiting(self) -> int:
        """Post every request no bot has posted yet (claimed first: one bot posts each); how many were posted."""
        posted = 0
        for write in await self.store.unposted(kind="approve"):
            if not await self.store.mark_posted(write.code, fence=fence_of(self.lease)):
                continue  # another bot claimed it (or this one lost the lease)
            bound = await self._bound(write)
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
    asked = "from a terminal" if write.where == "terminal" else f"(asked in {write.where})"
    result = ApprovalNeeded(
        code=write.code,
        what=write.what,
        line=write.line,
        ttl=round(write.expires - write.created),
        asker=write.asker,
        env=write.env,
        action=f"{write.what} {asked}",
        fields=write.fields,
    )
    return reply_for(Outcome(line=write.line, result=result), prefix=prefix)

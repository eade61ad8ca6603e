"""Requests for approval made at a terminal, posted by a running bot in ``[bot] approvals_room``.

``petstore add ...`` on an environment under ``[bot] approvals`` leaves a request in the shared state
(:mod:`petstore_state.pending`) and waits. :class:`ApprovalPoster` looks for requests no bot has posted yet every
``interval`` seconds, claims each one (:meth:`~petstore_state.pending.PendingStore.mark_posted`: one bot of several
wins) and posts it: who asks, what, every field it sends, the code to ``!approve`` or ``!deny``. The approval itself
is the chat command's (``!approve CODE`` runs the write as the asker, approved by the approver, and records the
result in the store, where the terminal reads it). Requests asked for in a chat room were answered there already:
they are only marked.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import logging
from collections.abc import Awaitable, Callable

from bot_commands.sanitize import visible
from petstore_state import StateError
from petstore_state.pending import PendingStore, PendingWrite

from .chat import Reply

__all__ = ["Announce", "ApprovalPoster", "request_reply"]

log = logging.getLogger("petstore_bot")

Announce = Callable[[str, Reply, str], Awaitable[object]]
"""Post a reply unasked: ``(room, reply, key)``; ``key`` names the message for good (a retry posts it once)."""


class ApprovalPoster:
    """Posts the terminal's requests for approval in ``room`` (see the module docstring)."""

    def __init__(
        self,
        store: PendingStore,
        *,
        room: str,
        announce: Announce,
        prefix: str = "!",
        interval: float = 1.0,
    ) -> None:
        self.store, self.room, self.announce = store, room, announce
        self.prefix, self.interval = prefix, interval

    async def run(self, stop: asyncio.Event) -> None:
        """Post what waits every ``interval`` seconds until ``stop``; a failing store is logged and tried again."""
        while not stop.is_set():
            try:
                await self.post_waiting()
            except StateError as exc:
                log.warning("approvals room: %s", exc)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), timeout=self.interval)

    async def post_waiting(self) -> int:
        """Post every request no bot has posted yet (claimed first: one bot posts each); how many were posted."""
        posted = 0
        for write in await self.store.unposted(kind="approve"):
            if not await self.store.mark_posted(write.code):
                continue  # another bot claimed it
            if write.where != "terminal":
                continue  # asked in a chat room: the answer there showed it
            log.info("posting request %s of %s in %s", write.code, write.asker, self.room)
            await self.announce(self.room, request_reply(write, prefix=self.prefix), f"approval {write.code}")
            posted += 1
        return posted


def request_reply(write: PendingWrite, *, prefix: str = "!") -> Reply:
    """The message asking for a second person: who, what, on which environment, every field, the codes to type."""
    minutes = max(round((write.expires - write.created) / 60), 1)
    head = f"Approval needed: {write.asker} asks from a terminal to {write.what} on {write.env}."
    sends = [f"  {name}: {value}" for name, value in write.fields]
    how = (
        f"Reply {prefix}approve {write.code} to run it (as {write.asker}), or {prefix}deny {write.code} [reason], "
        f"within {minutes} min; the asker cannot approve it."
    )
    text = "\n".join(visible(part) for part in [head, *(["It sends:", *sends] if sends else []), how])
    esc = _html
    rows = "".join(f"<li><code>{esc(name)}</code>: {esc(value)}</li>" for name, value in write.fields)
    markup = (
        f"<p><strong>Approval needed</strong>: {esc(write.asker)} asks from a terminal to {esc(write.what)} on "
        f"<strong>{esc(write.env)}</strong>.</p>"
        + (f"<p>It sends:</p><ul>{rows}</ul>" if rows else "")
        + f"<p>Reply <code>{esc(prefix)}approve {esc(write.code)}</code> to run it (as {esc(write.asker)}), or "
        f"<code>{esc(prefix)}deny {esc(write.code)} [reason]</code>, within {minutes} min; the asker cannot "
        f"approve it.</p>"
    )
    return Reply(text=text, html=markup)


def _html(text: str) -> str:
    return html.escape(visible(text))

"""Signals on an asking message while and after the bot works on it: ⏳ and a typing notice for a command still
running after ``slow_after`` seconds (both removed when it is answered), and a write's ✅ or ❌.

Best effort: a signal that cannot be sent is logged and skipped (the reply itself is what matters, and is retried
by the transport).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import TypeVar

import aiohttp
from nio import AsyncClient, RoomRedactResponse, RoomSendResponse, RoomTypingResponse
from nio.api import RelationshipType

from petstore_bot.matrix_events import reaction, transaction_id

log = logging.getLogger("petstore_bot.matrix")
T = TypeVar("T")
#: What a send to a room happens inside (the bot's key sharing: ``Crypto.sending``); nothing by default.
Guard = Callable[[AsyncClient, str], AbstractAsyncContextManager[None]]

BUSY = "⏳"
TYPING_MS = 30_000


class Busy:
    """⏳ and a typing notice on one asking event while its command is slow; :meth:`end` removes them."""

    def __init__(
        self, client: AsyncClient, *, room_id: str, event_id: str, slow_after: float, guard: Guard | None = None
    ) -> None:
        self._client, self._room_id, self._event_id, self._slow_after = client, room_id, event_id, slow_after
        self._guard = guard
        self._shown = False
        self._reaction: str | None = None

    async def run(self, work: Awaitable[T]) -> T:
        """``await work``; past ``slow_after`` seconds, the signals go up while it runs on."""
        task = asyncio.ensure_future(work)
        done, _ = await asyncio.wait({task}, timeout=self._slow_after)
        if done:
            return task.result()
        self._shown = True
        self._reaction = await react(
            self._client, room_id=self._room_id, event_id=self._event_id, key=BUSY, guard=self._guard
        )
        await _typing(self._client, self._room_id, on=True)
        return await task

    async def end(self) -> None:
        """Takes the signals down (after the answer went out, so there is no moment with neither)."""
        if not self._shown:
            return
        self._shown = False
        await _typing(self._client, self._room_id, on=False)
        if self._reaction is not None:
            await _redact(self._client, self._room_id, self._reaction)


async def react(
    client: AsyncClient, *, room_id: str, event_id: str, key: str, guard: Guard | None = None
) -> str | None:
    """Reacts with ``key`` to ``event_id``; the reaction's event id, or None when it could not be sent.

    ``guard``: what the send happens inside (in an encrypted room nio may share the room key first)."""
    content = reaction(event_id=event_id, key=key)
    try:
        async with (guard or _nothing)(client, room_id):
            response = await client.room_send(
                room_id,
                "m.reaction",
                content,
                tx_id=transaction_id(f"{key} {event_id}"),
                ignore_unverified_devices=True,
            )
    except (aiohttp.ClientError, OSError, TimeoutError) as exc:
        log.warning("reaction %s on %s not sent (%s)", key, event_id, type(exc).__name__)
        return None
    if isinstance(response, RoomSendResponse):
        return str(response.event_id)
    if getattr(response, "status_code", None) == "M_DUPLICATE_ANNOTATION":  # another replica of this bot's, gone
        return await _own_reaction(client, room_id=room_id, event_id=event_id, key=key)
    log.warning("reaction %s on %s refused: %s", key, event_id, getattr(response, "status_code", "?"))
    return None


async def _own_reaction(client: AsyncClient, *, room_id: str, event_id: str, key: str) -> str | None:
    """The event id of this account's ``key`` reaction to ``event_id`` (sent by another device of the bot: a
    replica that died before taking it down), so that this one takes it down instead."""
    try:
        async for related in client.room_get_event_relations(
            room_id, event_id, rel_type=RelationshipType.annotation, event_type="m.reaction"
        ):
            relates = related.source.get("content", {}).get("m.relates_to", {})
            if related.sender == client.user_id and relates.get("key") == key:
                return str(related.event_id)
    except (aiohttp.ClientError, OSError, TimeoutError, AttributeError) as exc:  # nio's iterator: an error answer
        log.warning("reaction %s on %s not found (%s)", key, event_id, type(exc).__name__)  # has no next_batch
    return None


async def _typing(client: AsyncClient, room_id: str, *, on: bool) -> None:
    try:
        response = await client.room_typing(room_id, typing_state=on, timeout=TYPING_MS)
    except (aiohttp.ClientError, OSError, TimeoutError) as exc:
        log.warning("typing notice in %s not sent (%s)", room_id, type(exc).__name__)
        return
    if not isinstance(response, RoomTypingResponse):
        log.warning("typing notice in %s refused: %s", room_id, getattr(response, "status_code", "?"))


async def _redact(client: AsyncClient, room_id: str, event_id: str) -> None:
    try:
        response = await client.room_redact(room_id, event_id, tx_id=transaction_id(f"redact {event_id}"))
    except (aiohttp.ClientError, OSError, TimeoutError) as exc:
        log.warning("reaction %s not removed (%s)", event_id, type(exc).__name__)
        return
    if not isinstance(response, RoomRedactResponse):
        log.warning("reaction %s not removed: %s", event_id, getattr(response, "status_code", "?"))


@contextlib.asynccontextmanager
async def _nothing(_client: AsyncClient, _room_id: str) -> AsyncIterator[None]:
    yield

"""One Matrix message answered: is it a command for the bot, what the handler replies, the reply sent and recorded.

Bodies over ``max_bytes`` get ``TOO_LONG`` and bodies that are not plain text (NUL or other control characters,
lone surrogates) get ``NOT_TEXT``, when ``address`` says the message is for the bot; a body that is not a string
at all is ignored, and so are notices, edits and the bot's own events. An event the bot could not decrypt gets
``UNDECRYPTABLE`` and a key request. Replies are ``m.notice`` related to the question as ``reply_style`` says; a
command still running after ``slow_after`` seconds gets ⏳ and a typing notice, a write ✅ or ❌. The transaction
id of a reply derives from the asking event id, so a retried send is not posted twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import re
import traceback
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass

from nio import AsyncClient, Event, LocalProtocolError, MegolmEvent

from petstore_bot.addressing import Address
from petstore_bot.chat import INTERNAL_ERROR, Handler, Incoming, Reply
from petstore_bot.matrix_crypto import Crypto
from petstore_bot.matrix_events import ReplyStyle, content_of, mentions, pill_names, reply_content, transaction_id
from petstore_bot.matrix_homeserver import NETWORK, Homeserver
from petstore_bot.matrix_rooms import direct_chat
from petstore_bot.matrix_signals import Busy, react
from petstore_bot.matrix_state import Progress
from petstore_bot.replicas import Replicas

log = logging.getLogger("petstore_bot.matrix")

TOO_LONG = "Ignored: that message is longer than {limit} bytes."
NOT_TEXT = "Ignored: that message is not plain text."
UNDECRYPTABLE = (
    "I could not decrypt that message (my device had no key for it yet): please send it again, "
    "your client shares the key with me now."
)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff]")


def everything(text: str, *, direct: bool = False, also: Iterable[str] = ()) -> str | None:
    """The default addressing: every message is for the bot, as sent."""
    return text


@dataclass(frozen=True)
class Asked:
    """One timeline event being answered: the client it came to, its room and id, the event, and the bot's stop."""

    client: AsyncClient
    room_id: str
    event_id: str
    event: Mapping[str, object]
    stop: asyncio.Event


#: What to reply to one event, made again for each turn of it (a coroutine is awaited once).
Answer = Callable[[], Awaitable[Reply | None]]


class Answerer:
    """Answers the messages the sync loop hands it (see the module docstring)."""

    def __init__(
        self,
        *,
        homeserver: Homeserver,
        progress: Progress,
        crypto: Crypto,
        replicas: Replicas | None,
        address: Address,
        max_bytes: int,
        reply_style: ReplyStyle,
        slow_after: float,
    ) -> None:
        self._homeserver = homeserver
        self._user_id = homeserver.user_id
        self._progress = progress
        self._crypto = crypto
        self._replicas = replicas
        self._address = address
        self._max_bytes = max_bytes
        self._reply_style: ReplyStyle = reply_style
        self._slow_after = slow_after
        #: The bot's display name (set at login): a mention pill of it addresses the bot.
        self.display_name: str | None = None

    def command(self, client: AsyncClient, *, room_id: str, event: Mapping[str, object]) -> str | None:
        """The command in a timeline event (``!list sold``), None when it is not one for the bot (in a direct
        chat, the bot and one person, a bare command is one)."""
        content = content_of(event)
        if event.get("type") != "m.room.message" or event.get("sender") == self._user_id:
            return None
        if content.get("msgtype") != "m.text" or "m.new_content" in content:
            return None
        body = content.get("body")
        if not isinstance(body, str) or not isinstance(event.get("sender"), str):
            log.info("ignored %s: body is not a string", event.get("event_id"))
            return None
        also = pill_names(content, user_id=self._user_id)
        if self.display_name and mentions(content, user_id=self._user_id):
            also += (self.display_name,)
        return self._address(body[: self._max_bytes], direct=direct_chat(client, room_id), also=also)

    async def handle(
        self,
        client: AsyncClient,
        *,
        room_id: str,
        event_id: str,
        event: Mapping[str, object],
        handler: Handler,
        stop: asyncio.Event,
        stale: bool = False,
    ) -> bool:
        """Answers one event; False when ``stop`` came before its reply went out (answered after a restart).

        With replicas, an event to answer waits for this process's turn (or for another replica's answer);
        a ``stale`` one (backlog too old, see Backlog) is not run when its turn comes. Its reply is sent only when
        :meth:`Replicas.may_answer` says the turn is still this process's (else the turn is waited for again)."""
        if stop.is_set():
            return False  # a message queued behind another of the same person: left for the restart
        undecryptable = event.get("type") == "m.room.encrypted" and event.get("sender") != self._user_id
        line = None if undecryptable else self.command(client, room_id=room_id, event=event)
        answer: Answer
        if undecryptable:
            answer = functools.partial(self._undecryptable, client, room_id, event)
        else:
            answer = functools.partial(self._answer, room_id, event_id, event, handler, line=line)
        asked = Asked(client=client, room_id=room_id, event_id=event_id, event=event, stop=stop)
        if self._replicas is None or (line is None and not undecryptable):
            return await self._run_and_reply(asked, answer=answer, replicas=None) is True  # None only with replicas
        return await self._in_turn(asked, answer=answer, replicas=self._replicas, stale=stale)

    async def _in_turn(self, asked: Asked, *, answer: Answer, replicas: Replicas, stale: bool) -> bool:
        """Answers ``asked`` when it is this process's turn (done when another replica answered it, or skipped when
        ``stale``), and records it answered; False when ``stop`` came first."""
        event_id = asked.event_id
        while True:  # again when this process lost the lease while the command ran: the turn is the new holder's
            turn = await replicas.turn(event_id, stop=asked.stop)
            if turn is None:
                return False
            if not turn or stale:
                log.info("%s: %s", event_id, "answered by another replica" if not turn else "skipped (too old)")
                return await self._done_by_replica(event_id, stale=turn and stale)
            done = await self._run_and_reply(asked, answer=answer, replicas=replicas)
            if done is not None:
                break
        if done:
            await replicas.answered(event_id)
        return done

    async def _run_and_reply(self, asked: Asked, *, answer: Answer, replicas: Replicas | None) -> bool | None:
        """Runs ``answer()`` (⏳ and typing while it is slow) and sends its reply (:meth:`_reply`); None, nothing
        sent, when ``replicas`` say this process lost the lease while it ran."""
        busy = Busy(
            asked.client,
            room_id=asked.room_id,
            event_id=asked.event_id,
            slow_after=self._slow_after,
            guard=self._crypto.sending,
        )
        try:
            reply = await busy.run(answer())
            if replicas is not None and not await replicas.may_answer(asked.event_id):
                log.warning("%s: not answered here: this process lost the lease while it ran", asked.event_id)
                return None
            return await self._reply(asked, reply=reply)
        finally:
            await busy.end()

    async def _done_by_replica(self, event_id: str, *, stale: bool) -> bool:
        """An event another replica answered (or, ``stale``, this one skips as too old): done, not answered."""
        self._progress.mark_done(event_id)
        self._progress.save()
        if stale and self._replicas is not None:
            await self._replicas.answered(event_id)
        return True

    async def _reply(self, asked: Asked, *, reply: Reply | None) -> bool:
        """Sends ``reply`` to the event (and its mark); False when ``stop`` came before it went out."""
        if reply is not None:
            content = reply_content(event=asked.event, event_id=asked.event_id, reply=reply, style=self._reply_style)
            sent = await self._homeserver.deliver(
                asked.client,
                room_id=asked.room_id,
                content=content,
                tx_id=transaction_id(asked.event_id),
                stop=asked.stop,
                what="reply",
            )
            if sent is None:
                return False  # stopped before the reply went out: not done, answered after restart
            if reply.mark is not None:
                await react(
                    asked.client,
                    room_id=asked.room_id,
                    event_id=asked.event_id,
                    key=reply.mark,
                    guard=self._crypto.sending,
                )
        self._progress.mark_done(asked.event_id)
        self._progress.save()
        return True

    async def _undecryptable(self, client: AsyncClient, room_id: str, event: Mapping[str, object]) -> Reply:
        """A message the bot could not decrypt: one line asking to send it again (and ask the sender's devices for
        the key, so a later message of the same session can be read)."""
        log.info("could not decrypt %s in %s from %s", event.get("event_id"), room_id, event.get("sender"))
        parsed = Event.parse_encrypted_event(dict(event))
        if isinstance(parsed, MegolmEvent):
            parsed.room_id = room_id
            with contextlib.suppress(LocalProtocolError, *NETWORK):
                await client.request_room_key(parsed)
        return Reply(UNDECRYPTABLE)

    async def _answer(
        self, room_id: str, event_id: str, event: Mapping[str, object], handler: Handler, *, line: str | None
    ) -> Reply | None:
        """What to reply to the command ``line`` of one timeline event, if anything; the handler's failures
        become INTERNAL_ERROR."""
        if line is None:
            return None
        body, sender = str(content_of(event).get("body")), str(event.get("sender"))
        if len(body.encode("utf-8", errors="surrogatepass")) > self._max_bytes:
            return Reply(TOO_LONG.format(limit=self._max_bytes))
        if _CONTROL.search(body):
            return Reply(NOT_TEXT)
        incoming = Incoming(platform="matrix", room=room_id, user=sender, event_id=event_id, text=line)
        try:
            return await handler(incoming)
        except Exception as exc:  # noqa: BLE001 -- the loop stays up; the user gets one line
            detail = self._homeserver.redact("".join(traceback.format_exception(exc)))
            log.error("handler failed on %s in %s from %s: %s", event_id, room_id, sender, detail)
            return Reply(INTERNAL_ERROR)

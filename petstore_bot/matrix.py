"""Matrix transport on matrix-nio: login, joins, invites, a sync loop whose token lives on disk, replies.

Message handling, in order of a sync batch: bodies over ``max_bytes`` get ``TOO_LONG`` and bodies that are not
plain text (NUL or other control characters, lone surrogates) get ``NOT_TEXT``, when ``address`` says the message
is for the bot; a body that is not a string at all is ignored. Notices, edits and the bot's own events are ignored.
Messages are handled side by side (``petstore_bot.matrix_dispatch``): one person's slow command holds nobody
else, and each person's messages in a room are answered in the order they were sent.
Replies are ``m.notice`` (bots do not answer notices, so two bots never loop), related to the question as
``reply_style`` says (``petstore_bot.matrix_events``), with an empty ``m.mentions``; a command still running after
``slow_after`` seconds gets ⏳ and a typing notice, a write ✅ or ❌ (``petstore_bot.matrix_signals``). A command
missed while the bot was away and older than ``max_backlog_age`` is not run; the room is told how many were skipped.
A 429 from the homeserver is waited out as it asks, with a log line naming Synapse's ``override_ratelimit``.
The last safe sync token (every message before it answered) and the ids answered since it are
written after every message (``state_dir``, mode 0600), so a stop or crash mid-batch answers nothing twice on
restart and leaves nothing unanswered; the transaction id of a
reply derives from the asking event id and the device id is kept, so a retried send is not posted twice either.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import json
import logging
import os
import random
import re
import time
import traceback
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TypeVar

import aiohttp
from nio import (
    AsyncClient,
    AsyncClientConfig,
    EncryptionError,
    Event,
    JoinResponse,
    LocalProtocolError,
    LoginResponse,
    MegolmEvent,
    OlmUnverifiedDeviceError,
    ProfileGetDisplayNameResponse,
    RoomLeaveResponse,
    RoomMessagesResponse,
    RoomSendResponse,
    SyncResponse,
    WhoamiResponse,
)

from petstore_bot.addressing import Address
from petstore_bot.chat import INTERNAL_ERROR, Handler, Incoming, Reply
from petstore_bot.matrix_crypto import Crypto
from petstore_bot.matrix_dispatch import Batch, Dispatcher
from petstore_bot.matrix_events import (
    ReplyStyle,
    content_of,
    edit,
    mentions,
    notice,
    pill_names,
    reply_content,
    transaction_id,
)
from petstore_bot.matrix_signals import Busy, react
from petstore_os import open_private

log = logging.getLogger("petstore_bot.matrix")
T = TypeVar("T")
JSON = dict[str, object]

TOO_LONG = "Ignored: that message is longer than {limit} bytes."
NOT_TEXT = "Ignored: that message is not plain text."
UNDECRYPTABLE = (
    "I could not decrypt that message (my device had no key for it yet): please send it again, "
    "your client shares the key with me now."
)
SKIPPED = (
    "Skipped {count} {commands} sent while I was away (older than {age}, see max_backlog_age): "
    "send again what is still needed."
)
ENCRYPTED = (
    "This room is end-to-end encrypted and this petstore bot was installed without encryption support "
    "(pip install 'petstore[matrix]' brings it): it will not answer here."
)
_FATAL = {"M_UNKNOWN_TOKEN", "M_MISSING_TOKEN", "M_FORBIDDEN", "M_USER_DEACTIVATED", "M_INVALID_USERNAME"}
_NETWORK = (aiohttp.ClientError, TimeoutError, OSError)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff]")
_NO_NOISE: JSON = {"not_types": ["*"]}


def _sync_filter(*, timeline_limit: int) -> JSON:
    room = {"timeline": {"limit": timeline_limit}, "state": {"lazy_load_members": True}}
    return {"presence": _NO_NOISE, "account_data": _NO_NOISE, "room": {**room, "ephemeral": _NO_NOISE}}


class MatrixError(Exception):
    """The homeserver refused the bot for good (bad login, token revoked). Never carries a secret."""


class _Transient(Exception):
    """A homeserver error worth retrying."""


class _RateLimited(_Transient):
    """429 ``M_LIMIT_EXCEEDED``: retried after the wait the homeserver asks for."""

    def __init__(self, text: str, *, retry_after: float) -> None:
        super().__init__(text)
        self.retry_after = retry_after


RATE_LIMITED = (
    "rate-limited by the homeserver (429) on %s; retrying in %.1fs. Exempt the bot: Synapse's admin API "
    'POST /_synapse/admin/v1/users/%s/override_ratelimit with {"messages_per_second": 0, "burst_count": 0}'
)


@dataclass
class _State:
    """What survives a restart: the sync token, ids answered since it, the device, rooms told about encryption."""

    since: str | None = None
    done: list[str] = field(default_factory=list)
    device_id: str | None = None
    encrypted_notified: list[str] = field(default_factory=list)

    @classmethod
    def load(cls, path: Path) -> _State:
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return cls()
        except (OSError, ValueError) as exc:  # unreadable: start as on a first start (no history answered)
            log.warning("sync state %s unreadable (%s); starting from now", path, type(exc).__name__)
            return cls()
        if not isinstance(raw, dict):
            return cls()
        since, device = raw.get("since"), raw.get("device_id")
        return cls(
            since=since if isinstance(since, str) else None,
            done=[x for x in raw.get("done", []) if isinstance(x, str)],
            device_id=device if isinstance(device, str) else None,
            encrypted_notified=[x for x in raw.get("encrypted_notified", []) if isinstance(x, str)],
        )

    def save(self, path: Path) -> None:
        tmp = path.with_suffix(".tmp")
        with os.fdopen(open_private(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), "w", encoding="utf-8") as out:
            json.dump(asdict(self), out)
        os.replace(tmp, path)


class MatrixTransport:
    """Runs a handler on the messages of the rooms the bot is in; see the module docstring for the rules."""

    def __init__(
        self,
        *,
        homeserver: str,
        user_id: str,
        password: str | None = None,
        access_token: str | None = None,
        rooms: Sequence[str],
        state_dir: Path,
        accept_invite: Callable[[str, bool], bool],
        max_bytes: int = 4096,
        address: Address | None = None,
        reply_style: ReplyStyle = "reply",
        slow_after: float = 1.0,
        max_backlog_age: float = 900.0,
        crypto: Crypto | None = None,
        sync_timeout_ms: int = 30_000,
        backoff_max: float = 30.0,
    ) -> None:
        if (password is None) == (access_token is None):
            raise ValueError("give exactly one of password or access_token")
        self._homeserver = homeserver.rstrip("/")
        self._user_id = user_id
        self._password = password
        self._token = access_token
        self._rooms = list(rooms)
        self._accept_invite = accept_invite
        self._max_bytes = max_bytes
        self._address: Address = address or _everything
        self._reply_style: ReplyStyle = reply_style
        self._slow_after = slow_after
        self._max_backlog_age = max_backlog_age
        self._crypto = crypto or Crypto()
        self._sync_started = 0.0
        self._sync_attempts = 0
        #: The skipped-commands notice of each room: (the backlog's listening_since, its event id, the count told).
        self._told: dict[str, tuple[float, str, int]] = {}
        self._display_name: str | None = None
        self._sync_timeout_ms = sync_timeout_ms
        self._backoff_max = backoff_max
        key = hashlib.sha256(f"{self._homeserver} {user_id}".encode()).hexdigest()[:16]
        self._state_path = Path(state_dir) / f"matrix-{key}.json"
        self._state = _State()
        self._recent: OrderedDict[str, None] = OrderedDict()
        self._session_token: str | None = None
        #: The logged-in client while :meth:`run` serves (what :meth:`announce` sends with), and its stop event.
        self._live: tuple[AsyncClient, asyncio.Event] | None = None
        self._live_ready = asyncio.Event()

    def __repr__(self) -> str:
        return f"MatrixTransport(homeserver={self._homeserver!r}, user_id={self._user_id!r})"

    # -- the loop -------------------------------------------------------------------------------------------

    async def run(self, handler: Handler, *, stop: asyncio.Event, ready: asyncio.Event | None = None) -> None:
        """Serves until ``stop`` is set; raises MatrixError only when the homeserver refuses the bot for good.

        ``ready`` is set once the sync position is known: messages sent after that are answered.
        """
        self._state_path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        self._state = _State.load(self._state_path)
        config = AsyncClientConfig(
            max_timeouts=0,
            max_limit_exceeded=0,
            request_timeout=30,
            store_sync_tokens=False,
            encryption_enabled=self._crypto.enabled,
        )
        client = AsyncClient(
            self._homeserver,
            self._user_id,
            device_id=self._state.device_id or "",
            store_path=str(self._state_path.parent),
            config=config,
        )
        try:
            if await self._retry(lambda: self._login(client), stop=stop, what="login") is None:
                return
            for room in self._rooms:
                await self._retry(functools.partial(self._join, client, room), stop=stop, what=f"join {room}")
            if self._state.since is None and not await self._first_sync(client, stop=stop):
                return
            log.info("ready: answering new messages as %s", self._user_id)
            ready_at = time.time()
            if ready is not None:
                ready.set()
            self._live = (client, stop)
            self._live_ready.set()
            await self._serve(client, handler, stop=stop, ready_at=ready_at)
        finally:
            self._live = None
            self._live_ready.clear()
            self._save()
            await client.close()

    async def announce(self, room: str, reply: Reply, *, key: str) -> str | None:
        """Post ``reply`` in ``room`` unasked (a notice pinging nobody), once :meth:`run` is serving; ``key`` names
        the message for good (a retried post is not posted twice). Its event id; None when the bot stopped first,
        "" when the homeserver refused it for good."""
        await self._live_ready.wait()
        if self._live is None:
            return None
        client, stop = self._live
        content = notice(reply.text)
        if reply.html is not None:
            content |= {"format": "org.matrix.custom.html", "formatted_body": reply.html}
        tx = transaction_id("announce " + key)
        return await self._retry(lambda: self._send(client, room, content, tx), stop=stop, what="post", race_call=False)

    async def _serve(self, client: AsyncClient, handler: Handler, *, stop: asyncio.Event, ready_at: float) -> None:
        """Sync after sync until ``stop``; the messages in hand finish before it returns (see the dispatcher).

        ``ready_at``: when the bot said it was ready (time.time()); what was sent before it was missed."""
        dispatcher = Dispatcher(on_safe=lambda next_batch: self._safe(dispatcher, next_batch))
        since = self._state.since
        try:
            # A command sent before the bot was listening (before it was ready, or during an outage: before the
            # sync that came through after failed ones began) was missed: not run when older than max_backlog_age.
            listening_since = ready_at
            while not stop.is_set():
                self._sync_attempts = 0
                response = await self._retry(functools.partial(self._sync, client, since=since), stop=stop, what="sync")
                if response is None:
                    break
                if self._sync_attempts > 1:
                    listening_since = self._sync_started
                backlog = Backlog(listening_since=listening_since, now=time.time(), max_age=self._max_backlog_age)
                batch = dispatcher.begin(response.next_batch)
                if not await self._handle_batch(
                    client,
                    response,
                    handler,
                    stop=stop,
                    since=since,
                    dispatcher=dispatcher,
                    batch=batch,
                    backlog=backlog,
                ):
                    break
                dispatcher.close(batch)
                since = response.next_batch
            await dispatcher.drain()
        except asyncio.CancelledError:
            dispatcher.cancel()
            raise

    def _safe(self, dispatcher: Dispatcher, next_batch: str) -> None:
        """Every message up to ``next_batch`` is answered: that token goes on disk, and of the ids answered
        only those of later batches are kept (the ones before the token will not come again)."""
        self._state.since = next_batch
        self._state.done = [event_id for event_id in self._state.done if dispatcher.holds(event_id)]
        self._save()

    async def _first_sync(self, client: AsyncClient, *, stop: asyncio.Event) -> bool:
        """First start: take the current token, answer nothing from before it; handle invites and encryption."""
        response = await self._retry(lambda: self._sync(client, since=None), stop=stop, what="initial sync")
        if response is None:
            return False
        await self._handle_invites(client, response, stop=stop)
        for room_id, info in response.rooms.join.items():
            if self._unreadable(room_id, [e.source for e in [*info.state, *info.timeline.events]]):
                await self._notify_encrypted(client, room_id, stop=stop)
        self._state.since, self._state.done = response.next_batch, []
        self._save()
        return True

    async def _handle_batch(
        self,
        client: AsyncClient,
        response: SyncResponse,
        handler: Handler,
        *,
        stop: asyncio.Event,
        since: str | None,
        dispatcher: Dispatcher,
        batch: Batch,
        backlog: Backlog,
    ) -> bool:
        """Hands one sync batch's events to the dispatcher; False when ``stop`` interrupted it (not all handed).

        A command of the ``backlog`` (missed, and too old) is not run: the room is told once how many were skipped."""
        await self._handle_invites(client, response, stop=stop)
        for room_id, info in response.rooms.join.items():
            events: list[Mapping[str, object]] = [e.source for e in info.timeline.events]
            if info.timeline.limited and since is not None:
                gap = await self._fill_gap(client, room_id, start=info.timeline.prev_batch, since=since, stop=stop)
                if gap is None:
                    return False
                events = gap + events
            if self._unreadable(room_id, [*(e.source for e in info.state), *events]):
                await self._notify_encrypted(client, room_id, stop=stop)
                continue
            skipped: list[str] = []
            for event in events:
                if stop.is_set():
                    return False
                event_id = event.get("event_id")
                if not isinstance(event_id, str) or event_id in self._recent or event_id in self._state.done:
                    continue
                if dispatcher.in_hand(event_id):
                    continue
                if backlog.skips(event) and self._command(event, direct=_direct(client, room_id)) is not None:
                    skipped.append(event_id)
                    continue
                work = functools.partial(self._handle_event, client, room_id, event_id, event, handler, stop=stop)
                await dispatcher.submit(batch, key=(room_id, event.get("sender")), event_id=event_id, work=work)
            if skipped and not await self._tell_skipped(client, room_id, skipped, backlog=backlog, stop=stop):
                return False
        return not stop.is_set()

    async def _tell_skipped(
        self, client: AsyncClient, room_id: str, skipped: list[str], *, backlog: Backlog, stop: asyncio.Event
    ) -> bool:
        """One notice per room and catch-up saying how many old commands were not run (a later batch of the same
        backlog edits it to the new total); they count as answered. False when stopped."""
        told = self._told.get(room_id)
        earlier = told[2] if told is not None and told[0] == backlog.listening_since else 0
        count = earlier + len(skipped)
        minutes = self._max_backlog_age / 60
        text = SKIPPED.format(
            count=count,
            commands="command" if count == 1 else "commands",
            age=f"{minutes:g} min" if minutes >= 1 else f"{self._max_backlog_age:g} s",
        )
        log.info("skipped %d commands older than %gs in %s", count, self._max_backlog_age, room_id)
        tx = transaction_id("skipped " + skipped[0])
        content = notice(text) if told is None or not earlier else edit(told[1], notice(text))
        sent = await self._retry(
            lambda: self._send(client, room_id, content, tx), stop=stop, what="notice", race_call=False
        )
        if sent is None:
            return False
        if sent and not earlier:
            self._told[room_id] = (backlog.listening_since, sent, count)
        elif told is not None and earlier:
            self._told[room_id] = (told[0], told[1], count)
        for event_id in skipped:
            self._mark_done(event_id)
        self._save()
        return True

    async def _handle_event(
        self,
        client: AsyncClient,
        room_id: str,
        event_id: str,
        event: Mapping[str, object],
        handler: Handler,
        *,
        stop: asyncio.Event,
    ) -> bool:
        """Answers one event; False when ``stop`` came before its reply went out (answered after a restart)."""
        if stop.is_set():
            return False  # a message queued behind another of the same person: left for the restart
        answer: Awaitable[Reply | None]
        if event.get("type") == "m.room.encrypted" and event.get("sender") != self._user_id:
            answer = self._undecryptable(client, room_id, event)
        else:
            line = self._command(event, direct=_direct(client, room_id))
            answer = self._answer(room_id, event_id, event, handler, line=line)
        busy = Busy(client, room_id=room_id, event_id=event_id, slow_after=self._slow_after)
        try:
            return await self._reply(client, room_id, event_id, event, await busy.run(answer), stop=stop)
        finally:
            await busy.end()

    async def _reply(
        self,
        client: AsyncClient,
        room_id: str,
        event_id: str,
        event: Mapping[str, object],
        reply: Reply | None,
        *,
        stop: asyncio.Event,
    ) -> bool:
        """Sends ``reply`` to ``event`` (and its mark); False when ``stop`` came before it went out."""
        if reply is not None:
            content = reply_content(event=event, event_id=event_id, reply=reply, style=self._reply_style)
            sent = await self._retry(
                lambda: self._send(client, room_id, content, transaction_id(event_id)),
                stop=stop,
                what="reply",
                race_call=False,
            )
            if sent is None:
                return False  # stopped before the reply went out: not done, answered after restart
            if reply.mark is not None:
                await react(client, room_id=room_id, event_id=event_id, key=reply.mark)
        self._mark_done(event_id)
        self._save()
        return True

    def _mark_done(self, event_id: str) -> None:
        self._recent[event_id] = None
        if len(self._recent) > 2000:
            self._recent.popitem(last=False)
        self._state.done.append(event_id)

    async def _undecryptable(self, client: AsyncClient, room_id: str, event: Mapping[str, object]) -> Reply:
        """A message the bot could not decrypt: one line asking to send it again (and ask the sender's devices for
        the key, so a later message of the same session can be read)."""
        log.info("could not decrypt %s in %s from %s", event.get("event_id"), room_id, event.get("sender"))
        parsed = Event.parse_encrypted_event(dict(event))
        if isinstance(parsed, MegolmEvent):
            parsed.room_id = room_id
            with contextlib.suppress(LocalProtocolError, *_NETWORK):
                await client.request_room_key(parsed)
        return Reply(UNDECRYPTABLE)

    def _command(self, event: Mapping[str, object], *, direct: bool) -> str | None:
        """The command in a timeline event (``!list sold``), None when it is not one for the bot.

        ``direct``: the room is a direct chat (the bot and one person), where a bare command is one."""
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
        if self._display_name and mentions(content, user_id=self._user_id):
            also += (self._display_name,)
        return self._address(body[: self._max_bytes], direct=direct, also=also)

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
            detail = self._redact("".join(traceback.format_exception(exc)))
            log.error("handler failed on %s in %s from %s: %s", event_id, room_id, sender, detail)
            return Reply(INTERNAL_ERROR)

    # -- rooms ----------------------------------------------------------------------------------------------

    async def _handle_invites(self, client: AsyncClient, response: SyncResponse, *, stop: asyncio.Event) -> None:
        for room_id, info in response.rooms.invite.items():
            sources = [_invite_source(e) for e in info.invite_state]
            inviter = self._inviter(sources)
            try:
                accept = inviter is not None and self._accept_invite(inviter, self._invited_direct(sources))
            except Exception as exc:  # noqa: BLE001 -- a failing policy declines
                log.error("accept_invite failed for %s: %s", inviter, type(exc).__name__)
                accept = False
            if accept:
                log.info("accepting the invite to %s from %s", room_id, inviter)
                await self._retry(functools.partial(self._join, client, room_id), stop=stop, what=f"join {room_id}")
            else:
                log.info("declining the invite to %s from %s", room_id, inviter)
                await self._retry(functools.partial(self._leave, client, room_id), stop=stop, what=f"decline {room_id}")

    def _inviter(self, events: Sequence[Mapping[str, object]]) -> str | None:
        for event in events:
            if event.get("type") == "m.room.member" and event.get("state_key") == self._user_id:
                if content_of(event).get("membership") == "invite" and isinstance(event.get("sender"), str):
                    return str(event["sender"])
        return None

    def _invited_direct(self, events: Sequence[Mapping[str, object]]) -> bool:
        """Whether the invite is to a direct chat (the inviter's client set ``is_direct`` on the bot's invite)."""
        return any(
            e.get("type") == "m.room.member"
            and e.get("state_key") == self._user_id
            and content_of(e).get("is_direct") is True
            for e in events
        )

    def _unreadable(self, room_id: str, events: Sequence[Mapping[str, object]]) -> bool:
        """Whether ``room_id`` is encrypted while this install cannot decrypt (matrix-nio without its e2e extra)."""
        if self._crypto.enabled:
            return False
        if room_id in self._state.encrypted_notified:
            return True
        return any(e.get("type") in ("m.room.encryption", "m.room.encrypted") for e in events)

    async def _notify_encrypted(self, client: AsyncClient, room_id: str, *, stop: asyncio.Event) -> None:
        if room_id in self._state.encrypted_notified:
            return
        content = notice(ENCRYPTED)
        tx = transaction_id(f"encrypted {room_id}")
        sent = await self._retry(
            lambda: self._send(client, room_id, content, tx), stop=stop, what="notice", race_call=False
        )
        if sent is not None:
            self._state.encrypted_notified.append(room_id)
            self._save()

    async def _fill_gap(
        self, client: AsyncClient, room_id: str, *, start: str | None, since: str, stop: asyncio.Event
    ) -> list[Mapping[str, object]] | None:
        """The events a limited timeline left out, oldest first (None when stopped)."""
        found: list[Mapping[str, object]] = []
        token = start
        for _ in range(100):
            fetch = functools.partial(self._page, client, room_id, token, since)
            page = await self._retry(fetch, stop=stop, what="backfill")
            if page is None:
                return None
            chunk, end = page
            found.extend(chunk)
            if not chunk or not end or end == token:
                break
            token = end
        found.reverse()
        return found

    # -- one homeserver call each; errors become _Transient or MatrixError -------------------------------------

    async def _login(self, client: AsyncClient) -> bool:
        if self._token is not None:
            client.user_id, client.access_token = self._user_id, self._token  # whoami first: the token's device
            who = await client.whoami()
            if not isinstance(who, WhoamiResponse):
                raise self._error("login", who)
            client.restore_login(user_id=self._user_id, device_id=who.device_id or "", access_token=self._token)
        else:
            response = await client.login(password=self._password, device_name="petstore bot")
            if not isinstance(response, LoginResponse):
                raise self._error("login", response)
            self._session_token = response.access_token
        self._state.device_id = client.device_id
        self._save()
        self._crypto.secure(client)
        log.info("logged in as %s (device %s)", self._user_id, client.device_id)
        named = await client.get_displayname(self._user_id)
        self._display_name = named.displayname if isinstance(named, ProfileGetDisplayNameResponse) else None
        return True

    async def _sync(self, client: AsyncClient, *, since: str | None) -> SyncResponse:
        self._sync_started = time.time()
        self._sync_attempts += 1
        if since is None:
            response = await client.sync(timeout=0, sync_filter=_sync_filter(timeline_limit=1), full_state=True)
        else:
            limit = _sync_filter(timeline_limit=100)
            response = await client.sync(timeout=self._sync_timeout_ms, since=since, sync_filter=limit)
        if not isinstance(response, SyncResponse):
            raise self._error("sync", response)
        await self._crypto.after_sync(client)
        return response

    async def _join(self, client: AsyncClient, room: str) -> bool:
        response = await client.join(room)
        if not isinstance(response, JoinResponse):
            log.warning("could not join %s: %s", room, self._redact(str(response)))
        return True

    async def _leave(self, client: AsyncClient, room: str) -> bool:
        response = await client.room_leave(room)
        if not isinstance(response, RoomLeaveResponse):
            log.warning("could not decline %s: %s", room, self._redact(str(response)))
        return True

    async def _send(self, client: AsyncClient, room_id: str, content: JSON, tx_id: str) -> str:
        """Sends a message; its event id, or "" when the homeserver refused it for good (given up)."""
        self._crypto.trust(client)
        try:
            response = await client.room_send(
                room_id,
                "m.room.message",
                content,
                tx_id=tx_id,
                ignore_unverified_devices=self._crypto.key_sharing == "tofu",
            )
        except (LocalProtocolError, EncryptionError, OlmUnverifiedDeviceError) as exc:
            raise _Transient(f"could not encrypt for {room_id}: {_describe(exc)}") from None
        if isinstance(response, RoomSendResponse):
            return str(response.event_id)
        code = getattr(response, "status_code", None)
        if code in _FATAL:  # e.g. no longer in the room: give this reply up, keep serving
            log.warning("reply to %s refused: %s", room_id, self._redact(str(response)))
            return ""
        raise self._error("send", response)

    async def _page(
        self, client: AsyncClient, room_id: str, start: str | None, since: str
    ) -> tuple[list[Mapping[str, object]], str | None]:
        response = await client.room_messages(room_id, start=start or "", end=since, limit=100)
        if not isinstance(response, RoomMessagesResponse):
            raise _Transient(self._redact(str(response)))
        return [e.source for e in response.chunk], response.end

    def _error(self, what: str, response: object) -> Exception:
        code = getattr(response, "status_code", None)
        text = self._redact(f"{what} failed for {self._user_id}: {response}")
        if code == "M_LIMIT_EXCEEDED":
            wait = getattr(response, "retry_after_ms", None)
            return _RateLimited(text, retry_after=wait / 1000 if isinstance(wait, int) else 5.0)
        return MatrixError(text) if code in _FATAL else _Transient(text)

    # -- plumbing -------------------------------------------------------------------------------------------

    async def _retry(
        self, call: Callable[[], Awaitable[T]], *, stop: asyncio.Event, what: str, race_call: bool = True
    ) -> T | None:
        """``call()`` until it succeeds, with capped exponential backoff; None when ``stop`` ends the wait."""
        attempt = 0
        while True:
            try:
                result = await (_until(call(), stop) if race_call else call())
                return None if result is None and stop.is_set() else result
            except _RateLimited as exc:
                delay = exc.retry_after
                log.warning(RATE_LIMITED, what, delay, self._user_id)
            except (_Transient, *_NETWORK) as exc:
                delay = min(self._backoff_max, 0.25 * 2**attempt) * random.uniform(0.5, 1.0)
                attempt += 1
                log.warning("%s failed (%s); retrying in %.1fs", what, self._redact(_describe(exc)), delay)
            if await _until(asyncio.sleep(delay, result=True), stop) is None:
                return None

    def _redact(self, text: str) -> str:
        for secret in (self._password, self._token, self._session_token):
            if secret:
                text = text.replace(secret, "***")
        return text

    def _save(self) -> None:
        self._state.save(self._state_path)


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


def _invite_source(event: object) -> Mapping[str, object]:
    """An invite's stripped state event as a dict (nio pops ``content`` off its source; put it back)."""
    source = dict(getattr(event, "source", {}))
    membership, content = getattr(event, "membership", None), getattr(event, "content", None)
    if "content" not in source and isinstance(content, dict):
        source["content"] = content
    elif "content" not in source and isinstance(membership, str):
        source["content"] = {"membership": membership}
    return source


def _direct(client: AsyncClient, room_id: str) -> bool:
    """Whether ``room_id`` is a direct chat: the bot and at most one other member (joined or invited)."""
    room = client.rooms.get(room_id)
    return room is not None and room.member_count <= 2


def _everything(text: str, *, direct: bool = False, also: Iterable[str] = ()) -> str | None:
    """The default addressing: every message is for the bot, as sent."""
    return text


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


async def _until(awaitable: Awaitable[T], stop: asyncio.Event) -> T | None:
    """Awaits ``awaitable`` unless ``stop`` is set first (then cancels it and returns None)."""
    if stop.is_set():
        if asyncio.iscoroutine(awaitable):
            awaitable.close()
        return None
    task = asyncio.ensure_future(awaitable)
    stopper = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({task, stopper}, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        task.cancel()
        raise
    finally:
        stopper.cancel()
    if task.done():
        return task.result()
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    return None

"""Matrix transport on matrix-nio: login, joins, invites, a sync loop whose token lives on disk, replies.

:class:`MatrixTransport` is what the bot runs and the background work posts through (:meth:`MatrixTransport.announce`);
the work is done by its parts, each in a module of its own:

- ``petstore_bot.matrix_homeserver``: one matrix-nio call per method, errors for good (:class:`MatrixError`) or to
  retry; a 429 from the homeserver is waited out as it asks, with a log line saying which limit it is; a refused
  access token is replaced by one password login on the same device.
- ``petstore_bot.matrix_state``: the last safe sync token (every message before it answered) and the ids answered
  since it, written after every message (``state_dir``, mode 0600), so a stop or crash mid-batch answers nothing
  twice on restart and leaves nothing unanswered; the device id and the access token of the last password login
  are kept too, so a restart logs in with that token (homeservers limit password logins: Synapse's ``rc_login``).

While it is logged in and its syncs come through, the transport's :attr:`MatrixTransport.reach` is up; it goes down
when syncs have failed for ``unreachable_after`` seconds (and when the transport stops): the lease of a replica is
held only while it is up (:class:`petstore_bot.replicas.Reach`).
- ``petstore_bot.matrix_sync``: the sync loop. Messages are handled side by side (``petstore_bot.matrix_dispatch``):
  one person's slow command holds nobody else, and each person's messages in a room are answered in the order they
  were sent. The power levels (and creators) of the rooms whose grants follow them (``power_levels``) are kept
  current from each ``m.room.power_levels`` event a sync brings, once the messages before it are answered and
  before the messages after it are handed on.
- ``petstore_bot.matrix_rooms``: invites (``accept_invite``), encrypted rooms this install cannot read, power levels
  read from the room state (the first sync's, or asked for once before the room's first message after a restart).
- ``petstore_bot.matrix_backlog``: a command missed while the bot was away and older than ``max_backlog_age`` is not
  run; the room is told how many were skipped.
- ``petstore_bot.matrix_answer``: one message answered. Bodies over ``max_bytes`` get ``TOO_LONG`` and bodies that
  are not plain text get ``NOT_TEXT``, when ``address`` says the message is for the bot. Notices, edits and the
  bot's own events are ignored. Replies are ``m.notice`` (bots do not answer notices, so two bots never loop),
  related to the question as ``reply_style`` says (``petstore_bot.matrix_events``), with an empty ``m.mentions``;
  a command still running after ``slow_after`` seconds gets ⏳ and a typing notice, a write ✅ or ❌
  (``petstore_bot.matrix_signals``). The transaction id of a reply derives from the asking event id, so a retried
  send is not posted twice either.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from nio import AsyncClient, AsyncClientConfig, ProfileGetDisplayNameResponse

from petstore_api.errors import ConfigError
from petstore_bot.addressing import Address
from petstore_bot.chat import INTERNAL_ERROR, Handler, Reply
from petstore_bot.matrix_answer import NOT_TEXT, TOO_LONG, UNDECRYPTABLE, Answerer, everything
from petstore_bot.matrix_backlog import SKIPPED, Backlog
from petstore_bot.matrix_crypto import Crypto
from petstore_bot.matrix_events import ReplyStyle, reply_content, transaction_id
from petstore_bot.matrix_homeserver import RATE_LIMITED, Homeserver, MatrixError, describe
from petstore_bot.matrix_rooms import ENCRYPTED, AcceptInvite, Rooms
from petstore_bot.matrix_state import Progress
from petstore_bot.matrix_sync import SyncLoop
from petstore_bot.replicas import Reach, Replicas
from petstore_bot.roles import PowerLevels
from petstore_bot.settings import MatrixSettings
from petstore_bot.transport import Wiring, not_set

if TYPE_CHECKING:  # pragma: no cover
    from petstore_bot.transport import Transport

__all__ = [
    "ENCRYPTED",
    "INTERNAL_ERROR",
    "NOT_TEXT",
    "RATE_LIMITED",
    "SKIPPED",
    "TOO_LONG",
    "UNDECRYPTABLE",
    "Backlog",
    "MatrixError",
    "MatrixTransport",
    "matrix_names",
    "owns_room",
    "transport",
]

log = logging.getLogger("petstore_bot.matrix")
#: A Matrix room id or alias: a sigil, a local part, a colon, a server name; from room version 12 on (MSC4291) a
#: room id is ``!`` and the hash of the room's create event alone (43 characters of unpadded URL-safe base64).
_ROOM = re.compile(r"[!#][^:\s]+:\S+|![A-Za-z0-9_-]{43}")


def matrix_names(user_id: str) -> tuple[str, ...]:
    """What people call a Matrix bot when they name it: its localpart (``petbot``) and its full user id."""
    return (user_id.removeprefix("@").split(":", 1)[0], user_id)


def owns_room(room: str) -> bool:
    """Whether ``room`` is a Matrix room: an id (``!abc:example.org``) or an alias (``#ops:example.org``)."""
    return _ROOM.fullmatch(room) is not None


def transport(wiring: Wiring) -> MatrixTransport:
    """The Matrix transport of ``[bot.matrix]`` (the transport contract's factory); ConfigError, in one line naming
    the setting, when the homeserver, the user or its password (or access token) is not set."""
    matrix = wiring.bot.matrix
    homeserver, user_id = _required(matrix, where=wiring.config_where)
    from petstore_bot.matrix_crypto import Crypto

    return MatrixTransport(
        homeserver=homeserver,
        user_id=user_id,
        password=matrix.password.get_secret_value() if matrix.password else None,
        access_token=matrix.access_token.get_secret_value() if matrix.access_token else None,
        rooms=matrix.rooms,
        state_dir=matrix.state_dir.expanduser() if matrix.state_dir else wiring.state_dir,
        accept_invite=wiring.accept_invite,
        address=wiring.addressing(matrix_names(user_id)),
        reply_style=wiring.bot.reply_style,
        crypto=Crypto(key_sharing=matrix.key_sharing, verified_devices=matrix.verified_devices),
        max_backlog_age=wiring.bot.max_backlog_age,
        power_levels=wiring.roles.levels if wiring.roles is not None else None,
        replicas=wiring.replicas,
    )


def _required(matrix: MatrixSettings, *, where: str) -> tuple[str, str]:
    """The homeserver and the user of ``[bot.matrix]``; ConfigError when one of them, or the credential, is not set."""
    if not matrix.homeserver:
        raise not_set("bot.matrix", "homeserver", where)
    if not matrix.user_id:
        raise not_set("bot.matrix", "user_id", where)
    if (matrix.password is None) == (matrix.access_token is None):
        raise ConfigError(
            f"[bot.matrix] needs one of password or access_token: set it in {where} or "
            "PETSTORE_BOT__MATRIX__PASSWORD / PETSTORE_BOT__MATRIX__ACCESS_TOKEN"
        )
    return matrix.homeserver, matrix.user_id


class MatrixTransport:
    """Runs a handler on the messages of the rooms the bot is in; see the module docstring for the rules."""

    platform = "matrix"

    def __init__(
        self,
        *,
        homeserver: str,
        user_id: str,
        password: str | None = None,
        access_token: str | None = None,
        rooms: Sequence[str],
        state_dir: Path,
        accept_invite: AcceptInvite,
        max_bytes: int = 4096,
        address: Address | None = None,
        reply_style: ReplyStyle = "reply",
        slow_after: float = 1.0,
        max_backlog_age: float = 900.0,
        crypto: Crypto | None = None,
        sync_timeout_ms: int = 30_000,
        backoff_max: float = 30.0,
        power_levels: PowerLevels | None = None,
        replicas: Replicas | None = None,
        unreachable_after: float = 10.0,
    ) -> None:
        if (password is None) == (access_token is None):
            raise ValueError("give exactly one of password or access_token")
        self._crypto = crypto or Crypto()
        self._progress = Progress(state_dir=state_dir, homeserver=homeserver.rstrip("/"), user_id=user_id)
        self._homeserver = Homeserver(
            url=homeserver.rstrip("/"),
            user_id=user_id,
            password=password,
            access_token=access_token,
            crypto=self._crypto,
            backoff_max=backoff_max,
            remember=self._remember,
        )
        self._user_id = user_id
        self._joined_at_start = list(rooms)
        #: Up while the bot is logged in and its syncs come through: the gate of its lease.
        self.reach = Reach()
        self._rooms, self._answerer, self._loop = self._parts(
            accept_invite=accept_invite,
            power_levels=power_levels or PowerLevels(),
            address=address or everything,
            max_bytes=max_bytes,
            reply_style=reply_style,
            slow_after=slow_after,
            max_backlog_age=max_backlog_age,
            sync_timeout_ms=sync_timeout_ms,
            replicas=replicas,
            unreachable_after=unreachable_after,
        )
        #: The client while the bot is ready (announce posts with it).
        self._client: AsyncClient | None = None

    def _parts(
        self,
        *,
        accept_invite: AcceptInvite,
        power_levels: PowerLevels,
        address: Address,
        max_bytes: int,
        reply_style: ReplyStyle,
        slow_after: float,
        max_backlog_age: float,
        sync_timeout_ms: int,
        replicas: Replicas | None,
        unreachable_after: float,
    ) -> tuple[Rooms, Answerer, SyncLoop]:
        """The parts that look after the rooms and answer the messages, and the sync loop that hands them on."""
        rooms = Rooms(
            homeserver=self._homeserver,
            progress=self._progress,
            accept_invite=accept_invite,
            crypto=self._crypto,
            levels=power_levels,
        )
        answerer = Answerer(
            homeserver=self._homeserver,
            progress=self._progress,
            crypto=self._crypto,
            replicas=replicas,
            address=address,
            max_bytes=max_bytes,
            reply_style=reply_style,
            slow_after=slow_after,
        )
        loop = SyncLoop(
            homeserver=self._homeserver,
            progress=self._progress,
            crypto=self._crypto,
            rooms=rooms,
            answerer=answerer,
            replicas=replicas,
            max_backlog_age=max_backlog_age,
            sync_timeout_ms=sync_timeout_ms,
            reach=self.reach,
            unreachable_after=unreachable_after,
        )
        return rooms, answerer, loop

    def __repr__(self) -> str:
        return f"MatrixTransport(homeserver={self._homeserver.url!r}, user_id={self._user_id!r})"

    @property
    def names(self) -> tuple[str, ...]:
        """What people call the bot: its localpart and its full user id."""
        return matrix_names(self._user_id)

    @property
    def can_post(self) -> bool:
        """Whether the bot is logged in and synced, so :meth:`announce` can post."""
        return self._client is not None and self._loop.synced

    def owns(self, room: str) -> bool:
        """Whether ``room`` is a Matrix room id or alias (:func:`owns_room`)."""
        return owns_room(room)

    async def announce(self, room: str, reply: Reply, /, *, key: str | None = None) -> bool:
        """Post ``reply`` in ``room`` unasked (a watched new pet, a schedule's answer): an m.notice pinging nobody.
        ``key`` names the post: the same key gives the same transaction id, so a post repeated after a crash is
        one event. False when the bot is not connected or the homeserver did not take it (try again later)."""
        client = self._client
        if client is None or not self._loop.synced:
            return False
        content = reply_content(event={}, event_id="", reply=reply, style="plain")
        tx_id = transaction_id(key) if key else transaction_id(f"{room} {time.time_ns()} {id(reply)}")
        try:
            return bool(await self._homeserver.send(client, room_id=room, content=content, tx_id=tx_id))
        except Exception as exc:  # noqa: BLE001 -- the homeserver's or the network's: the caller tries again
            log.warning("posting in %s failed: %s", room, self._homeserver.redact(describe(exc)))
            return False

    async def run(self, handler: Handler, *, stop: asyncio.Event, ready: asyncio.Event | None = None) -> None:
        """Serves until ``stop`` is set; raises MatrixError only when the homeserver refuses the bot for good.

        ``ready`` is set once the sync position is known: messages sent after that are answered.
        """
        self._progress.load()
        self._loop.synced = False
        client = self._new_client()
        try:
            if await self._homeserver.retry(lambda: self._login(client), stop=stop, what="login") is None:
                return
            for room in self._joined_at_start:
                await self._rooms.join(client, room=room, stop=stop)
            if self._progress.state.since is None and not await self._loop.first_sync(client, stop=stop):
                return
            log.info("ready: answering new messages as %s", self._user_id)
            self._client = client
            self._loop.reached()
            ready_at = time.time()
            if ready is not None:
                ready.set()
            await self._loop.serve(client, handler, stop=stop, ready_at=ready_at)
        finally:
            self.reach.set(up=False)
            self._client = None
            self._progress.save()
            await self._crypto.aclose()
            await client.close()

    def _new_client(self) -> AsyncClient:
        """A matrix-nio client that retries nothing itself (the transport does), on the device kept on disk."""
        config = AsyncClientConfig(
            max_timeouts=0,
            max_limit_exceeded=0,
            request_timeout=30,
            store_sync_tokens=False,
            encryption_enabled=self._crypto.enabled,
        )
        return AsyncClient(
            self._homeserver.url,
            self._user_id,
            device_id=self._progress.state.device_id or "",
            store_path=str(self._progress.path.parent),
            config=config,
        )

    async def _login(self, client: AsyncClient) -> bool:
        """Logs in (with the token kept from the last password login, when there is one), keeps the device id,
        secures the key store and learns the bot's display name."""
        await self._homeserver.log_in(client, kept_token=self._progress.state.access_token)
        self._progress.state.device_id = client.device_id
        self._progress.save()
        self._crypto.secure(client)
        log.info("logged in as %s (device %s)", self._user_id, client.device_id)
        named = await client.get_displayname(self._user_id)
        self._answerer.display_name = named.displayname if isinstance(named, ProfileGetDisplayNameResponse) else None
        return True

    def _remember(self, client: AsyncClient) -> None:
        """After a password login: its device and access token kept on disk for the next start."""
        self._progress.logged_in(device_id=client.device_id, access_token=client.access_token)


def _contract(made: MatrixTransport) -> Transport:  # pragma: no cover
    """The transport contract, checked by mypy: a MatrixTransport is a Transport."""
    return made

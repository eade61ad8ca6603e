"""The rooms of a Matrix bot: invites accepted or declined, encrypted rooms it cannot read, power levels it follows.

An invite is accepted when ``accept_invite(inviter, direct, room_id)`` says so (a failing policy declines). A room
that is end-to-end encrypted while this install cannot decrypt is told once (``ENCRYPTED``) and not answered. The
power levels (and creators) of the rooms whose grants follow them (``PowerLevels.wanted``) are read from the room
state: the first sync's, each ``m.room.power_levels`` event a sync brings, or asked for once before the room's
first message after a restart.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence

from nio import AsyncClient, RoomGetStateResponse, SyncResponse

from petstore_bot.matrix_crypto import Crypto
from petstore_bot.matrix_events import content_of, notice, transaction_id
from petstore_bot.matrix_homeserver import Homeserver
from petstore_bot.matrix_state import Progress
from petstore_bot.roles import PowerLevels

log = logging.getLogger("petstore_bot.matrix")

ENCRYPTED = (
    "This room is end-to-end encrypted and this petstore bot was installed without encryption support "
    "(pip install 'petstore[matrix]' brings it): it will not answer here."
)
#: ``accept_invite(inviter, direct, room_id)``: whether to join a room the bot is invited to.
AcceptInvite = Callable[[str, bool, str], bool]


class Rooms:
    """What the bot does about the rooms themselves, as opposed to the messages in them."""

    def __init__(
        self,
        *,
        homeserver: Homeserver,
        progress: Progress,
        accept_invite: AcceptInvite,
        crypto: Crypto,
        levels: PowerLevels,
    ) -> None:
        self._homeserver = homeserver
        self._user_id = homeserver.user_id
        self._progress = progress
        self._accept_invite = accept_invite
        self._crypto = crypto
        self.levels = levels

    async def join(self, client: AsyncClient, *, room: str, stop: asyncio.Event) -> None:
        """Joins ``room``, retrying until the homeserver answers or ``stop``."""
        call = functools.partial(self._homeserver.join, client, room=room)
        await self._homeserver.retry(call, stop=stop, what=f"join {room}")

    async def handle_invites(self, client: AsyncClient, response: SyncResponse, *, stop: asyncio.Event) -> None:
        """Accepts or declines each invite of a sync, as ``accept_invite`` says."""
        for room_id, info in response.rooms.invite.items():
            sources = [invite_source(e) for e in info.invite_state]
            inviter = inviter_of(sources, user_id=self._user_id)
            try:
                direct = invited_direct(sources, user_id=self._user_id)
                accept = inviter is not None and self._accept_invite(inviter, direct, room_id)
            except Exception as exc:  # noqa: BLE001 -- a failing policy declines
                log.error("accept_invite failed for %s: %s", inviter, type(exc).__name__)
                accept = False
            if accept:
                log.info("accepting the invite to %s from %s", room_id, inviter)
                await self.join(client, room=room_id, stop=stop)
            else:
                log.info("declining the invite to %s from %s", room_id, inviter)
                call = functools.partial(self._homeserver.leave, client, room=room_id)
                await self._homeserver.retry(call, stop=stop, what=f"decline {room_id}")

    def unreadable(self, room_id: str, events: Sequence[Mapping[str, object]]) -> bool:
        """Whether ``room_id`` is encrypted while this install cannot decrypt (matrix-nio without its e2e extra)."""
        if self._crypto.enabled:
            return False
        if room_id in self._progress.state.encrypted_notified:
            return True
        return any(e.get("type") in ("m.room.encryption", "m.room.encrypted") for e in events)

    async def notify_encrypted(self, client: AsyncClient, room_id: str, *, stop: asyncio.Event) -> None:
        """Tells ``room_id`` once (across restarts) that the bot cannot read it."""
        if room_id in self._progress.state.encrypted_notified:
            return
        content = notice(ENCRYPTED)
        tx = transaction_id(f"encrypted {room_id}")
        sent = await self._homeserver.deliver(
            client, room_id=room_id, content=content, tx_id=tx, stop=stop, what="notice"
        )
        if sent is not None:
            self._progress.state.encrypted_notified.append(room_id)
            self._progress.save()

    def see_levels(self, room_id: str, events: Iterable[Mapping[str, object]]) -> None:
        """Keep the power levels of a room whose grants follow them, from its ``m.room.power_levels`` events (and
        its creators, from ``m.room.create``)."""
        if not self.levels.wanted(room_id):
            return
        for event in events:
            kind, sender = event.get("type"), event.get("sender")
            if event.get("state_key") != "":
                continue
            if kind == "m.room.power_levels":
                self.levels.update(room_id, content_of(event))
                log.info("power levels of %s updated", room_id)
            elif kind == "m.room.create" and isinstance(sender, str):
                self.levels.created(room_id, sender=sender, content=content_of(event))

    async def know_levels(self, client: AsyncClient, room_id: str, *, stop: asyncio.Event) -> None:
        """Reads the power levels of a room that follows them when they are not known yet (after a restart)."""
        if self.levels.wanted(room_id) and not self.levels.known(room_id):
            call = functools.partial(self._read_levels, client, room_id)
            await self._homeserver.retry(call, stop=stop, what="levels")

    async def _read_levels(self, client: AsyncClient, room_id: str) -> bool:
        """The room's power levels and creators from its current state (after a restart, before its first
        message)."""
        response = await client.room_get_state(room_id)
        if isinstance(response, RoomGetStateResponse):
            events = [event for event in response.events if isinstance(event, dict)]
            self.see_levels(room_id, events)
            if not self.levels.known(room_id):  # a room without power levels: everyone at 0
                self.levels.update(room_id, {})
            return True
        code = getattr(response, "status_code", None)
        if isinstance(code, str) and code.startswith("M_") and code != "M_LIMIT_EXCEEDED":
            # Refused for good (the bot left the room, no such state): levels count as none, roles are the defaults.
            log.warning("cannot read the power levels of %s: %s", room_id, self._homeserver.redact(str(response)))
            self.levels.update(room_id, {})
            return True
        raise self._homeserver.error("levels", response)


def direct_chat(client: AsyncClient, room_id: str) -> bool:
    """Whether ``room_id`` is a direct chat: the bot and at most one other member (joined or invited)."""
    room = client.rooms.get(room_id)
    return room is not None and room.member_count <= 2


def inviter_of(events: Sequence[Mapping[str, object]], *, user_id: str) -> str | None:
    """Who invited ``user_id``, from an invite's stripped state."""
    for event in events:
        if event.get("type") == "m.room.member" and event.get("state_key") == user_id:
            if content_of(event).get("membership") == "invite" and isinstance(event.get("sender"), str):
                return str(event["sender"])
    return None


def invited_direct(events: Sequence[Mapping[str, object]], *, user_id: str) -> bool:
    """Whether the invite is to a direct chat (the inviter's client set ``is_direct`` on the bot's invite)."""
    return any(
        e.get("type") == "m.room.member" and e.get("state_key") == user_id and content_of(e).get("is_direct") is True
        for e in events
    )


def invite_source(event: object) -> Mapping[str, object]:
    """An invite's stripped state event as a dict (nio pops ``content`` off its source; put it back)."""
    source = dict(getattr(event, "source", {}))
    membership, content = getattr(event, "membership", None), getattr(event, "content", None)
    if "content" not in source and isinstance(content, dict):
        source["content"] = content
    elif "content" not in source and isinstance(membership, str):
        source["content"] = {"membership": membership}
    return source

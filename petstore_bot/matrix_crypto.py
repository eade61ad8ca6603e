"""End-to-end encryption for the Matrix bot: matrix-nio's olm machine, its store in the bot's state dir, and which
devices get the bot's room keys.

The store (``<state_dir>/<user>_<device>.db``, SQLite, mode 0600 in a 0700 dir) holds the bot's device keys, so
the bot keeps one device, the same id and keys, across restarts (the device id is kept in the sync state, and a
password login asks for that device again). After each sync, :meth:`Crypto.after_sync` starts the key exchange
in the background: one-time keys uploaded, the devices of people in encrypted rooms queried when the homeserver
says their device list changed, keys claimed for new devices, pending to-device messages sent; nio decrypts what
comes in. A reply waits for that exchange only when its send needs it (:meth:`Crypto.sending`): in an encrypted
room whose room key must be shared (first message, new or removed devices), or one of whose members' device lists
changed without a reason the sync shows. Synapse counts a member as "changed" whenever it sends that member's event
again in a room's state, as lazy loading does each time the bot syncs a room after another; such a member is still
queried, in the background, but no reply waits ~20 ms for it (the query and its signature checks). Replies in
unencrypted rooms never wait.

Key sharing (``[bot.matrix] key_sharing``):

- ``tofu`` (trust on first use, the default): a device is trusted the first time the bot sees it; nio pins its
  keys, so a device id that comes back with other keys is not trusted.
- ``verified``: only the devices listed in ``[bot.matrix] verified_devices`` (``"@alice:example.org DEVICEID
  ED25519KEY"``: user, device id and its ed25519 fingerprint as a client shows them) get room keys; every other
  device is blacklisted and cannot read the bot's replies. The bot still reads what they send.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import AsyncIterator, Awaitable, Sequence
from dataclasses import dataclass
from typing import Literal

import aiohttp
from nio import AsyncClient, KeysClaimResponse, KeysQueryResponse, KeysUploadResponse, SyncResponse
from nio.crypto import ENCRYPTION_ENABLED, OlmDevice

__all__ = ["ENCRYPTION_ENABLED", "Crypto", "KeySharing", "parse_device"]

log = logging.getLogger("petstore_bot.matrix")

KeySharing = Literal["tofu", "verified"]


@dataclass(frozen=True, slots=True)
class TrustedDevice:
    user_id: str
    device_id: str
    ed25519: str


def parse_device(text: str) -> TrustedDevice:
    """``"@alice:example.org DEVICEID ED25519KEY"`` (a fingerprint's spaces allowed); ValueError otherwise."""
    parts = text.split()
    if len(parts) < 3 or not parts[0].startswith("@"):
        raise ValueError(f"{text!r} is not a device: use '@user:example.org DEVICEID ED25519KEY'")
    return TrustedDevice(user_id=parts[0], device_id=parts[1], ed25519="".join(parts[2:]))


class Crypto:
    """The bot's side of end-to-end encryption; see the module docstring."""

    def __init__(
        self, *, key_sharing: KeySharing = "tofu", verified_devices: Sequence[str] = (), enabled: bool = True
    ) -> None:
        """``enabled=False``: no encryption even where matrix-nio has it (as an install without its e2e extra)."""
        self.key_sharing = key_sharing
        self._enabled = enabled
        self._verified = {(d.user_id, d.device_id): d.ed25519 for d in map(parse_device, verified_devices)}
        #: Held by a key exchange, and by a send that needs one done first: never two at once (two key claims
        #: for one device would make two sessions).
        self._lock = asyncio.Lock()
        self._exchanging: asyncio.Task[None] | None = None
        self._again = False
        self._querying: frozenset[str] = frozenset()
        #: Users whose device list changed with no member event of theirs resent in the sync: a send to a room
        #: of theirs waits until they are queried.
        self._unexplained: set[str] = set()

    @property
    def enabled(self) -> bool:
        return self._enabled and bool(ENCRYPTION_ENABLED)

    def secure(self, client: AsyncClient) -> None:
        """The store file readable by its owner only (its dir is 0700 already)."""
        path = getattr(client.store, "database_path", None)
        if isinstance(path, str) and os.path.exists(path):
            os.chmod(path, 0o600)

    def republish(self, client: AsyncClient) -> None:
        """After a password login that replaced a refused access token: a logout deletes the device's keys with the
        device, so the next key exchange uploads its identity keys again (the same keys: clients that pinned them
        go on trusting the device)."""
        if self.enabled and client.olm is not None:
            client.olm.account.shared = False

    async def after_sync(self, client: AsyncClient, response: SyncResponse | None = None) -> None:
        """Starts the key exchange in the background (again after the running one, when one is running);
        ``response``: the sync's, whose changed device lists it notes (see the module docstring)."""
        if not self.enabled or client.olm is None:
            return
        if response is not None:
            resent = {
                event.source.get("state_key")
                for info in response.rooms.join.values()
                for event in info.state
                if event.source.get("type") == "m.room.member"
            }
            self._unexplained |= set(response.device_list.changed) - resent
        if self._exchanging is not None and not self._exchanging.done():
            self._again = True
            return
        self._exchanging = asyncio.create_task(self._exchanges(client))

    @contextlib.asynccontextmanager
    async def sending(self, client: AsyncClient, room_id: str) -> AsyncIterator[None]:
        """Around a send to ``room_id``: the trust policy applied, and, when the send needs it (see the module
        docstring), the key exchange in flight awaited and the room's members' devices queried first."""
        self.trust(client)
        if not self._needs_keys(client, room_id):
            yield
            return
        async with self._lock:
            assert client.olm is not None
            room = client.rooms.get(room_id)
            if room is not None and client.should_query_keys and set(room.users) & client.olm.users_for_key_query:
                await self._guarded(client, self._query(client))
            self.trust(client)
            yield

    async def aclose(self) -> None:
        """Ends the key exchange in flight (the bot is stopping)."""
        if self._exchanging is not None:
            self._exchanging.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._exchanging

    def _needs_keys(self, client: AsyncClient, room_id: str) -> bool:
        room = client.rooms.get(room_id)
        if not self.enabled or client.olm is None or room is None or not room.encrypted:
            return False
        if client.olm.should_share_group_session(room_id):
            return True
        return bool(set(room.users) & self._unexplained & (self._querying | client.olm.users_for_key_query))

    async def _exchanges(self, client: AsyncClient) -> None:
        """The background task: exchanges until no sync asked for another meanwhile."""
        again = True
        while again:
            self._again = False
            async with self._lock:
                try:
                    await self._guarded(client, self._exchange(client))
                except Exception:  # a task nobody awaits: logged, the next sync starts another
                    log.exception("key exchange failed")
                self.trust(client)
                if client.olm is not None:
                    self._unexplained &= client.olm.users_for_key_query  # the rest are queried, or never will be
            again = self._again

    @staticmethod
    async def _guarded(client: AsyncClient, work: Awaitable[None]) -> None:
        try:
            await work
        except (aiohttp.ClientError, OSError, TimeoutError) as exc:
            log.warning("key exchange failed (%s); retried after the next sync", type(exc).__name__)

    def trust(self, client: AsyncClient) -> None:
        """Applies the key sharing policy to every device the bot knows of (cheap: local state only)."""
        if client.olm is None:
            return
        for device in client.device_store:
            if device.user_id == client.user_id and device.id == client.device_id:
                continue
            if self.key_sharing == "tofu":
                if not client.olm.is_device_verified(device) and not client.olm.is_device_blacklisted(device):
                    log.info("trusting %s's device %s on first use", device.user_id, device.id)
                    client.verify_device(device)
            else:
                self._verified_only(client, device)

    def _verified_only(self, client: AsyncClient, device: OlmDevice) -> None:
        assert client.olm is not None
        wanted = self._verified.get((device.user_id, device.id))
        if wanted is not None and wanted == device.ed25519:
            if client.olm.is_device_blacklisted(device):
                client.unblacklist_device(device)
            if not client.olm.is_device_verified(device):
                client.verify_device(device)
        elif not client.olm.is_device_blacklisted(device):
            log.info("not sharing keys with %s's unverified device %s", device.user_id, device.id)
            if client.olm.is_device_verified(device):
                client.unverify_device(device)
            client.blacklist_device(device)

    async def _exchange(self, client: AsyncClient) -> None:
        if client.should_upload_keys:
            self._check(await client.keys_upload(), KeysUploadResponse, "key upload")
        if client.should_query_keys:
            await self._query(client)
        if client.should_claim_keys:
            claim = await client.keys_claim(client.get_users_for_key_claiming())
            self._check(claim, KeysClaimResponse, "key claim")
        await client.send_to_device_messages()

    async def _query(self, client: AsyncClient) -> None:
        assert client.olm is not None
        self._querying = frozenset(client.olm.users_for_key_query)
        try:
            self._check(await client.keys_query(), KeysQueryResponse, "key query")
        finally:
            self._querying = frozenset()

    @staticmethod
    def _check(response: object, wanted: type, what: str) -> None:
        if not isinstance(response, wanted):
            log.warning("%s failed: %s", what, getattr(response, "status_code", type(response).__name__))

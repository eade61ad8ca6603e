"""A person on the other side of an encrypted room: matrix-nio with its e2e extra, as a real client would be.

It syncs in a task (nio's own loop: keys uploaded, devices queried, sessions claimed), creates encrypted rooms,
sends encrypted messages (sharing its room key with every device in the room) and keeps what it receives,
decrypted, for the test to wait on.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from nio import (
    AsyncClient,
    AsyncClientConfig,
    LoginResponse,
    MegolmEvent,
    RoomCreateResponse,
    RoomMessageNotice,
    RoomMessageText,
    RoomSendResponse,
)

POLL = 0.05
ENCRYPTION = {"type": "m.room.encryption", "state_key": "", "content": {"algorithm": "m.megolm.v1.aes-sha2"}}


class E2EPerson:
    def __init__(self, client: AsyncClient) -> None:
        self.client = client
        self.user_id = client.user_id
        self.received: list[RoomMessageText | RoomMessageNotice | MegolmEvent] = []
        self._task: asyncio.Task[None] | None = None
        self._arrived = asyncio.Condition()

    @classmethod
    async def login(cls, *, base_url: str, user_id: str, password: str, store: Path) -> E2EPerson:
        store.mkdir(parents=True, exist_ok=True)
        config = AsyncClientConfig(encryption_enabled=True, store_sync_tokens=True)
        client = AsyncClient(base_url, user_id, store_path=str(store), config=config)
        response = await client.login(password=password, device_name="test person")
        assert isinstance(response, LoginResponse), response
        person = cls(client)
        client.add_event_callback(person._keep, (RoomMessageText, RoomMessageNotice, MegolmEvent))
        person.resume()
        return person

    def resume(self) -> None:
        """Syncs (again) in a task: keys, devices, sessions and received messages kept up to date."""
        if self._task is None:
            self._task = asyncio.create_task(self.client.sync_forever(timeout=1000, full_state=True))

    async def pause(self) -> None:
        """Stops syncing after the sync in flight (its long-poll lasts 1 s at most), until :meth:`resume`; sends
        still work, with the keys and devices known by then."""
        if self._task is not None:
            self.client.stop_sync_forever()
            await asyncio.wait_for(self._task, timeout=60)
            self._task = None

    async def _stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _keep(self, room: Any, event: RoomMessageText | RoomMessageNotice | MegolmEvent) -> None:
        self.received.append(event)
        async with self._arrived:
            self._arrived.notify_all()

    async def answer(
        self, event_id: str, *, sender: str, deadline: float = 60.0
    ) -> RoomMessageNotice | RoomMessageText:
        """The first reply of ``sender`` to ``event_id``, as soon as this client's sync brings it."""
        async with asyncio.timeout(deadline), self._arrived:
            await self._arrived.wait_for(lambda: bool(self.replies_to(event_id, sender=sender)))
        return self.replies_to(event_id, sender=sender)[0]

    async def create_plain_room(self, *, invite: list[str]) -> str:
        response = await self.client.room_create(invite=invite)
        assert isinstance(response, RoomCreateResponse), response
        return str(response.room_id)

    async def aclose(self) -> None:
        await self._stop()
        await self.client.close()

    async def create_room(self, *, invite: list[str], direct: bool = False) -> str:
        response = await self.client.room_create(invite=invite, initial_state=[ENCRYPTION], is_direct=direct)
        assert isinstance(response, RoomCreateResponse), response
        return str(response.room_id)

    async def send(self, room_id: str, body: str) -> str:
        """Sends ``body`` encrypted (after the room's members are known to this client)."""
        content = {"msgtype": "m.text", "body": body}
        response = await self.client.room_send(room_id, "m.room.message", content, ignore_unverified_devices=True)
        assert isinstance(response, RoomSendResponse), response
        return str(response.event_id)

    def devices_of(self, user_id: str) -> set[str]:
        return {device.id for device in self.client.device_store.active_user_devices(user_id)}

    async def until(self, predicate: Callable[[], object], *, what: str, deadline: float = 60.0) -> Any:
        """Waits (polling this client's state, which its sync task updates) until ``predicate()`` is truthy."""
        end = time.monotonic() + deadline
        while not (found := predicate()):
            if time.monotonic() > end:
                raise AssertionError(f"{what}: not within {deadline}s; received {self.received[-5:]}")
            await asyncio.sleep(POLL)
        return found

    async def knows_device_of(self, user_id: str, room_id: str) -> None:
        """Until this client knows a device of ``user_id`` who has joined ``room_id`` (so its keys go to it)."""
        await self.until(
            lambda: self.joined(user_id, room_id) and self.devices_of(user_id), what=f"{user_id}'s device in {room_id}"
        )

    def joined(self, user_id: str, room_id: str) -> bool:
        room = self.client.rooms.get(room_id)
        return room is not None and user_id in room.users

    def replies_to(self, event_id: str, *, sender: str) -> list[RoomMessageNotice | RoomMessageText]:
        out = []
        for event in self.received:
            if isinstance(event, MegolmEvent) or event.sender != sender:
                continue
            relates = event.source.get("content", {}).get("m.relates_to", {})
            if relates.get("m.in_reply_to", {}).get("event_id") == event_id:
                out.append(event)
        return out

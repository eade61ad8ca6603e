"""Test-side Matrix users: the client-server API spoken directly with httpx (no SDK), and polling reads."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Callable, Sequence
from typing import Any

import httpx

Event = dict[str, Any]
POLL = 0.05  # seconds between two reads of a room while waiting for a predicate


class MatrixUser:
    def __init__(self, *, base_url: str, user_id: str, access_token: str) -> None:
        self.user_id = user_id
        self.access_token = access_token
        self.http = httpx.AsyncClient(
            base_url=f"{base_url}/_matrix/client/v3",
            headers={"Authorization": f"Bearer {access_token}"},
            timeout=30,
        )

    @classmethod
    async def login(cls, *, base_url: str, user_id: str, password: str) -> MatrixUser:
        body = {"type": "m.login.password", "identifier": {"type": "m.id.user", "user": user_id}, "password": password}
        async with httpx.AsyncClient(timeout=30) as http:
            response = await http.post(f"{base_url}/_matrix/client/v3/login", json=body)
        response.raise_for_status()
        return cls(base_url=base_url, user_id=user_id, access_token=response.json()["access_token"])

    async def aclose(self) -> None:
        await self.http.aclose()

    async def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        response = await self.http.request(method, path, **kwargs)
        response.raise_for_status()
        return response.json()

    async def create_room(self, *, invite: Sequence[str] = (), encrypted: bool = False, direct: bool = False) -> str:
        """A private room; ``direct``: a direct chat as clients make one (``is_direct`` on the invites)."""
        body: dict[str, Any] = {"preset": "private_chat", "invite": list(invite), "is_direct": direct}
        if encrypted:
            content = {"algorithm": "m.megolm.v1.aes-sha2"}
            body["initial_state"] = [{"type": "m.room.encryption", "state_key": "", "content": content}]
        return str((await self._call("POST", "/createRoom", json=body))["room_id"])

    async def invite(self, room_id: str, user_id: str) -> None:
        await self._call("POST", f"/rooms/{room_id}/invite", json={"user_id": user_id})

    async def join(self, room_id: str) -> None:
        await self._call("POST", f"/join/{room_id}", json={})

    async def send(self, room_id: str, content: dict[str, Any], *, event_type: str = "m.room.message") -> str:
        """Sends ``content`` as ASCII JSON (so lone surrogates travel as ``\\udXXX`` escapes, as any client may)."""
        txn = uuid.uuid4().hex
        raw = json.dumps(content).encode("ascii")
        headers = {"Content-Type": "application/json"}
        result = await self._call("PUT", f"/rooms/{room_id}/send/{event_type}/{txn}", content=raw, headers=headers)
        return str(result["event_id"])

    async def send_text(self, room_id: str, body: str) -> str:
        return await self.send(room_id, {"msgtype": "m.text", "body": body})

    async def set_power_level(self, room_id: str, user_id: str, level: int) -> None:
        """What a client does to change someone's power level: the state event again, with that user's level."""
        path = f"/rooms/{room_id}/state/m.room.power_levels/"
        current = await self._call("GET", path)
        current.setdefault("users", {})[user_id] = level
        await self._call("PUT", path, json=current)

    async def membership(self, room_id: str, user_id: str) -> str | None:
        response = await self.http.get(f"/rooms/{room_id}/state/m.room.member/{user_id}")
        return response.json().get("membership") if response.status_code == 200 else None

    async def messages(self, room_id: str) -> list[Event]:
        """Every event of the room, oldest first."""
        found: list[Event] = []
        params: dict[str, Any] = {"dir": "b", "limit": 1000}
        while True:
            page = await self._call("GET", f"/rooms/{room_id}/messages", params=params)
            found.extend(page["chunk"])
            if not page["chunk"] or "end" not in page:
                return found[::-1]
            params["from"] = page["end"]

    async def wait_for(
        self, room_id: str, predicate: Callable[[list[Event]], bool], *, deadline: float = 60.0
    ) -> list[Event]:
        """Reads the room until ``predicate(events)`` holds; fails when ``deadline`` seconds pass first."""
        end = time.monotonic() + deadline
        while True:
            events = await self.messages(room_id)
            if predicate(events):
                return events
            if time.monotonic() > end:
                raise AssertionError(f"no match in {room_id} within {deadline}s; last events: {events[-5:]}")
            await asyncio.sleep(POLL)

    async def wait_membership(self, room_id: str, user_id: str, want: str, *, deadline: float = 60.0) -> None:
        end = time.monotonic() + deadline
        while (await self.membership(room_id, user_id)) != want:
            if time.monotonic() > end:
                raise AssertionError(f"{user_id} never reached {want} in {room_id}")
            await asyncio.sleep(POLL)


def replies_to(events: list[Event], event_id: str, *, sender: str) -> list[Event]:
    """The events from ``sender`` that answer ``event_id`` (m.in_reply_to)."""
    out = []
    for event in events:
        relates = event.get("content", {}).get("m.relates_to", {})
        if event.get("sender") == sender and relates.get("m.in_reply_to", {}).get("event_id") == event_id:
            out.append(event)
    return out


def from_sender(events: list[Event], sender: str) -> list[Event]:
    return [e for e in events if e.get("sender") == sender and e.get("type") == "m.room.message"]

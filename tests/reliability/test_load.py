"""The service under load over loopback: 50 concurrent clients, 2,000 creates, then kill -9.

Extends tests/server/test_socket.py (200 concurrent creates on one raw httpx
client; kill -9 after 150 of 600) to the issue's scale, through the real
client (PetStoreClient: one connection pool each, Idempotency-Key on every create).
"""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import pytest
from server.support import running_server

from petstore_api import PetStoreClient, RetryPolicy, Timeouts
from petstore_api.errors import PetStoreError

from .support import CANARY, all_pets

pytestmark = pytest.mark.slow

CLIENTS, PER_CLIENT = 50, 40  # 2,000 pets


async def test_fifty_clients_create_two_thousand_pets_none_lost_none_duplicated(tmp_path: Path) -> None:
    with running_server(tmp_path / "load.db", keys=[CANARY]) as (_, url, _):

        async def one_client(c: int) -> list[dict]:
            async with PetStoreClient(base_url=url, api_key=CANARY) as client:
                return [
                    (await client.create_pet(name=f"load-{c}-{i}", category_id=c, status="available")).pet.to_wire()
                    for i in range(PER_CLIENT)
                ]

        created = [pet for batch in await asyncio.gather(*map(one_client, range(CLIENTS))) for pet in batch]
        stored = await all_pets(url)
    assert len(created) == CLIENTS * PER_CLIENT  # every create was acknowledged (201)
    ids = [pet["id"] for pet in stored]
    assert len(stored) == len(set(ids)) == len(created)  # none lost, none duplicated
    assert sorted(stored, key=lambda p: p["id"]) == sorted(created, key=lambda p: p["id"])


async def test_kill_9_mid_load_loses_no_acknowledged_pet(tmp_path: Path) -> None:
    db = tmp_path / "kill.db"
    acknowledged: list[dict] = []
    with running_server(db, keys=[CANARY]) as (proc, url, _):
        killed = asyncio.Event()

        async def one_client(c: int) -> None:
            client = PetStoreClient(
                base_url=url,
                api_key=CANARY,
                retry=RetryPolicy.never(),
                timeouts=Timeouts(connect=2.0, read=5.0, total=5.0),
            )
            async with client:
                for i in range(PER_CLIENT):
                    if killed.is_set():
                        return
                    try:
                        pet = (await client.create_pet(name=f"kill-{c}-{i}", category_id=c)).pet
                    except PetStoreError:
                        return  # the service is gone
                    acknowledged.append(pet.to_wire())
                    if len(acknowledged) == 500:
                        proc.send_signal(signal.SIGKILL)
                        killed.set()

        await asyncio.gather(*map(one_client, range(CLIENTS)))
        assert proc.wait(timeout=20) == -signal.SIGKILL
    assert 500 <= len(acknowledged) < CLIENTS * PER_CLIENT
    with running_server(db, keys=[CANARY]) as (_, url, _):
        stored = {pet["id"]: pet for pet in await all_pets(url)}
    assert len(stored) >= len(acknowledged)  # committed but unacknowledged ones may be there too
    missing = [pet for pet in acknowledged if stored.get(pet["id"]) != pet]
    assert not missing, f"{len(missing)} acknowledged pets lost after kill -9, e.g. {missing[:3]}"

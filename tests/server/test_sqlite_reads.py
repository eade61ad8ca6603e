"""Reads of the SQLite store run at once on the event loop when the store's thread is not using the connection, and
are handed to that thread when it is: the loop never waits for the connection."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from petstore_server.sqlite_store import SqliteStore
from petstore_server.store import PetStore


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqliteStore]:
    pets = PetStore(tmp_path / "p.db")
    pets.create_record(name="Rex", category_id=1)
    served = SqliteStore(pets)  # not watching its path: no check of the file is ever due
    yield served
    await served.close()


def names(body: bytes) -> list[str]:
    return [pet["name"] for pet in json.loads(body)]


async def test_a_read_is_answered_on_the_loop_while_the_thread_is_busy_with_other_work(store: SqliteStore) -> None:
    busy, release = threading.Event(), threading.Event()

    def occupy() -> None:  # the thread's own work, not holding the connection
        busy.set()
        release.wait()

    occupied = store._thread.run(occupy)
    try:
        await asyncio.get_running_loop().run_in_executor(None, busy.wait)
        page = await asyncio.wait_for(store.list_page(limit=5, status=None, after_id=None), timeout=30)
        pet = await asyncio.wait_for(store.get_pet(pet_id=1), timeout=30)
        assert not occupied.done(), "a read waited for the thread"
    finally:
        release.set()
        await occupied
    assert names(page.body) == ["Rex"] and pet is not None and pet.name == "Rex"


async def test_a_read_while_the_connection_is_in_use_is_handed_to_the_thread(store: SqliteStore) -> None:
    held, release = threading.Event(), threading.Event()

    def hold() -> None:  # another thread using the connection (as the store's thread does for a write)
        with store.pets.lock:
            held.set()
            release.wait()

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        await asyncio.get_running_loop().run_in_executor(None, held.wait)
        read = asyncio.ensure_future(store.list_page(limit=5, status=None, after_id=None))
        ticks = asyncio.ensure_future(asyncio.sleep(0))  # the loop runs on: nothing on it waits for the lock
        await ticks
        assert not read.done()
    finally:
        release.set()
        await asyncio.get_running_loop().run_in_executor(None, holder.join)
    page = await asyncio.wait_for(read, timeout=30)
    assert names(page.body) == ["Rex"]

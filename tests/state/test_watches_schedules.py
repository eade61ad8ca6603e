"""Watches and schedules in the state database, on SQLite and on a real PostgreSQL database per test."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from petstore_state import Database, open_database
from petstore_state.bounds import LimitReached, Limits
from petstore_state.schedules import ScheduleStore
from petstore_state.watches import Cursor, NewPet, WatchStore

SERVICE = "http://127.0.0.1:8080/v1"


def _pets(*ids: int) -> list[NewPet]:
    return [NewPet(id=i, record={"id": i, "name": f"<b>pet {i}</b>", "categoryId": 1}) for i in ids]


async def test_one_cursor_per_filter_and_one_announcement_per_room_and_pet(database: Database) -> None:
    store = WatchStore(database, service=SERVICE)
    assert await store.add(status="", room="!a", by="@alice:x")
    assert not await store.add(status="", room="!a", by="@alice:x")
    assert await store.add(status="", room="!b", by="@bob:x")
    assert await store.add(status="available", room="!a", by="@alice:x")
    assert await store.filters() == ["", "available"]
    seen = await store.start(status="", cursor=Cursor(last_id=10, resume_url=None))
    assert await store.start(status="", cursor=Cursor(last_id=99, resume_url="x")) == seen  # the first one stays

    assert await store.record(status="", seen=seen, found=_pets(9, 10, 11, 12), resume_url="page-2") == 4
    after = await store.cursor(status="")
    assert after == Cursor(last_id=12, resume_url="page-2")
    # a second poller that read the old cursor queues nothing: each pet is announced once
    assert await store.record(status="", seen=seen, found=_pets(11, 12), resume_url=None) == 0

    # the same pet through a second filter of room !a: still one announcement there
    other = await store.start(status="available", cursor=Cursor(last_id=10, resume_url=None))
    assert await store.record(status="available", seen=other, found=_pets(11), resume_url=None) == 0

    unsent = await store.unsent()
    assert sorted((a.room, a.pet_id) for a in unsent) == [("!a", 11), ("!a", 12), ("!b", 11), ("!b", 12)]
    assert unsent[0].pet["name"] == "<b>pet 11</b>"
    for announcement in unsent[:3]:
        await store.sent(announcement)
    assert [(a.room, a.pet_id) for a in await store.unsent()] == [(unsent[3].room, unsent[3].pet_id)]
    assert len({a.key for a in unsent}) == 4


async def test_a_room_stops_watching_and_other_services_are_apart(database: Database) -> None:
    store, elsewhere = WatchStore(database, service=SERVICE), WatchStore(database, service="http://other/v1")
    await store.add(status="sold", room="!a", by="@alice:x")
    assert await elsewhere.filters() == []
    assert await store.of_room(room="!a") == ["sold"]
    assert await store.remove(status="sold", room="!a")
    assert not await store.remove(status="sold", room="!a")
    assert await store.filters() == []


async def test_a_run_is_claimed_once(database: Database) -> None:
    store = ScheduleStore(database, service=SERVICE)
    first = await store.add(room="!a", creator="@alice:x", rhythm="every 10m", command="/list", next_run=100.0)
    second = await store.add(room="!b", creator="@bob:x", rhythm="every day at 09:00", command="/orders", next_run=50.0)
    assert (first.id, second.id) == (1, 2)
    assert [s.id for s in await store.due(99.0)] == [2]
    assert [s.id for s in await store.due(100.0)] == [2, 1]
    assert await store.next_due() == 50.0
    assert await store.claim(first, next_run=700.0)
    assert not await store.claim(first, next_run=700.0)  # another process read the same run: it does not run it
    assert [s.id for s in await store.of_room("!a")] == [1]
    assert (await store.get(1)) is not None and (await store.get(1)).next_run == 700.0  # type: ignore[union-attr]
    assert await store.remove(1) and not await store.remove(1)
    assert await store.get(1) is None


@pytest.mark.parametrize("count", [3])
async def test_schedules_are_numbered_after_the_highest(database: Database, count: int) -> None:
    store = ScheduleStore(database, service=SERVICE)
    made = [
        await store.add(room="!a", creator="@a:x", rhythm="every 1m", command="/list", next_run=1.0)
        for _ in range(count)
    ]
    assert [m.id for m in made] == [1, 2, 3]


async def test_two_processes_adding_at_once_do_not_slip_past_the_limits(state_url: str, tmp_path: Path) -> None:
    """Two stores on two connections (as two bot replicas have) add schedules and watches side by side: the count
    and the insert are one transaction, so the room gets its limit exactly, and every schedule its own number."""
    limits = Limits(per_room=5, total=8)
    first, second = (open_database(state_url, state_dir=tmp_path) for _ in range(2))
    try:
        stores = [ScheduleStore(db, service=SERVICE, limits=limits) for db in (first, second)]

        async def add(store: ScheduleStore, room: str) -> int | None:
            try:
                made = await store.add(room=room, creator="@v:x", rhythm="every 1m", command="/list", next_run=1.0)
            except LimitReached as exc:
                return -exc.limit
            return made.id

        made = await asyncio.gather(*(add(stores[n % 2], "!a") for n in range(12)))
        assert sorted(made)[:7] == [-5] * 7 and sorted(made)[7:] == [1, 2, 3, 4, 5], made
        more = await asyncio.gather(*(add(stores[n % 2], "!b") for n in range(6)))
        assert sorted(m for m in more if m is not None and m > 0) == [6, 7, 8], "the bot's limit: 8 in all"
        assert [m for m in more if m is not None and m < 0] == [-8] * 3

        watches = [WatchStore(db, service=SERVICE, limits=Limits(per_room=2, total=8)) for db in (first, second)]
        statuses = ["", "available", "pending", "sold"] * 2

        async def watch(n: int) -> str:
            try:
                return "added" if await watches[n % 2].add(status=statuses[n], room="!w", by="@v:x") else "already"
            except LimitReached as exc:
                return exc.scope

        told = await asyncio.gather(*(watch(n) for n in range(8)))
        assert told.count("added") == 2 and len(await watches[0].of_room(room="!w")) == 2, told
    finally:
        first.close()
        second.close()


async def test_a_refused_add_says_which_limit(database: Database) -> None:
    store = ScheduleStore(database, service=SERVICE, limits=Limits(per_room=1, total=1))
    await store.add(room="!a", creator="@v:x", rhythm="every 1m", command="/list", next_run=1.0)
    with pytest.raises(LimitReached) as room:
        await store.add(room="!a", creator="@v:x", rhythm="every 1m", command="/list", next_run=1.0)
    with pytest.raises(LimitReached) as bot:
        await store.add(room="!b", creator="@v:x", rhythm="every 1m", command="/list", next_run=1.0)
    assert (room.value.scope, room.value.limit, bot.value.scope) == ("room", 1, "bot")
    assert [s.room for s in await store.of_room("!a")] == ["!a"] and await store.of_room("!b") == []

"""petstore_state.pending on SQLite and on a real PostgreSQL database of each test's own: codes taken once, by whom
they may be, expiry closed once, and two processes racing for one code."""

from __future__ import annotations

import asyncio
from pathlib import Path

from petstore_state import Database, open_database
from petstore_state.pending import PendingStore, PendingWrite


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


async def _ask(store: PendingStore, *, kind: str = "confirm", asker: str = "@ann:x", ttl: float = 60) -> PendingWrite:
    return await store.create(
        kind="approve" if kind == "approve" else "confirm",
        asker=asker,
        role="operator",
        where="matrix:!room:x",
        line="/add Rex --category 3",
        what="add pet 'Rex' (category 3)",
        fields=(("name", "Rex"), ("categoryId", "3")),
        env="production",
        ttl=ttl,
        event_id="$ev1",
    )


def test_a_confirmation_is_taken_once_by_its_asker(database: Database) -> None:
    store = PendingStore(database, clock=Clock())

    async def scenario() -> None:
        asked = await _ask(store)
        assert len(asked.code) == 4 and asked.state == "waiting"
        assert asked.fields == (("name", "Rex"), ("categoryId", "3")) and asked.event_id == "$ev1"
        assert (await store.take(asked.code, kind="confirm", by="@bob:x")).refusal == "not_yours"
        assert (await store.take(asked.code, kind="confirm", by="@ann:x", where="matrix:!other:x")).refusal == (
            "not_yours"
        )
        taken = await store.take(asked.code.lower(), kind="confirm", by="@ann:x", where="matrix:!room:x")
        assert taken.taken and taken.write is not None and taken.write.state == "approved"
        again = await store.take(asked.code, kind="confirm", by="@ann:x")
        assert again.refusal == "decided"
        done = await store.finish(asked.code, ok=True, result="Added pet 7")
        assert done is not None and done.state == "done" and done.result == "Added pet 7"
        assert await store.finish(asked.code, ok=False, result="twice") is None
        assert (await store.take("ZZZZ", kind="confirm", by="@ann:x")).refusal == "unknown"

    asyncio.run(scenario())


def test_an_approval_needs_someone_else(database: Database) -> None:
    store = PendingStore(database, clock=Clock())

    async def scenario() -> None:
        asked = await _ask(store, kind="approve")
        assert len(asked.code) == 6
        assert (await store.take(asked.code, kind="approve", by="@ann:x")).refusal == "own"
        assert (await store.deny(asked.code, by="@ann:x")).refusal == "own"
        assert (await store.take(asked.code, kind="confirm", by="@ann:x")).refusal == "kind"
        denied = await store.deny(asked.code, by="@bob:x", reason="not today")
        assert denied.taken and denied.write is not None
        assert (denied.write.state, denied.write.decided_by, denied.write.reason) == ("denied", "@bob:x", "not today")
        assert (await store.take(asked.code, kind="approve", by="@cy:x")).refusal == "decided"

        other = await _ask(store, kind="approve")
        approved = await store.take(other.code, kind="approve", by="@bob:x")
        assert approved.taken and approved.write is not None and approved.write.decided_by == "@bob:x"

        mine = await _ask(store, kind="approve")
        assert (await store.cancel(mine.code, by="@bob:x")).refusal == "not_yours"
        assert (await store.cancel(mine.code, by="@ann:x")).taken

    asyncio.run(scenario())


def test_expiry_is_closed_once(database: Database) -> None:
    clock = Clock()
    store = PendingStore(database, clock=clock)

    async def scenario() -> None:
        first = await _ask(store, ttl=10)
        second = await _ask(store, ttl=100)
        assert await store.expire_due() == []
        clock.now += 11
        assert (await store.take(first.code, kind="confirm", by="@ann:x")).refusal == "expired"
        closed = await store.expire_due()
        assert [w.code for w in closed] == [first.code] and closed[0].state == "expired"
        assert await store.expire_due() == []
        assert (await store.take(first.code, kind="confirm", by="@ann:x")).refusal == "decided"
        assert (await store.take(second.code, kind="confirm", by="@ann:x")).taken

    asyncio.run(scenario())


def test_posting_is_claimed_once_and_old_rows_purged(database: Database) -> None:
    clock = Clock()
    store = PendingStore(database, clock=clock)

    async def scenario() -> None:
        asked = await _ask(store, kind="approve")
        await _ask(store)
        assert [w.code for w in await store.unposted()] == [asked.code]
        assert await store.mark_posted(asked.code)
        assert not await store.mark_posted(asked.code)
        assert await store.unposted() == []
        assert [w.kind for w in await store.recent(kind="approve")] == ["approve"]
        assert len(await store.recent(states=("waiting",))) == 2
        await store.cancel(asked.code, by="@ann:x")
        clock.now += 100
        assert await store.purge(older_than=50) == 1
        assert await store.get(asked.code) is None

    asyncio.run(scenario())


def test_two_processes_take_a_code_once(state_url: str, tmp_path: Path) -> None:
    """Two connections (as two bot processes have) race to take the same codes: each is taken exactly once."""
    first, second = open_database(state_url, state_dir=tmp_path), open_database(state_url, state_dir=tmp_path)
    try:
        one, two = PendingStore(first), PendingStore(second)

        async def scenario() -> None:
            codes = [(await _ask(one, kind="approve")).code for _ in range(20)]
            results = await asyncio.gather(
                *(
                    store.take(code, kind="approve", by=by)
                    for code in codes
                    for store, by in ((one, "@b:x"), (two, "@c:x"))
                )
            )
            taken = [r.write.code for r in results if r.taken and r.write is not None]
            assert sorted(taken) == sorted(codes)
            assert all(r.refusal == "decided" for r in results if not r.taken)

        asyncio.run(scenario())
    finally:
        first.close()
        second.close()

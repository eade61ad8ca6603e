"""petstore_state.pending on SQLite and on a real PostgreSQL database of each test's own: a code moved once and only
when the caller's check (run inside the transaction) allows, binding and sealing once, expiry closed once, rows of
an older table upgraded, and two processes racing for one code. Who may decide what is not the store's: see
tests/commands/test_holds.py."""

from __future__ import annotations

import asyncio
from pathlib import Path

from petstore_state import Database, open_database
from petstore_state.db import Transaction
from petstore_state.pending import PendingStore, PendingWrite


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


async def _ask(
    store: PendingStore, *, kind: str = "confirm", asker: str = "@ann:x", ttl: float = 60, room: str = "matrix:!room:x"
) -> PendingWrite:
    return await store.create(
        kind="approve" if kind == "approve" else "confirm",
        asker=asker,
        role="operator",
        where="matrix:!room:x" if room else "terminal",
        line="/add Rex --category 3",
        what="add pet 'Rex' (category 3)",
        fields=(("name", "Rex"), ("categoryId", "3")),
        env="production",
        ttl=ttl,
        event_id="$ev1",
        command="add",
        room=room,
        seal=(lambda row: f"sealed {row.code} {row.room}") if room else None,
    )


def _allow(write: PendingWrite) -> str | None:
    return None


def test_a_code_moves_once_and_only_when_the_check_allows(database: Database) -> None:
    store = PendingStore(database, clock=Clock())

    async def scenario() -> None:
        asked = await _ask(store)
        assert len(asked.code) == 4 and asked.state == "waiting" and asked.command == "add"
        assert asked.fields == (("name", "Rex"), ("categoryId", "3")) and asked.event_id == "$ev1"
        assert asked.seal == f"sealed {asked.code} matrix:!room:x"
        seen: list[PendingWrite] = []

        def refuse(write: PendingWrite) -> str:
            seen.append(write)
            return "not_yours"

        refused = await store.transition(asked.code, check=refuse, to="approved", by="@bob:x")
        assert refused.refusal == "not_yours" and not refused.taken and seen == [asked]
        assert (await store.get(asked.code)) == asked  # a refusal leaves the row as it was
        taken = await store.transition(asked.code.lower(), check=_allow, to="approved", by="@ann:x")
        assert taken.taken and taken.write is not None and taken.write.state == "approved"
        again = await store.transition(asked.code, check=_allow, to="approved", by="@ann:x")
        assert again.refusal == "decided"
        assert [w.code for w in await store.taken()] == [asked.code]
        done = await store.finish(asked.code, ok=True, result="Added pet 7")
        assert done is not None and done.state == "done" and done.result == "Added pet 7"
        assert await store.finish(asked.code, ok=False, result="twice") is None
        assert await store.taken() == []
        assert (await store.transition("ZZZZ", check=_allow, to="approved", by="@ann:x")).refusal == "unknown"
        denied = await store.transition(
            (await _ask(store, kind="approve")).code, check=_allow, to="denied", by="@bob:x", reason="not today"
        )
        assert denied.write is not None
        assert (denied.write.state, denied.write.decided_by, denied.write.reason) == ("denied", "@bob:x", "not today")

    asyncio.run(scenario())


def test_a_terminal_request_is_bound_and_sealed_once(database: Database) -> None:
    store = PendingStore(database, clock=Clock())

    async def scenario() -> None:
        asked = await _ask(store, kind="approve", room="")
        assert (asked.room, asked.seal) == ("", "")
        bound = await store.bind(asked.code, room="matrix:!ops:x", seal=lambda row: f"seal of {row.room}")
        assert bound is not None and (bound.room, bound.seal) == ("matrix:!ops:x", "seal of matrix:!ops:x")
        assert await store.bind(asked.code, room="matrix:!other:x", seal=lambda row: "again") is None
        assert (await store.get(asked.code)) == bound

    asyncio.run(scenario())


def test_expiry_is_closed_once(database: Database) -> None:
    clock = Clock()
    store = PendingStore(database, clock=clock)

    async def scenario() -> None:
        first = await _ask(store, ttl=10)
        second = await _ask(store, ttl=100)
        assert await store.expire_due() == []
        clock.now += 11
        late = await store.transition(first.code, check=_allow, to="approved", by="@ann:x")
        assert late.refusal == "decided" and late.write is not None and late.write.state == "waiting"
        closed = await store.expire_due()
        assert [w.code for w in closed] == [first.code] and closed[0].state == "expired"
        assert await store.expire_due() == []
        assert (await store.transition(second.code, check=_allow, to="approved", by="@ann:x")).taken

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
        await store.transition(asked.code, check=_allow, to="cancelled", by="@ann:x")
        clock.now += 100
        assert await store.purge(older_than=50) == 1
        assert await store.get(asked.code) is None

    asyncio.run(scenario())


def test_a_table_of_an_older_release_gets_the_new_columns(database: Database) -> None:
    def old(tx: Transaction) -> None:
        run = tx.execute
        run("DROP TABLE IF EXISTS pending_writes")
        run(
            "CREATE TABLE pending_writes (code TEXT PRIMARY KEY, kind TEXT NOT NULL, asker TEXT NOT NULL, "
            "role TEXT NOT NULL, location TEXT NOT NULL, line TEXT NOT NULL, what TEXT NOT NULL, fields TEXT NOT NULL, "
            "env TEXT NOT NULL, created DOUBLE PRECISION NOT NULL, expires DOUBLE PRECISION NOT NULL, "
            "state TEXT NOT NULL, decided_by TEXT NOT NULL DEFAULT '', decided DOUBLE PRECISION, "
            "reason TEXT NOT NULL DEFAULT '', event_id TEXT NOT NULL DEFAULT '', result TEXT NOT NULL DEFAULT '', "
            "posted BIGINT NOT NULL DEFAULT 0)"
        )
        run(
            "INSERT INTO pending_writes (code, kind, asker, role, location, line, what, fields, env, created, "
            "expires, state) VALUES ('OLD234', 'approve', '@ann:x', 'operator', 'matrix:!r:x', '/add Old', "
            "'add pet', '[]', 'production', 1, 2, 'waiting')"
        )

    database.run_sync(old)
    store = PendingStore(database, clock=Clock())

    async def scenario() -> None:
        found = await store.get("OLD234")
        assert found is not None and (found.command, found.room, found.seal) == ("", "", "")
        assert (await _ask(store)).command == "add"

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
                    store.transition(code, check=_allow, to="approved", by=by)
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

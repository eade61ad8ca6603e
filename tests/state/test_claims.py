"""Claims of chat messages shared by replicas, on both backends: one claim per message, a dead holder's claim taken
over, an answered message never claimed again; and Replicas.turn on top of them and the lease."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from petstore_bot.replicas import Replicas
from petstore_state import Database
from petstore_state.claims import Claims
from petstore_state.lease import Lease, open_lease
from petstore_state.pending import PendingStore
from petstore_state.schedules import ScheduleStore
from petstore_state.watches import Cursor, NewPet, WatchStore


async def test_a_message_is_claimed_once_and_never_after_it_is_answered(database: Database) -> None:
    claims = Claims(database, scope="matrix @bot:example.org")
    assert await claims.claim("$a", holder="one")
    assert await claims.claim("$a", holder="one"), "the holder's own claim stands"
    assert await claims.claim("$a", holder="two"), "a former holder's claim (never answered) is taken over"
    assert not await claims.is_answered("$a")
    await claims.answered(["$a"], holder="two")
    assert await claims.is_answered("$a")
    assert not await claims.claim("$a", holder="three")
    other = Claims(database, scope="matrix @other:example.org")
    assert await other.claim("$a", holder="three"), "another account's messages are its own"


async def test_old_claims_are_pruned(database: Database) -> None:
    claims = Claims(database, scope="s")
    await claims.answered(["$old"], holder="one")
    assert await claims.prune(older_than=-1) == 1
    assert not await claims.is_answered("$old")


class _Looked(Claims):
    """Claims that say when a standby has looked at the store twice (it is waiting, not done)."""

    def __init__(self, database: Database) -> None:
        super().__init__(database, scope="s")
        self.looks = 0
        self.twice = asyncio.Event()

    async def is_answered(self, event_id: str) -> bool:
        self.looks += 1
        if self.looks >= 2:
            self.twice.set()
        return await super().is_answered(event_id)


@pytest.fixture
def leases(state_url: str, tmp_path: Path) -> Iterator[list[Lease]]:
    """Two processes' leases of one name (not taken yet)."""
    made = [open_lease(state_url, state_dir=tmp_path, name="bot", ttl=3.0, check=1.0) for _ in range(2)]
    yield made
    for lease in made:
        lease.close()


async def test_a_standby_waits_until_the_holder_answered_and_the_holder_answers(
    database: Database, leases: list[Lease]
) -> None:
    looked = _Looked(database)
    holder = Replicas(lease=leases[0], claims=Claims(database, scope="s"), poll=0.05)
    standby = Replicas(lease=leases[1], claims=looked, poll=0.05)
    stop = asyncio.Event()
    assert await holder.lease.acquire()
    assert await holder.turn("$q", stop=stop) is True
    waiting = asyncio.create_task(standby.turn("$q", stop=stop))
    await asyncio.wait_for(looked.twice.wait(), timeout=10)
    assert not waiting.done(), "the standby answered a message the holder had claimed"
    await holder.answered("$q")
    assert await asyncio.wait_for(waiting, timeout=10) is False
    standby.replied("$seen")  # the bot's reply seen in the timeline counts as answered
    assert await standby.turn("$seen", stop=stop) is False
    stop.set()
    assert await standby.turn("$never", stop=stop) is None


async def test_a_standby_answers_what_the_holder_left_once_it_takes_the_lease(
    database: Database, leases: list[Lease]
) -> None:
    holder, standby = (Replicas(lease=lease, claims=Claims(database, scope="s"), poll=0.05) for lease in leases)
    stop = asyncio.Event()
    assert await holder.lease.acquire()
    assert await holder.turn("$left", stop=stop) is True  # claimed, then the holder is gone
    waiting = asyncio.create_task(standby.turn("$left", stop=stop))
    await holder.lease.release()
    assert await standby.lease.acquire()
    assert await asyncio.wait_for(waiting, timeout=10) is True


async def test_a_holder_that_lost_the_lease_unknowingly_cannot_claim(database: Database, leases: list[Lease]) -> None:
    """The claim checks the lease in the database itself (its Fence): a holder whose lease expired in the database
    claims nothing, even before its own check noticed."""
    old, new = leases
    claims = Claims(database, scope="s")
    assert await old.acquire()
    assert await claims.claim("$before", holder=old.holder, fence=old.fence()) is True
    await database.run(lambda tx: tx.execute("UPDATE lease_holders SET expires_at = 0"))
    assert old.held, "its own check has not run yet"
    assert await claims.claim("$after", holder=old.holder, fence=old.fence()) is None
    assert await new.acquire()
    assert await claims.claim("$after", holder=new.holder, fence=new.fence()) is True
    assert await claims.claim("$before", holder=new.holder, fence=new.fence()) is True, "taken over"


async def test_without_the_lease_the_fence_never_holds(database: Database, leases: list[Lease]) -> None:
    assert await Claims(database, scope="s").claim("$q", holder=leases[0].holder, fence=leases[0].fence()) is None


async def test_every_side_effect_is_claimed_under_the_lease_epoch(database: Database, leases: list[Lease]) -> None:
    """An announcement, a schedule's run, a request's posting and the finishing of a write left taken are claimed
    in a transaction that checks the lease: the fence of a holder replaced since (an older epoch) claims none of them, the new holder's does."""
    old, new = leases
    watches, schedules, pending = _background_work(database)
    await watches.add(status="", room="!r", by="@a")
    seen = await watches.start(status="", cursor=Cursor(last_id=0, resume_url=None))
    await watches.record(status="", seen=seen, found=[NewPet(id=1, record={"id": 1})], resume_url=None)
    [announcement] = await watches.unsent()
    schedule = await schedules.add(room="!r", creator="@a", rhythm="every 1m", command="/list", next_run=10.0)
    asked = await pending.create(
        kind="approve",
        asker="local:alice",
        role="operator",
        where="terminal",
        line="add Rex",
        what="add pet Rex",
        env="prod",
        ttl=600,
    )
    left = await pending.create(
        kind="approve",
        asker="@alice",
        role="operator",
        where="matrix:!r",
        line="add Left",
        what="add pet Left",
        env="prod",
        ttl=600,
    )
    await database.run(
        lambda tx: tx.execute(
            "UPDATE pending_writes SET state = 'approved', decided = 1.0 WHERE code = ?", (left.code,)
        )
    )
    [taken] = [write for write in await pending.taken() if write.code == left.code]  # left approved by a crash
    assert await old.acquire()
    stale = old.fence()
    await database.run(lambda tx: tx.execute("UPDATE lease_holders SET expires_at = 0"))
    assert await new.acquire()
    assert not await watches.claim(announcement, fence=stale)
    assert not await schedules.claim(schedule, next_run=70.0, fence=stale)
    assert not await pending.mark_posted(asked.code, fence=stale)
    assert not await pending.claim_taken(taken, fence=stale)
    assert await watches.claim(announcement, fence=new.fence())
    assert await schedules.claim(schedule, next_run=70.0, fence=new.fence())
    assert await pending.mark_posted(asked.code, fence=new.fence())
    assert await pending.claim_taken(taken, fence=new.fence())
    assert not await pending.claim_taken(taken, fence=new.fence()), "claimed once: its decided time has moved"


def _background_work(database: Database) -> tuple[WatchStore, ScheduleStore, PendingStore]:
    return (
        WatchStore(database, service="http://petstore.test"),
        ScheduleStore(database, service="http://petstore.test"),
        PendingStore(database),
    )


async def test_an_answer_goes_out_only_while_its_claim_and_the_lease_stand(
    database: Database, leases: list[Lease]
) -> None:
    """Replicas.may_answer, asked just before a reply is sent: False once another holder took the lease (and the
    message) over, or once the message is answered."""
    old, new = (Replicas(lease=lease, claims=Claims(database, scope="s"), poll=0.05) for lease in leases)
    stop = asyncio.Event()
    assert await old.lease.acquire()
    assert await old.turn("$q", stop=stop) is True
    assert await old.may_answer("$q")
    await database.run(lambda tx: tx.execute("UPDATE lease_holders SET expires_at = 0"))
    assert not await old.may_answer("$q"), "the lease expired in the database"
    assert await new.lease.acquire()
    assert await new.turn("$q", stop=stop) is True, "the new holder takes the message over"
    assert not await old.may_answer("$q")
    assert await new.may_answer("$q")
    await new.answered("$q")
    assert not await new.may_answer("$q"), "answered already"

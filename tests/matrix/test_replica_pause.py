"""Two real ``petstore bot matrix`` replicas on one account (a real Synapse, a real ``petstore serve``), sharing a
``[bot] state`` on SQLite (one file) or PostgreSQL (a database of the test's own): the holder is frozen with SIGSTOP
for longer than its lease while a command of its runs (claimed, running), a pet is added meanwhile; the other answers within 15 s and
announces the pet, and after SIGCONT the frozen one posts nothing: every message answered once, the pet told once.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from pg_support import database_url, start_pg_server
from server.support import running_server

from matrix.bot_process import LEASE_TTL, BotConfig, BotProcess, answered_once, room_with
from matrix.conftest import Account, register
from matrix.cs_client import Event, MatrixUser, from_sender, replies_to
from matrix.synapse_server import SynapseServer
from matrix.test_watch_e2e import KEY, _add
from petstore_state import Database, open_database

pytestmark = pytest.mark.slow

#: The deadline of the other replica's answer after the holder froze (waited for, not timed).
TAKEOVER = 15.0


@pytest.fixture(params=["sqlite", "postgresql"])
def state_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'shared.sqlite3'}"
        return
    with start_pg_server() as server, database_url(server) as url:
        yield url


@pytest.fixture
def service(tmp_path: Path) -> Iterator[str]:
    with running_server(tmp_path / "pets.db", keys=[KEY]) as (_, url, _):
        yield url


def _replica(server: SynapseServer, account: Account, root: Path, *, state: str, url: str, alice: str) -> BotProcess:
    config = BotConfig(
        homeserver=server.url,
        user_id=account.user_id,
        root=root,
        operators=[alice],
        extra={"bot": {"state": state, "watch_interval": 1, "lease_ttl": LEASE_TTL}},
    )
    env = {"PETSTORE_BASE_URL": url, "PETSTORE_API_KEY": KEY}
    return BotProcess(config, password=account.password, args=["-v"], env=env)


def _announced(events: list[Event], bot_id: str, pet_id: int) -> list[Event]:
    return [e for e in from_sender(events, bot_id) if e["content"]["body"].startswith(f"New pet {pet_id}:")]


async def _claim_of(state: Database, event_id: str) -> str | None:
    """The state of ``event_id``'s claim in the replicas' store (``claimed``, ``answered``), None when unclaimed."""
    row = await state.run(lambda tx: tx.one("SELECT state FROM lease_claims WHERE event_id = ?", (event_id,)))
    return None if row is None else str(row[0])


async def _claimed(state: Database, event_id: str, *, deadline: float = 60.0) -> None:
    end = time.monotonic() + deadline
    while await _claim_of(state, event_id) is None:
        assert time.monotonic() < end, f"{event_id} not claimed within {deadline:g} s"
        await asyncio.sleep(0.02)


async def test_a_holder_frozen_past_its_lease_is_replaced_and_answers_nothing_twice(
    homeserver: SynapseServer, tmp_path: Path, state_url: str, service: str
) -> None:
    account, person = register(homeserver, "petbot"), register(homeserver, "alice")
    bot_id = account.user_id
    first = _replica(homeserver, account, tmp_path / "a", state=state_url, url=service, alice=person.user_id)
    second = _replica(homeserver, account, tmp_path / "b", state=state_url, url=service, alice=person.user_id)
    alice = await MatrixUser.login(base_url=homeserver.url, user_id=person.user_id, password=person.password)
    frozen, state = False, open_database(state_url, state_dir=tmp_path)
    try:
        first.start()
        await first.logged("lease matrix ")  # the first one holds the lease before the second starts
        await first.logged("ready: answering new messages")
        second.start()
        await second.logged("ready: answering new messages")
        room = await room_with(alice, bot_id)
        watch = await alice.send_text(room, "!watch")
        await alice.wait_for(room, lambda ev: bool(replies_to(ev, watch, sender=bot_id)))
        known = _add(tmp_path, service, "Before")
        await alice.wait_for(room, lambda ev: bool(_announced(ev, bot_id, known)))

        slow = await alice.send_text(room, "!sleep 2")
        await _claimed(state, slow)  # the holder runs it (for 2 s)
        assert first.process is not None
        os.kill(first.process.pid, signal.SIGSTOP)
        frozen = True
        assert await _claim_of(state, slow) == "claimed", "the command ended before the freeze: nothing is tested"
        assert not replies_to(await alice.messages(room), slow, sender=bot_id), "answered before the freeze"
        paused = _add(tmp_path, service, "Made-While-Frozen")
        meanwhile = await alice.send_text(room, "!whoami")
        await alice.wait_for(
            room,
            lambda ev: (
                all(replies_to(ev, asked, sender=bot_id) for asked in (slow, meanwhile))
                and bool(_announced(ev, bot_id, paused))
            ),
            deadline=TAKEOVER,
        )
        assert "lease matrix " in second.log() and "taken by" in second.log()

        os.kill(first.process.pid, signal.SIGCONT)
        frozen = False
        # it wakes up, its command finishes: it holds its answer back (or, were it not fenced, sends it again)
        held_back = f"{slow}: not answered here"
        await alice.wait_for(
            room, lambda ev: held_back in first.log() or len(replies_to(ev, slow, sender=bot_id)) > 1, deadline=30
        )
        last = await alice.send_text(room, "!whoami")
        events = await alice.wait_for(room, lambda ev: bool(replies_to(ev, last, sender=bot_id)))
        answered_once(events, bot_id)
        for asked in (watch, slow, meanwhile, last):
            assert len(replies_to(events, asked, sender=bot_id)) == 1, asked
        for pet in (known, paused):
            assert len(_announced(events, bot_id, pet)) == 1, f"pet {pet} announced other than once"
        await first.logged(f"{slow}: answered by another replica", deadline=30)
    finally:
        if frozen and first.process is not None:
            os.kill(first.process.pid, signal.SIGCONT)
        first.crash()
        code = second.stop()
        await alice.aclose()
        state.close()
    assert code == 0, second.log()[-3000:]

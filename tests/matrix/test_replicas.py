"""Two real ``petstore bot matrix`` processes on one account, each its own device and state dir, sharing one
PostgreSQL ``[bot] state`` (a database of the test's own) and one sandbox: exactly one answers; when it is killed
with SIGKILL mid-conversation, the other answers what was left and what comes next, and nothing is answered twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import sqlite3
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from pg_support import database_url, start_pg_server

from matrix.bot_process import LEASE_TTL, BotConfig, BotProcess, answered_once, room_with
from matrix.conftest import Account, BotRunner, register
from matrix.cs_client import MatrixUser, from_sender, replies_to
from matrix.e2e_person import E2EPerson
from matrix.synapse_server import SynapseServer
from petstore_bot.replicas import Leadership, Replicas
from petstore_state import open_database
from petstore_state.claims import Claims
from petstore_state.lease import open_lease

pytestmark = pytest.mark.slow

#: The deadline of a takeover: the standby answers within 10 s of the holder's death (waited for, not timed).
TAKEOVER = 10.0
LEASE_TAKEN = "lease matrix "


@pytest.fixture
def state_url() -> Iterator[str]:
    with start_pg_server() as server, database_url(server) as url:
        yield url


#: The key every replica seals held writes with (a code confirmed on the other replica checks its seal).
REPLICAS_KEY = "replicas-share-this-approval-key-0123"


def _replica_process(
    server: SynapseServer, account: Account, root: Path, *, state: str, sandbox: Path, alice: str
) -> BotProcess:
    config = BotConfig(
        homeserver=server.url,
        user_id=account.user_id,
        root=root,
        operators=[alice],
        extra={
            "bot": {"state": state, "approval_key": REPLICAS_KEY, "lease_ttl": LEASE_TTL},
            "sandbox": {"data_dir": str(sandbox)},
        },
    )
    return BotProcess(config, password=account.password, args=["-v"])


def _handled(bot: BotProcess, text: str) -> bool:
    """The bot ran the command ``text`` (its ``-v`` log line of every command)."""
    return f"{text!r} ->" in bot.log()


async def _answered(user: MatrixUser, room: str, asked: str, *, bot_id: str, deadline: float = 60.0) -> dict:
    events = await user.wait_for(room, lambda ev: replies_to(ev, asked, sender=bot_id), deadline=deadline)
    return dict(replies_to(events, asked, sender=bot_id)[0]["content"])


async def test_one_of_two_replicas_answers_and_the_other_takes_over_after_sigkill(
    homeserver: SynapseServer, tmp_path: Path, state_url: str
) -> None:
    account, person = register(homeserver, "petbot"), register(homeserver, "alice")
    sandbox = tmp_path / "sandbox"
    first = _replica_process(
        homeserver, account, tmp_path / "a", state=state_url, sandbox=sandbox, alice=person.user_id
    )
    second = _replica_process(
        homeserver, account, tmp_path / "b", state=state_url, sandbox=sandbox, alice=person.user_id
    )
    alice = await MatrixUser.login(base_url=homeserver.url, user_id=person.user_id, password=person.password)
    try:
        first.start()
        await first.logged(LEASE_TAKEN)  # the first one holds the lease before the second starts
        await asyncio.to_thread(first.ready)
        await asyncio.to_thread(second.start().ready)
        room = await room_with(alice, account.user_id)
        pets = _pet_count(sandbox)

        asked = [await alice.send_text(room, f"!whoami {n}") for n in range(3)]
        for event_id in asked:
            await _answered(alice, room, event_id, bot_id=account.user_id)
        twin = await alice.send_text(room, "!add Twin --category 1")
        body = (await _answered(alice, room, twin, bot_id=account.user_id))["body"]
        code = re.search(r"reply !confirm (\w{4})", body)
        assert code, body
        assert _handled(first, "/add Twin --category 1") and _handled(first, "/whoami 2")
        assert not _handled(second, "/add Twin --category 1") and not _handled(second, "/whoami"), "the standby ran it"

        # Mid-conversation: the holder is running a command (it said ⏳) when it is killed.
        slow = await alice.send_text(room, "!sleep 2")
        await alice.wait_for(room, lambda ev: any(_reacted(e, slow, "⏳") for e in ev))
        first.crash()
        confirm = await alice.send_text(room, f"!confirm {code[1]}")
        await _answered(alice, room, slow, bot_id=account.user_id, deadline=TAKEOVER)
        body = (await _answered(alice, room, confirm, bot_id=account.user_id, deadline=TAKEOVER))["body"]
        assert body.startswith("Added pet"), body
        assert _handled(second, f"/confirm {code[1]}")
        assert LEASE_TAKEN in second.log()

        # One more exchange with the survivor alone, then every message has exactly one answer.
        last = await alice.send_text(room, "!whoami")
        await _answered(alice, room, last, bot_id=account.user_id)
        events = await alice.messages(room)
        answered_once(events, account.user_id)
        for event_id in [*asked, twin, slow, confirm, last]:
            assert len(replies_to(events, event_id, sender=account.user_id)) == 1, event_id
        assert _pet_count(sandbox) == pets + 1, "one Twin, added once"
    finally:
        first.crash()
        code = await asyncio.to_thread(second.stop)
        await alice.aclose()
    assert code == 0, second.log()[-3000:]


def _pet_count(sandbox: Path) -> int:
    with sqlite3.connect(f"file:{sandbox / 'sandbox.db'}?mode=ro", uri=True) as conn:
        return int(conn.execute("SELECT count(*) FROM pets").fetchone()[0])


def _reacted(event: dict, event_id: str, key: str) -> bool:
    relates = event.get("content", {}).get("m.relates_to", {})
    return event.get("type") == "m.reaction" and relates.get("event_id") == event_id and relates.get("key") == key


@dataclass
class _Replica:
    """A replica's lease (and its background work) and who answers what, as the bot runtime opens them."""

    leadership: Leadership
    replicas: Replicas


@contextlib.asynccontextmanager
async def _replica(
    bot: BotRunner, *, state: str, state_dir: Path, name: str
) -> AsyncIterator[tuple[_Replica, asyncio.Event]]:
    """A replica's lease held in this process (its transport is run by the caller with its ``replicas``)."""
    database = open_database(state, state_dir=state_dir)
    lease = open_lease(state, state_dir=state_dir, name=name)
    replica = _Replica(Leadership(lease), Replicas(lease=lease, claims=Claims(database, scope=name)))
    replica.leadership.add("pruning of old claims", replica.replicas.prune)
    stop = asyncio.Event()
    holding = asyncio.create_task(replica.leadership.run(stop))
    try:
        yield replica, stop
    finally:
        stop.set()
        await holding
        lease.close()
        database.close()


async def test_encrypted_a_new_holder_reads_what_the_person_sent_to_both_devices(
    bot: BotRunner, homeserver: SynapseServer, tmp_path: Path
) -> None:
    """Encryption: the person's client encrypts each message for every device of the bot's account (both
    replicas), so the replica that takes the lease decrypts what was sent before and after; the first one stops
    here (SIGTERM-like: its lease released), the SIGKILL case is the test above."""
    alice = await E2EPerson.login(
        base_url=homeserver.url,
        user_id=(person := register(homeserver, "alice")).user_id,
        password=person.password,
        store=tmp_path / "alice",
    )
    state, me = f"sqlite:///{tmp_path / 'shared.sqlite3'}", bot.account.user_id
    try:
        async with _replica(bot, state=state, state_dir=tmp_path / "a", name="matrix e2e") as (first, stop_first):
            await asyncio.wait_for(first.leadership.lease.wait_held(), timeout=10)
            async with _replica(bot, state=state, state_dir=tmp_path / "b", name="matrix e2e") as (second, _):
                standby = bot.running(state_dir=tmp_path / "b-state", replicas=second.replicas)
                leader = bot.running(state_dir=tmp_path / "a-state", replicas=first.replicas, stop=stop_first)
                async with standby, leader:
                    room = await alice.create_room(invite=[me])
                    await alice.knows_device_of(me, room)
                    await alice.until(lambda: len(alice.devices_of(me)) == 2, what="both devices of the bot")
                    asked = await alice.send(room, "!hello")
                    [reply] = await alice.until(lambda: alice.replies_to(asked, sender=me), what="the answer")
                    assert reply.decrypted and reply.body == "HELLO"
                    stop_first.set()  # the holder stops: its lease is released, the standby takes it
                    later = await alice.send(room, "!later")
                    await asyncio.wait_for(second.leadership.lease.wait_held(), timeout=TAKEOVER)
                    [answer] = await alice.until(lambda: alice.replies_to(later, sender=me), what="the new holder")
                    assert answer.decrypted and answer.body == "LATER"
                    assert len(alice.replies_to(asked, sender=me)) == 1
    finally:
        await alice.aclose()


async def test_plain_replies_a_reply_sent_by_a_holder_that_died_before_recording_it_is_not_sent_again(
    bot: BotRunner,
    users: Callable[[str], Awaitable[MatrixUser]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """``reply_style = "plain"``: the reply relates to nothing, yet the standby knows from it (in the timeline) which
    message it answers. The holder sends its reply and dies before recording it (its record is lost here, then it
    stops), so the message is still claimed by the dead holder in the store: the new holder does not answer it
    again."""
    caplog.set_level(logging.INFO, logger="petstore_bot.matrix")
    alice = await users("alice")
    state, me = f"sqlite:///{tmp_path / 'shared.sqlite3'}", bot.account.user_id
    async with _replica(bot, state=state, state_dir=tmp_path / "a", name="matrix plain") as (first, stop_first):
        await asyncio.wait_for(first.leadership.lease.wait_held(), timeout=10)

        async def lost(*_event_ids: str) -> None:
            """The holder is killed between its reply and the record of it."""

        monkeypatch.setattr(first.replicas, "answered", lost)
        async with _replica(bot, state=state, state_dir=tmp_path / "b", name="matrix plain") as (second, _):
            standby = bot.running(state_dir=tmp_path / "b-state", replicas=second.replicas, reply_style="plain")
            leader = bot.running(
                state_dir=tmp_path / "a-state", replicas=first.replicas, stop=stop_first, reply_style="plain"
            )
            async with standby, leader:
                room = await alice.create_room(invite=[me])
                await alice.wait_membership(room, me, "join")
                asked = await alice.send_text(room, "!hello")
                await alice.wait_for(room, lambda events: "HELLO" in _bodies(events, me))
                seen = await _logged(caplog, f"{asked}: answered by another replica", deadline=TAKEOVER)
                stop_first.set()  # the holder stops: its lease is released, the standby takes it
                await asyncio.wait_for(second.leadership.lease.wait_held(), timeout=TAKEOVER)
                await alice.send_text(room, "!later")  # after !hello in the new holder's order: a barrier
                events = await alice.wait_for(room, lambda events: "LATER" in _bodies(events, me))
    assert _bodies(events, me) == ["HELLO", "LATER"], "the new holder answered !hello again"
    assert seen, "the standby did not see the reply in the timeline"


def _bodies(events: list[dict], sender: str) -> list[str]:
    return [str(event["content"].get("body")) for event in from_sender(events, sender)]


async def _logged(caplog: pytest.LogCaptureFixture, text: str, *, deadline: float) -> bool:
    """Whether ``text`` is logged within ``deadline`` seconds."""
    end = time.monotonic() + deadline
    while text not in caplog.text:
        if time.monotonic() > end:
            return False
        await asyncio.sleep(0.1)
    return True

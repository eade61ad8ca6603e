"""Held writes bound to their room and its grants, and run only as shown: the findings of issue 39 through the bot
core, the real sandbox service and the real state store (SQLite in the test's dir).

Each request is decided in its own room only (a terminal's: the approvals room it was posted in), by someone allowed
there at the time of the decision, of an asker who may still write there; a refusal is one line, audited in the
request's room. What runs is the stored command and fields, sealed by the bots: a row changed after it was shown,
or one naming no write, never runs."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import stat
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bot_commands.session import CommandSession
from petstore_bot.approvals_room import ApprovalPoster
from petstore_bot.chat import Reply
from petstore_bot.pending import TakenFinisher
from petstore_bot.seal import KEY_FILE, Seal, load_key
from petstore_bot.testing import ChatRoom
from petstore_os.records import replace
from petstore_state.pending import PendingWrite

from .conftest import ALICE, BOB, CAROL, OSCAR, Bot

APPROVE = re.compile(r"approve ([A-Z0-9]{6}) or")
OPS, A, B = "!ops:test", "!a:test", "!b:test"


def code_in(text: str) -> str:
    found = APPROVE.search(text)
    assert found, text
    return found[1]


def audit(bot: Bot) -> list[dict[str, Any]]:
    return [json.loads(line) for line in bot.audit_lines()]


def room(bot: Bot, room_id: str) -> ChatRoom:
    return ChatRoom(bot.core.handle, room=room_id, platform="matrix")


async def _terminal_request(bot: Bot, **changes: Any) -> PendingWrite:
    """A request as ``petstore add`` at a terminal leaves it (``changes``: what a holder of the state URL wrote
    instead), posted by the bot in the approvals room."""
    values: dict[str, Any] = {
        "kind": "approve",
        "asker": "local:ann",
        "role": "operator",
        "where": "terminal",
        "line": "/add Termy --category 2",
        "what": "add pet 'Termy' (category 2)",
        "fields": (("name", "Termy"), ("categoryId", "2")),
        "env": "sandbox",
        "ttl": 3600,
        "command": "add",
    }
    store = bot.state.pending.store
    write = await store.create(**{**values, **changes})
    posted: list[tuple[str, str | None]] = []

    async def announce(room: str, reply: Reply, /, *, key: str | None = None) -> bool:
        posted.append((room, key))
        return True

    poster = ApprovalPoster(store, room=OPS, announce=announce, seal=bot.state.pending.seal, platform="matrix")
    assert await poster.post_waiting() == 1 and posted == [(OPS, f"approval {write.code}")]
    bound = await store.get(write.code)
    assert bound is not None
    return bound


async def test_a_terminal_request_is_decided_in_the_approvals_room_by_its_approvers_only(
    make_bot: Callable[..., Bot],
) -> None:
    """Finding (a): with approvals_room and its approvers, operator oscar's !approve from another room is refused."""
    bot = make_bot(
        f'approvals = ["sandbox"]\napprovals_room = "{OPS}"\n[bot.rooms."{OPS}"]\napprovers = ["{CAROL}"]\n',
        roles=([ALICE, OSCAR, CAROL], [BOB]),
    )
    before = await bot.pet_count()
    request = await _terminal_request(bot)
    assert request.room == f"matrix:{OPS}"
    elsewhere = await bot.room.text(OSCAR, f"!approve {request.code}")
    assert elsewhere == (
        f"Nothing to approve: code {request.code} is decided only in the room where it was asked for (or posted); "
        "nothing was sent"
    )
    assert (await room(bot, A).text(CAROL, f"!approve {request.code}")).startswith("Nothing to approve: code")
    ops = room(bot, OPS)
    refused = await ops.text(OSCAR, f"!approve {request.code}")
    assert refused == f"Nothing to approve: code {request.code} may be approved only by the approvers this room names"
    assert await bot.pet_count() == before
    assert (await ops.text(CAROL, f"!approve {request.code}")).startswith("Added pet ")
    assert await bot.pet_count() == before + 1
    lines = audit(bot)
    assert [(e["actor"], e["where"], e["outcome"], e.get("approver")) for e in lines] == [
        (OSCAR, f"matrix:{OPS}", "refused", None),  # tried in another room: told to the request's room
        (CAROL, f"matrix:{OPS}", "refused", None),
        (OSCAR, f"matrix:{OPS}", "refused", None),
        ("local:ann", f"matrix:{OPS}", "ok", CAROL),
    ]
    assert all(e["pending_code"] == request.code for e in lines)


async def test_a_request_is_decided_only_in_its_room_under_that_rooms_grants(make_bot: Callable[..., Bot]) -> None:
    """Finding (b): oscar, a viewer in room A and an operator in room B, cannot approve A's request from B."""
    grants = (
        f'[bot.rooms."{A}"]\noperators = ["{ALICE}", "{CAROL}"]\nviewers = ["{OSCAR}"]\n'
        f'[bot.rooms."{B}"]\noperators = ["{OSCAR}"]\n'
    )
    bot = make_bot(f'approvals = ["sandbox"]\n{grants}', roles=([ALICE, CAROL], [BOB]))
    before = await bot.pet_count()
    a, b = room(bot, A), room(bot, B)
    ticket = code_in(await a.text(ALICE, "!add Ayy --category 1"))
    from_b = await b.text(OSCAR, f"!approve {ticket}")
    assert from_b.startswith(f"Nothing to approve: code {ticket} is decided only in the room where it was asked for")
    in_a = await a.text(OSCAR, f"!approve {ticket}")
    assert in_a == "Not allowed: !approve needs the operator role in this room; you have viewer (ask an operator)"
    assert await bot.pet_count() == before
    refused = audit(bot)[1]
    assert (refused["actor"], refused["where"], refused["outcome"], refused["pending_code"]) == (
        OSCAR,
        f"matrix:{A}",  # the request's room: B's admins never read it with !audit
        "refused",
        ticket,
    )
    assert (await a.text(CAROL, f"!approve {ticket}")).startswith("Added pet ")


async def test_an_asker_demoted_before_the_approval_gets_nothing_run(make_bot: Callable[..., Bot]) -> None:
    """Finding (c): the asker's role is checked again when the request is approved."""
    levels = f'[bot.rooms."{A}"]\npower_levels = true\n'
    bot = make_bot(f'approvals = ["sandbox"]\n{levels}', roles=([OSCAR], [BOB]))
    bot.core.roles.levels.update(A, {"users": {ALICE: 50, OSCAR: 50}})
    before = await bot.pet_count()
    a = room(bot, A)
    ticket = code_in(await a.text(ALICE, "!add Demoted --category 1"))
    bot.core.roles.levels.update(A, {"users": {ALICE: 0, OSCAR: 50}})
    refused = await a.text(OSCAR, f"!approve {ticket}")
    assert refused == (
        f"Nothing to approve: code {ticket} was asked for by someone who may no longer write in its room; "
        "nothing was sent"
    )
    assert await bot.pet_count() == before
    stored = await bot.state.pending.store.get(ticket)
    assert stored is not None and stored.state == "waiting"
    bot.core.roles.levels.update(A, {"users": {ALICE: 50, OSCAR: 0}})
    assert (await a.text(OSCAR, f"!approve {ticket}")).startswith("Not allowed: !approve needs the operator role")
    assert await bot.pet_count() == before


async def test_a_request_changed_after_it_was_shown_never_runs(make_bot: Callable[..., Bot]) -> None:
    """What is approved is what runs: the stored row changed with the state URL is refused as changed, audited."""
    bot = make_bot('approvals = ["sandbox"]')
    before = await bot.pet_count()
    chat_ticket = code_in(await bot.room.text(ALICE, "!add Shown --category 1"))
    request = await _terminal_request(bot)
    for ticket in (chat_ticket, request.code):
        bot.state.database.run_sync(
            lambda tx, ticket=ticket: tx.execute(
                "UPDATE pending_writes SET fields = ?, line = ? WHERE code = ?",
                ('[["name", "Tampered"], ["categoryId", "1"]]', "/add Tampered --category 1", ticket),
            )
        )
    refused = await bot.room.text(OSCAR, f"!approve {chat_ticket}")
    assert refused == (
        f"Nothing to approve: request {chat_ticket} was changed after it was shown; nothing was sent (ask for it again)"
    )
    assert (await room(bot, OPS).text(OSCAR, f"!approve {request.code}")).endswith("(ask for it again)")
    assert await bot.pet_count() == before
    lines = audit(bot)[1:]
    assert [(e["actor"], e["where"], e["outcome"], e["pending_code"]) for e in lines] == [
        (OSCAR, "matrix:!room:test", "refused", chat_ticket),
        (OSCAR, f"matrix:{OPS}", "refused", request.code),
    ]
    for ticket in (chat_ticket, request.code):
        stored = await bot.state.pending.store.get(ticket)
        assert stored is not None and stored.state == "waiting"


async def test_only_the_write_asked_for_runs_never_a_stored_read(make_bot: Callable[..., Bot]) -> None:
    """A terminal's row naming /audit (written with the state URL before a bot posted it) never runs: the bot
    runs the stored command only when it is a write, with exactly its stored fields."""
    bot = make_bot('approvals = ["sandbox"]')
    request = await _terminal_request(bot, command="audit", line="/audit 50", what="add pet 'Termy'", fields=())
    ops = room(bot, OPS)
    refused = await ops.text(OSCAR, f"!approve {request.code}")
    assert (
        refused
        == f"Nothing to approve: request {request.code} names no write a second person may run; nothing was sent"
    )
    stored = await bot.state.pending.store.get(request.code)
    assert stored is not None and stored.state == "failed"
    odd = await _terminal_request(bot, fields=(("name", "X"), ("categoryId", "2"), ("id", "7")))
    assert (await ops.text(OSCAR, f"!approve {odd.code}")).endswith("was changed after it was shown; nothing was sent")


class HoldingClient:
    """The real client whose pet creation reaches the service (it commits) but whose answer never comes back: the
    bot stops there, as one killed between the service's commit and its own record of the end."""

    def __init__(self, inner: Any, committed: asyncio.Event) -> None:
        self._inner, self._committed = inner, committed

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def create_pet(self, **fields: Any) -> Any:
        await self._inner.create_pet(**fields)
        self._committed.set()
        await asyncio.Event().wait()  # the answer is held for good


async def test_a_write_taken_before_a_crash_is_finished_once_on_start(make_bot: Callable[..., Bot]) -> None:
    """Crash between commit and audit: the restarted bot sends it again under its code's Idempotency-Key (the
    service replays), writes the ok line naming asker and approver, marks the row done, tells the room."""
    first = make_bot('approvals = ["sandbox"]')
    before = await first.pet_count()
    ticket = code_in(await first.room.text(ALICE, "!add Crashy --category 1"))
    committed, make = asyncio.Event(), first.core._make_session

    def holding(actor: Any) -> Any:
        made = make(actor)
        return CommandSession.from_parts(replace(made.parts, client=HoldingClient(made.client, committed)))

    first.core._make_session = holding
    approving = asyncio.create_task(first.room.text(OSCAR, f"!approve {ticket}"))
    await committed.wait()
    approving.cancel()  # killed: nothing after the commit runs
    with contextlib.suppress(asyncio.CancelledError):
        await approving
    assert await first.pet_count() == before + 1
    assert [e["outcome"] for e in audit(first)] == ["pending"]
    left = await first.state.pending.store.get(ticket)
    assert left is not None and left.state == "approved"

    second = make_bot('approvals = ["sandbox"]')  # the restart, on the same state and service
    told: list[tuple[str, str, str | None]] = []

    async def announce(room_id: str, reply: Reply, /, *, key: str | None = None) -> bool:
        told.append((room_id, reply.text, key))
        return True

    finishers = [
        TakenFinisher(
            second.state.pending.store,
            platform="matrix",
            resume=second.core.resume,
            announce=announce,
            started=time.time(),
        )
        for _ in range(2)
    ]  # two replicas finishing at once: each write is claimed by one
    assert sorted(await asyncio.gather(*(f.finish_taken() for f in finishers))) == [0, 1]
    assert await finishers[0].finish_taken() == 0
    assert await second.pet_count() == before + 1  # the service's replay, not a second pet
    [(where, text, key)] = told
    assert where == "!room:test" and key == f"finished {ticket}" and "name        Crashy" in text
    assert re.match(r"Pet \d+ was already added by this same request; nothing new was created", text)
    done = await second.state.pending.store.get(ticket)
    assert done is not None and done.state == "done"
    last = audit(second)[-1]
    assert (last["actor"], last["approver"], last["outcome"], last["pending_code"], last["where"]) == (
        ALICE,
        OSCAR,
        "ok",
        ticket,
        "matrix:!room:test",
    )


async def test_a_replica_with_another_key_says_so_and_runs_nothing(make_bot: Callable[..., Bot]) -> None:
    first = make_bot('approvals = ["sandbox"]')
    before = await first.pet_count()
    ticket = code_in(await first.room.text(ALICE, "!add Keyed --category 1"))
    other = make_bot('approvals = ["sandbox"]\napproval_key = "another-key-of-another-replica"')
    refused = await other.room.text(OSCAR, f"!approve {ticket}")
    assert refused == (
        f"Nothing to approve: code {ticket} was sealed by a bot with another approval key; nothing was sent "
        "(the bots need one key)"
    )
    assert await other.pet_count() == before
    assert (await first.room.text(OSCAR, f"!approve {ticket}")).startswith("Added pet ")


def test_the_key_file_is_made_once_0600_and_never_in_the_state(tmp_path: Path) -> None:
    key = load_key(setting=None, state_dir=tmp_path / "state")
    path = tmp_path / "state" / KEY_FILE
    assert len(key) == 64 and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert load_key(setting=None, state_dir=tmp_path / "state") == key
    assert load_key(setting="x" * 20, state_dir=tmp_path / "none") == b"x" * 20
    assert not (tmp_path / "none").exists()
    assert "key" not in repr(Seal(key)).replace("<key>", "") and key.decode() not in repr(Seal(key))


async def test_another_name_of_the_asker_is_not_a_second_person(make_bot: Callable[..., Bot]) -> None:
    """``[bot.people]`` says ``local:alice`` at a terminal is ``@alice:test`` in chat: she cannot approve her own."""
    bot = make_bot(f'approvals = ["sandbox"]\n[bot.people]\nalice = ["{ALICE}", "local:alice"]\n')
    request = await _terminal_request(bot, asker="local:alice")
    own = await room(bot, OPS).text(ALICE, f"!approve {request.code}")
    assert own.startswith("Nothing to approve: you asked for add pet 'Termy' (category 2) yourself")
    assert (await room(bot, OPS).text(OSCAR, f"!approve {request.code}")).startswith("Added pet ")

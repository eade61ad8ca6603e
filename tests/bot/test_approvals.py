"""Held writes in the bot core over the real sandbox service, with the state store the real bot uses (SQLite in the
test's dir, or a PostgreSQL database of the test's own): approvals by a second person, a confirmation that outlives
the bot that gave it, and expiry closed in the audit. The Synapse tests (tests/matrix/test_approvals.py) do the same
with real chat and a real bot process."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest
from pg_support import database_url, start_pg_server

from bot_commands.held import decode_held
from bot_commands.results import PetCreated
from petstore_bot.testing import ChatRoom

from .conftest import ALICE, BOB, CAROL, OSCAR, Bot

APPROVE = re.compile(r"approve ([A-Z0-9]{6}) or")
CONFIRM = re.compile(r"confirm ([A-Z0-9]{4}) within")


@pytest.fixture(params=["sqlite", "postgresql"])
def state_line(request: pytest.FixtureRequest) -> Iterator[str]:
    """The ``[bot] state`` line: unset (SQLite in the state dir) or a PostgreSQL database of the test's own."""
    if request.param == "sqlite":
        yield ""
        return
    with start_pg_server() as server, database_url(server) as url:
        yield f'state = "{url}"\n'


def code(pattern: re.Pattern[str], text: str) -> str:
    found = pattern.search(text)
    assert found, text
    return found[1]


def audit(bot: Bot) -> list[dict[str, Any]]:
    return [json.loads(line) for line in bot.audit_lines()]


async def test_a_second_operator_approves_once(make_bot: Callable[..., Bot], state_line: str) -> None:
    bot = make_bot(f'{state_line}approvals = ["sandbox"]')
    before = await bot.pet_count()
    asked = await bot.room.text(ALICE, "!add Rex --category 3")
    assert asked.startswith(f"{ALICE} asks to add a pet on sandbox: it needs a second person.")
    assert asked.endswith("It sends:\nname        Rex\ncategoryId  3"), asked
    ticket = code(APPROVE, asked)
    assert await bot.pet_count() == before

    own = await bot.room.text(ALICE, f"!approve {ticket}")
    assert (
        own
        == f"Nothing to approve: you asked for add pet 'Rex' (category 3) yourself: someone else must approve it (!cancel {ticket} drops it)"
    )
    viewer = await bot.room.text(BOB, f"!approve {ticket}")
    assert viewer == "Not allowed: !approve needs the operator role in this room; you have viewer (ask an operator)"
    assert (await bot.room.text(ALICE, f"!confirm {ticket}")).startswith(f"Nothing to confirm: code {ticket} asks for")
    done = await bot.room.text(OSCAR, f"!approve {ticket.lower()}")
    assert done.startswith("Added pet ") and await bot.pet_count() == before + 1
    again = await bot.room.text(OSCAR, f"!approve {ticket}")
    assert again == f"Nothing to approve: code {ticket} was already approved by {OSCAR}: a code works once"
    assert await bot.pet_count() == before + 1

    lines = audit(bot)
    assert [(e["actor"], e["outcome"], e.get("approver")) for e in lines] == [
        (ALICE, "pending", None),
        (ALICE, "refused", None),
        (BOB, "refused", None),
        (ALICE, "refused", None),
        (ALICE, "ok", OSCAR),
        (OSCAR, "refused", None),
    ]
    assert lines[0]["pending_code"] == ticket == lines[4]["pending_code"]
    assert lines[0]["event_id"] == "$event1" and lines[4]["event_id"] == "$event5"
    assert lines[4]["line"] == f"/approve {ticket.lower()}: /add Rex --category 3" and isinstance(
        lines[4]["pet_id"], int
    )
    stored = await bot.state.pending.store.get(ticket)
    assert stored is not None and stored.state == "done"
    ran = decode_held(stored.result, ok=False)  # the record of the run, as a terminal waiting on it reads it
    assert ran.ok and isinstance(ran.result, PetCreated) and re.fullmatch(r"Created #\d+ Rex", ran.summary)


async def test_a_denial_drops_the_write_and_says_why(make_bot: Callable[..., Bot], state_line: str) -> None:
    bot = make_bot(f'{state_line}approvals = ["sandbox"]')
    before = await bot.pet_count()
    ticket = code(APPROVE, await bot.room.text(ALICE, "!add Tom --category 1"))
    denied = await bot.room.text(OSCAR, f"!deny {ticket} not on a <b>friday</b>")
    assert denied == (
        f"Denied by {OSCAR}: add pet 'Tom' (category 1) asked by {ALICE} (code {ticket}); nothing was sent: "
        "not on a <b>friday</b>"
    )
    late = await bot.room.text(OSCAR, f"!approve {ticket}")
    assert late == f"Nothing to approve: code {ticket} was already denied by {OSCAR}: a code works once"
    assert await bot.pet_count() == before
    closing = audit(bot)[1]
    assert (closing["actor"], closing["approver"], closing["outcome"], closing["applied"]) == (
        ALICE,
        OSCAR,
        "denied",
        "no",
    )


async def test_the_rooms_approvers_are_the_only_ones(make_bot: Callable[..., Bot]) -> None:
    bot = make_bot(
        'approvals = ["sandbox"]\n[bot.rooms."!room:test"]\napprovers = ["@carol:test"]\n',
        roles=([ALICE, OSCAR, CAROL], [BOB]),
    )
    ticket = code(APPROVE, await bot.room.text(ALICE, "!add Ivy --category 1"))
    refused = await bot.room.text(OSCAR, f"!approve {ticket}")
    assert refused == f"Nothing to approve: code {ticket} may be approved only by the approvers this room names"
    assert (await bot.room.text(CAROL, f"!approve {ticket}")).startswith("Added pet ")


async def test_a_confirmation_outlives_the_bot_that_gave_it(make_bot: Callable[..., Bot], state_line: str) -> None:
    """A second bot on the same store (a restart, or another replica) runs the code once; the first cannot again."""
    first = make_bot(state_line)
    before = await first.pet_count()
    ticket = code(CONFIRM, await first.room.text(ALICE, "!add Restarty --category 2"))
    second = make_bot(state_line)
    assert (await second.room.text(OSCAR, f"!confirm {ticket}")).startswith("Nothing to confirm: nothing waits")
    assert (await second.room.text(ALICE, f"!confirm {ticket}")).startswith("Added pet ")
    assert (await first.room.text(ALICE, f"!confirm {ticket}")).endswith("was already confirmed: a code works once")
    assert await first.pet_count() == before + 1


async def test_a_confirmation_is_for_its_room(make_bot: Callable[..., Bot]) -> None:
    bot = make_bot()
    ticket = code(CONFIRM, await bot.room.text(ALICE, "!add Roomy --category 2"))
    elsewhere = ChatRoom(bot.core.handle, room="!elsewhere:test")
    assert (await elsewhere.text(ALICE, f"!confirm {ticket}")).startswith("Nothing to confirm: nothing waits")
    assert (await bot.room.text(ALICE, f"!cancel {ticket}")).startswith("Cancelled: add pet 'Roomy'")


async def test_an_expired_code_is_closed_in_the_audit_once(make_bot: Callable[..., Bot], state_line: str) -> None:
    bot = make_bot(f'{state_line}approvals = ["sandbox"]')
    ticket = code(APPROVE, await bot.room.text(ALICE, "!add Late --category 1"))
    store = bot.state.pending.store
    store.clock = lambda: 10**10  # long after its TTL
    closed = await bot.state.pending.close_expired()
    assert [w.code for w in closed] == [ticket] and await bot.state.pending.close_expired() == []
    expired = audit(bot)[-1]
    assert (expired["actor"], expired["outcome"], expired["applied"], expired["pending_code"]) == (
        ALICE,
        "expired",
        "no",
        ticket,
    )
    assert expired["message"] == "no approval by a second person within 3600 s; nothing was sent"
    late = await bot.room.text(OSCAR, f"!approve {ticket}")
    assert late == f"Nothing to approve: code {ticket} was already closed (it expired): a code works once"


async def test_last_and_the_rate_window_outlive_the_bot(make_bot: Callable[..., Bot], state_line: str) -> None:
    """A second bot on the same store (a restart, or a replica) knows each conversation's $last and each person's
    rate window."""
    first = make_bot(f'{state_line}confirm_writes = false\nrate_limit = "3/1h"')
    added = await first.room.text(ALICE, "!add Lasty --category 2")
    pet_id = re.search(r"Added pet (\d+)", added)
    assert pet_id, added
    second = make_bot(f'{state_line}confirm_writes = false\nrate_limit = "3/1h"')
    shown = await second.room.text(ALICE, "!get $last")
    assert "Lasty" in shown and pet_id[1] in shown
    assert (await second.room.text(ALICE, "!whoami")).startswith("you")
    assert (await first.room.text(ALICE, "!whoami")).startswith("Slow down: at most 3 commands in 3600 s")
    assert await second.room.say(ALICE, "!whoami") is None  # told once; silence after, on either bot
    elsewhere = ChatRoom(second.core.handle, room="!elsewhere:test")
    assert (await elsewhere.text(OSCAR, "!get $last")).startswith("Usage: $last has no value yet")


async def test_a_state_database_down_refuses_in_one_line_and_the_code_still_works_after(
    make_bot: Callable[..., Bot],
) -> None:
    """The PostgreSQL state refuses connections (its database closed to them, every session ended): the confirm is
    refused in one line, nothing sent; once it is back, the same code works."""
    with start_pg_server() as server, database_url(server) as url:
        bot = make_bot(f'state = "{url}"')
        before = await bot.pet_count()
        ticket = code(CONFIRM, await bot.room.text(ALICE, "!add Patient --category 2"))
        name = url.rsplit("/", 1)[1]
        with psycopg.connect(server.url(), autocommit=True) as admin:
            admin.execute(f"ALTER DATABASE {name} WITH ALLOW_CONNECTIONS false")
            admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s", (name,))
            down = await bot.room.text(ALICE, f"!confirm {ticket}")
            assert down.startswith("Not done: cannot connect to the bot's state") and "Traceback" not in down
            assert down.endswith("nothing was sent: try again") and await bot.pet_count() == before
            admin.execute(f"ALTER DATABASE {name} WITH ALLOW_CONNECTIONS true")
        assert (await bot.room.text(ALICE, f"!confirm {ticket}")).startswith("Added pet ")
        bot.state.close()

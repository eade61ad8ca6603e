"""The record of a held write's run (bot_commands.held): one codec, written by the session that runs the write and
read by whoever waits on it; every result a write can produce goes through it and comes back equal, and every
earlier stored form is still read (a row of any form, or of none, decodes; it never raises)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import get_type_hints

from holds_support import sqlite_holds
from hypothesis import given
from hypothesis import strategies as st

from bot_commands import results as r
from bot_commands.commands import default_registry
from bot_commands.held import FORM, WRITE_RESULTS, HeldError, HeldResult, decode_held, encode_held
from bot_commands.policy import Actor, Policy, Role
from bot_commands.registry import TypedCommand
from bot_commands.session import CommandSession
from petstore_api.models import INT64_MAX, INT64_MIN, Pet
from petstore_bot.roles import RoleBook

INT64 = st.integers(min_value=INT64_MIN, max_value=INT64_MAX)
TEXT = st.text(max_size=40)


@st.composite
def pets(draw: st.DrawFn) -> Pet:
    """A pet as a service may return it: a known status, an unknown one or none, and fields this client ignores."""
    body: dict[str, object] = {"id": draw(INT64), "name": draw(TEXT), "categoryId": draw(INT64)}
    status = draw(st.one_of(st.none(), st.sampled_from(["available", "pending", "sold"]), TEXT))
    if status is not None:
        body["status"] = status
    extras = draw(st.dictionaries(st.text(min_size=1, max_size=8).map(lambda k: f"x-{k}"), TEXT, max_size=3))
    return Pet.model_validate(body | extras)


#: A strategy for each result a write can produce (test_every_write_result_has_a_strategy_and_a_codec holds them
#: to WRITE_RESULTS).
RESULTS: dict[type[r.Result], st.SearchStrategy[r.Result]] = {
    r.PetCreated: st.builds(
        lambda pet, replayed: r.PetCreated(pet=pet, raw=pet.to_wire(), replayed=replayed), pets(), st.booleans()
    ),
}


def test_every_write_result_has_a_strategy_and_a_codec() -> None:
    """Each write in the registry returns a type the codec stores (and this test generates)."""
    writes = [cmd for cmd in default_registry().commands() if cmd.writes]
    assert writes, "the registry has writes"
    for cmd in writes:
        assert isinstance(cmd, TypedCommand)
        returned = get_type_hints(cmd.handler)["return"]
        assert WRITE_RESULTS[returned.__name__].type is returned, cmd.name
        assert returned in RESULTS, cmd.name
    assert {codec.type for codec in WRITE_RESULTS.values()} == set(RESULTS)


@given(result=st.one_of(*RESULTS.values()), line=TEXT, summary=TEXT)
def test_every_write_result_comes_back_equal(result: r.Result, line: str, summary: str) -> None:
    held = HeldResult(line=line, ok=True, summary=summary, result=result)
    text = encode_held(held)
    assert text.isascii() and json.loads(text)["v"] == FORM
    assert decode_held(text, ok=False) == held
    assert held.record()["result"] == result.to_json()  # what --format json prints of it


@given(line=TEXT, message=TEXT, code=TEXT, status=st.integers(min_value=0, max_value=599))
def test_a_failure_comes_back_equal(line: str, message: str, code: str, status: int) -> None:
    held = HeldResult(line=line, ok=False, summary=message, error=HeldError(code=code, message=message, status=status))
    assert decode_held(encode_held(held), ok=True) == held


def _children(inner: st.SearchStrategy[object]) -> st.SearchStrategy[object]:
    return st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["result", "type", "v", "ok", "x"]), inner)


@given(text=st.one_of(st.text(), st.builds(json.dumps, st.recursive(st.none() | st.booleans() | TEXT, _children))))
def test_any_text_decodes_and_never_raises(text: str) -> None:
    held = decode_held(text, ok=True)
    assert isinstance(held, HeldResult)


PET = {"id": 4242, "name": "Approved Rex", "categoryId": 2, "status": "available"}


def test_the_record_written_for_a_terminal_before_is_read() -> None:
    """The earlier form (session._said): the command's JSON record, its ``result`` a created pet; no ``v``."""
    earlier = json.dumps(
        {"command": "/add Rex", "ok": True, "result": PET, "replayed": True, "summary": "Created #4242 Rex"}
    )
    held = decode_held(earlier, ok=True)
    assert held.result == r.PetCreated(pet=Pet.model_validate(PET), raw=PET, replayed=True)
    assert (held.line, held.ok, held.summary) == ("/add Rex", True, "Created #4242 Rex")
    bare = decode_held(json.dumps({"command": "/add Rex", "ok": True, "result": PET}), ok=True)
    assert bare.result == r.PetCreated(pet=Pet.model_validate(PET), raw=PET) and bare.summary == ""


def test_a_failure_written_before_is_read() -> None:
    error = {"code": "conflict", "message": "pet exists", "status": 409}
    held = decode_held(
        json.dumps({"command": "/add Rex", "ok": False, "error": error, "summary": "pet exists"}), ok=False
    )
    assert held == HeldResult(
        line="/add Rex", ok=False, summary="pet exists", error=HeldError("conflict", "pet exists", 409)
    )


def test_the_line_a_chat_row_kept_before_is_its_summary() -> None:
    assert decode_held("Created #7 Rex", ok=True) == HeldResult(line="", ok=True, summary="Created #7 Rex")
    assert decode_held("", ok=False) == HeldResult(line="", ok=False, summary="")


def test_a_form_this_program_cannot_read_falls_back_to_its_summary() -> None:
    """A newer program's result type, or a record whose pet is no pet: no typed result, the line it said."""
    newer = json.dumps({"v": FORM + 1, "type": "PetMoved", "ok": True, "result": {"id": 1}, "summary": "Moved #1"})
    assert decode_held(newer, ok=True) == HeldResult(line="", ok=True, summary="Moved #1")
    broken = json.dumps({"command": "/add Rex", "ok": True, "result": {"id": "x"}, "summary": "Created"})
    assert decode_held(broken, ok=True).result is None
    assert decode_held("[1, 2]", ok=True).summary == "[1, 2]"


async def test_a_confirmed_write_stores_its_result_as_the_record(
    make_session: Callable[..., CommandSession], tmp_path: Path
) -> None:
    """The session's side, on the real store: what a held write's run wrote back decodes to the result it gave."""
    roles = RoleBook.of(operators=["@alice:test"], viewers=[], default="viewer")
    with sqlite_holds(tmp_path, roles=roles) as pending:
        alice = make_session(
            actor=Actor(id="@alice:test", role=Role.OPERATOR, where="matrix:!room"),
            policy=Policy(terminal=False, deferred=True, confirm_writes=True),
            pending=pending,
        )
        asked = await alice.run("/add Rex --category 3")
        assert isinstance(asked.result, r.ConfirmationNeeded)
        done = await alice.run(f"/confirm {asked.result.code}")
        assert isinstance(done.result, r.PetCreated)
        stored = await pending.store.get(asked.result.code)
    assert stored is not None and stored.state == "done"
    held = decode_held(stored.result, ok=False)
    assert held == HeldResult(line="/add Rex --category 3", ok=True, summary=held.summary, result=done.result)
    assert held.summary.startswith(f"Created #{done.result.pet.id}")

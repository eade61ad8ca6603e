"""What a terminal that asked for approval makes of the row a bot finished (petstore_cli.approvals.result_of), for
every form the store may hold: the record a bot of this version writes (bot_commands.held), the JSON record of the
earlier version, the one line a chat's row kept, and text of no known form; a real SQLite state store."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot_commands import results as r
from bot_commands.errors import CommandError
from bot_commands.held import HeldError, HeldResult, encode_held
from petstore_api.models import Pet
from petstore_cli.approvals import request_record, result_of
from petstore_state import open_database
from petstore_state.pending import PendingStore, PendingWrite

PET = {"id": 4242, "name": "Approved Rex", "categoryId": 2, "colour": "ginger"}
CREATED = r.PetCreated(pet=Pet.model_validate(PET), raw=PET, replayed=False)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[PendingStore]:
    store = PendingStore(open_database(f"sqlite:///{tmp_path / 'state.sqlite3'}", state_dir=tmp_path))
    yield store
    store.database.close()


def _anyone(_row: PendingWrite) -> None:
    return None


def finished(store: PendingStore, *, ok: bool, result: str) -> PendingWrite:
    """A terminal's request, approved by a bot that ran it and stored ``result``."""

    async def run() -> PendingWrite:
        write = await store.create(
            kind="approve",
            asker="local:ann",
            role="operator",
            where="terminal",
            line="/add 'Approved Rex' --category 2",
            what="add pet 'Approved Rex' (category 2)",
            fields=(("name", "Approved Rex"), ("categoryId", "2")),
            env="production",
            ttl=3600,
            command="add",
        )
        assert (await store.transition(write.code, check=_anyone, to="approved", by="@bob:x")).taken
        done = await store.finish(write.code, ok=ok, result=result)
        assert done is not None
        return done

    return asyncio.run(run())


def test_the_record_of_this_version_gives_the_result(store: PendingStore) -> None:
    held = HeldResult(line="/add 'Approved Rex' --category 2", ok=True, summary="Created #4242", result=CREATED)
    row = finished(store, ok=True, result=encode_held(held))
    assert result_of(row) == CREATED
    shown = request_record(row, now=row.created, detail=True)["result"]
    assert shown == held.record() and isinstance(shown, dict) and shown["result"] == PET


@pytest.mark.parametrize("replayed", [False, True])
def test_the_record_of_the_earlier_version_gives_the_result(store: PendingStore, replayed: bool) -> None:
    record = {"command": "/add 'Approved Rex' --category 2", "ok": True, "result": PET, "summary": "Created #4242"}
    row = finished(store, ok=True, result=json.dumps(record | ({"replayed": True} if replayed else {})))
    assert result_of(row) == r.PetCreated(pet=Pet.model_validate(PET), raw=PET, replayed=replayed)


def test_the_line_a_chat_row_kept_is_said(store: PendingStore) -> None:
    row = finished(store, ok=True, result="Created #4242 Approved Rex")
    assert result_of(row) == r.Notice(text=f"Created #4242 Approved Rex (request {row.code}, approved by @bob:x)")
    shown = request_record(row, now=row.created, detail=True)["result"]
    assert shown == {"command": row.line, "ok": True, "summary": "Created #4242 Approved Rex"}


def test_a_result_this_version_cannot_read_is_said_in_its_words(store: PendingStore) -> None:
    newer = {"v": 99, "type": "PetMoved", "command": "/move 1", "ok": True, "result": {"id": 1}, "summary": "Moved #1"}
    row = finished(store, ok=True, result=json.dumps(newer))
    assert result_of(row) == r.Notice(text=f"Moved #1 (request {row.code}, approved by @bob:x)")


@pytest.mark.parametrize(
    "stored",
    [
        encode_held(
            HeldResult(line="/add x", ok=False, summary="pet exists", error=HeldError("conflict", "pet exists", 409))
        ),
        json.dumps({"command": "/add x", "ok": False, "error": {"code": "conflict", "message": "pet exists"}}),
        "pet exists",
    ],
    ids=["this version", "earlier record", "chat line"],
)
def test_a_failure_of_any_form_is_the_error_it_said(store: PendingStore, stored: str) -> None:
    row = finished(store, ok=False, result=stored)
    with pytest.raises(CommandError, match=r"approved by @bob:x, failed: pet exists$"):
        result_of(row)

"""The PostgreSQL store's lanes, against a real server: work that arrives together runs together, and one job's
failure stays its own.

Creates asked for in one turn of the event loop commit in one transaction (PostgreSQL's ``xmin`` of the rows says
which transaction wrote them); a create that fails beside others fails alone while the others commit; reads asked
together each get their own page. A page is rendered byte for byte as one pet's JSON is.
"""

from __future__ import annotations

import asyncio
import json

import psycopg
import pytest
from hypothesis import given
from hypothesis import strategies as st

from petstore_server.pg_store import PostgresStore, _page, encode_name
from petstore_server.records import Idempotency, PetRecord
from petstore_server.wire import dumps

from .test_backends import NAMES

pytestmark = pytest.mark.slow


@pytest.fixture
async def pg(pg_url: str):
    store = await PostgresStore.open(pg_url)
    yield store
    await store.close()


def writers(url: str) -> list[int]:
    """The transaction id that wrote each pet, in id order."""
    with psycopg.connect(url) as conn:
        return [int(row[0]) for row in conn.execute("SELECT xmin::text FROM pets ORDER BY id")]


async def test_creates_asked_together_commit_together(pg: PostgresStore, pg_url: str) -> None:
    keys = [Idempotency(key=f"k{i}", fingerprint="f", scope="s") for i in range(8)]
    created = await asyncio.gather(
        *(pg.create_pet(name=f"p{i}", category_id=1, status=None, idempotency=keys[i % 8]) for i in range(12)),
        *(pg.create_pet(name=f"u{i}", category_id=2, status="sold", idempotency=None) for i in range(4)),
    )
    assert [c.status_code for c in created] == [201] * 16
    # the keys used twice replay the first create's answer, within the same transaction
    assert [c.replayed for c in created[:12]] == [False] * 8 + [True] * 4
    assert [c.body for c in created[8:12]] == [c.body for c in created[:4]]
    ids = [json.loads(c.body)["id"] for c in created[:8] + created[12:]]
    assert ids == sorted(ids) and len(set(ids)) == 12
    assert len(set(writers(pg_url))) == 1, "sixteen creates asked in one turn made more than one transaction"


STATUS = "it's \\ sold"  # the service allows three statuses; the store keeps any text without NUL


async def test_every_name_round_trips_through_a_batch(pg: PostgresStore, pg_url: str) -> None:
    """Creates asked together go to PostgreSQL as one query string, their values bound by the client: every name
    and status comes back as sent (names with NUL, quotes, backslashes, astral characters, 10,000 characters)."""
    names = [*NAMES, "O'Brien", "back\\slash'; DROP TABLE pets; --", "$$dollar$$"]
    created = await asyncio.gather(
        *(
            pg.create_pet(
                name=name, category_id=i, status=STATUS if i % 2 else None, idempotency=Idempotency(f"n{i}", "f", "s")
            )
            for i, name in enumerate(names)
        )
    )
    assert len(set(writers(pg_url))) == 1, "not one batch"
    for i, (name, answer) in enumerate(zip(names, created, strict=True)):
        pet = await pg.get_pet(pet_id=json.loads(answer.body)["id"])
        assert pet is not None and (pet.name, pet.category_id, pet.status) == (name, i, STATUS if i % 2 else None)


async def test_a_create_failing_beside_others_fails_alone(pg: PostgresStore, pg_url: str) -> None:
    """A category id past int64 (the service's parser refuses it; the store is asked directly here) makes
    PostgreSQL refuse that statement; the transaction of the batch is rolled back and each create runs alone."""
    results = await asyncio.gather(
        pg.create_pet(name="a", category_id=1, status=None, idempotency=Idempotency("ka", "f", "s")),
        pg.create_pet(name="bad", category_id=2**70, status=None, idempotency=Idempotency("kb", "f", "s")),
        pg.create_pet(name="c", category_id=3, status=None, idempotency=None),
        return_exceptions=True,
    )
    assert isinstance(results[1], psycopg.Error)
    assert [json.loads(r.body)["name"] for r in (results[0], results[2])] == ["a", "c"]
    page = json.loads((await pg.list_page(limit=10, status=None, after_id=None)).body)
    assert [pet["name"] for pet in page] == ["a", "c"]
    # the failed key made nothing: asked again, it creates
    again = await pg.create_pet(name="b", category_id=2, status=None, idempotency=Idempotency("kb", "f", "s"))
    assert again.status_code == 201 and not again.replayed


async def test_reads_asked_together_each_get_their_own_answer(pg: PostgresStore) -> None:
    ids = [
        json.loads((await pg.create_pet(name=f"p{i}", category_id=i, status=None, idempotency=None)).body)["id"]
        for i in range(6)
    ]
    pages, pets = await asyncio.gather(
        asyncio.gather(*(pg.list_page(limit=2, status=None, after_id=after) for after in [None, *ids])),
        asyncio.gather(*(pg.get_pet(pet_id=pet_id) for pet_id in [*ids, -1])),
    )
    for after, got in zip([None, *ids], pages, strict=True):
        expected = [i for i in ids if after is None or i > after][:2]
        assert [pet["id"] for pet in json.loads(got.body)] == expected
    assert [pet.name if pet else None for pet in pets] == [f"p{i}" for i in range(6)] + [None]


_NAMES = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=40)


@given(st.lists(st.tuples(_NAMES, st.integers(-(2**63), 2**63 - 1), st.none() | _NAMES), max_size=6))
def test_a_page_is_each_pet_as_its_own_json(pets: list[tuple[str, int, str | None]]) -> None:
    rows = [(index + 1, encode_name(name), category, status) for index, (name, category, status) in enumerate(pets)]
    records = [PetRecord(pet_id, name.decode(), category, status) for pet_id, name, category, status in rows]
    assert _page(rows, len(rows)).body == b"[" + b",".join(record.json() for record in records) + b"]"
    assert _page(rows, len(rows)).body == dumps([record.wire() for record in records])

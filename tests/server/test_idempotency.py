"""Idempotency-Key on createPet: replay, 422 on reuse with another body, validation, expiry, one API key's alone."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from petstore_server.app import create_app, key_scope
from petstore_server.pg_store import PostgresStore
from petstore_server.sqlite_store import SqliteStore
from petstore_server.store import IDEMPOTENCY_TTL_SECONDS, PetStore

from .support import AUTH, BASE, KEY, OTHER_KEY, assert_error

REX = {"name": "Rex", "categoryId": 1, "status": "available"}


async def count(client: httpx.AsyncClient) -> int:
    return len((await client.get("/pets?limit=100")).json())


async def test_same_key_same_body_replays_and_creates_nothing(client: httpx.AsyncClient) -> None:
    first = await client.post("/pets", json=REX, headers={"Idempotency-Key": "k-1"})
    again = await client.post("/pets", json=REX, headers={"Idempotency-Key": "k-1"})
    assert first.status_code == again.status_code == 201
    assert "idempotent-replayed" not in first.headers
    assert again.headers["idempotent-replayed"] == "true"
    assert again.json() == first.json()
    assert await count(client) == 13


async def test_equivalent_json_counts_as_the_same_body(client: httpx.AsyncClient) -> None:
    first = await client.post("/pets", json=REX, headers={"Idempotency-Key": "k-1"})
    reordered = b'{ "status": "available",\n "categoryId": 1, "name": "Rex" }'
    headers = {"Idempotency-Key": "k-1", "Content-Type": "application/json"}
    again = await client.post("/pets", content=reordered, headers=headers)
    assert again.headers["idempotent-replayed"] == "true" and again.json() == first.json()


@pytest.mark.parametrize("other", [{**REX, "name": "Max"}, {"name": "Rex", "categoryId": 1}, {**REX, "categoryId": 2}])
async def test_same_key_other_body_is_422(client: httpx.AsyncClient, other: dict) -> None:
    await client.post("/pets", json=REX, headers={"Idempotency-Key": "k-1"})
    response = await client.post("/pets", json=other, headers={"Idempotency-Key": "k-1"})
    assert_error(response, 422, "idempotency_key_reused", mentions="Idempotency-Key")
    assert await count(client) == 13


async def test_different_keys_create_different_pets(client: httpx.AsyncClient) -> None:
    a = await client.post("/pets", json=REX, headers={"Idempotency-Key": "k-a"})
    b = await client.post("/pets", json=REX, headers={"Idempotency-Key": "k-b"})
    assert a.json()["id"] != b.json()["id"]


OTHER = {"Authorization": f"Bearer {OTHER_KEY}"}


async def test_another_api_key_with_the_same_key_and_body_gets_a_pet_of_its_own(client: httpx.AsyncClient) -> None:
    """Alice's ``order-1`` is hers: Bob sending it (same body) is not answered with her pet."""
    alice = await client.post("/pets", json=REX, headers={"Idempotency-Key": "order-1"})
    bob = await client.post("/pets", json=REX, headers={"Idempotency-Key": "order-1", **OTHER})
    assert alice.status_code == bob.status_code == 201
    assert "idempotent-replayed" not in bob.headers and bob.json()["id"] != alice.json()["id"]
    assert await count(client) == 14


async def test_another_api_key_with_the_same_key_and_another_body_learns_nothing(client: httpx.AsyncClient) -> None:
    """No 422 for Bob: it would tell him that someone used ``order-1``."""
    await client.post("/pets", json=REX, headers={"Idempotency-Key": "order-1"})
    bob = await client.post("/pets", json={**REX, "name": "Max"}, headers={"Idempotency-Key": "order-1", **OTHER})
    assert bob.status_code == 201 and bob.json()["name"] == "Max" and "idempotent-replayed" not in bob.headers


async def test_each_api_key_still_replays_and_conflicts_on_its_own_keys(client: httpx.AsyncClient) -> None:
    alice = await client.post("/pets", json=REX, headers={"Idempotency-Key": "order-1"})
    bob = await client.post("/pets", json={**REX, "name": "Max"}, headers={"Idempotency-Key": "order-1", **OTHER})
    alice_again = await client.post("/pets", json=REX, headers={"Idempotency-Key": "order-1"})
    bob_again = await client.post("/pets", json={**REX, "name": "Max"}, headers={"Idempotency-Key": "order-1", **OTHER})
    assert alice_again.headers["idempotent-replayed"] == bob_again.headers["idempotent-replayed"] == "true"
    assert (alice_again.json(), bob_again.json()) == (alice.json(), bob.json())
    conflict = await client.post("/pets", json=REX, headers={"Idempotency-Key": "order-1", **OTHER})
    assert_error(conflict, 422, "idempotency_key_reused")  # Bob's own key, reused with another body
    assert await count(client) == 14


async def test_two_api_keys_racing_with_one_key_make_one_pet_each(client: httpx.AsyncClient) -> None:
    sends = [
        client.post("/pets", json=REX, headers={"Idempotency-Key": "k-race", **auth})
        for _ in range(10)
        for auth in (AUTH, OTHER)
    ]
    responses = await asyncio.gather(*sends)
    assert {r.status_code for r in responses} == {201}
    assert len({r.json()["id"] for r in responses}) == 2
    assert sum("idempotent-replayed" not in r.headers for r in responses) == 2
    assert await count(client) == 14


async def test_records_keep_a_digest_of_the_api_key_never_the_key(served, backend: str, request, tmp_path) -> None:
    app = create_app(served, api_keys=[KEY, OTHER_KEY])
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE) as http:
        for auth in (AUTH, OTHER):
            assert (await http.post("/pets", json=REX, headers={"Idempotency-Key": "k", **auth})).status_code == 201
    if backend == "sqlite":
        rows = served.pets._conn.execute("SELECT * FROM idempotency").fetchall()
    else:
        import psycopg

        with psycopg.connect(request.getfixturevalue("pg_url")) as conn:
            rows = conn.execute("SELECT * FROM idempotency").fetchall()
    dump = repr(rows)
    assert len(rows) == 2 and KEY not in dump and OTHER_KEY not in dump
    assert {row[0] for row in rows} == {key_scope(KEY), key_scope(OTHER_KEY)}


async def test_invalid_body_with_a_key_does_not_burn_the_key(client: httpx.AsyncClient) -> None:
    assert (await client.post("/pets", json={"name": ""}, headers={"Idempotency-Key": "k-1"})).status_code == 400
    assert (await client.post("/pets", json=REX, headers={"Idempotency-Key": "k-1"})).status_code == 201


@pytest.mark.parametrize("key", ["", " ", "a" * 256, "caf\u00e9".encode(), "a b"])
async def test_malformed_key_is_400(client: httpx.AsyncClient, key: str | bytes) -> None:
    response = await client.post("/pets", json=REX, headers={"Idempotency-Key": key})
    assert_error(response, 400, "bad_request", mentions="Idempotency-Key")


async def test_concurrent_retries_with_one_key_create_one_pet(client: httpx.AsyncClient) -> None:
    responses = await asyncio.gather(
        *(client.post("/pets", json=REX, headers={"Idempotency-Key": "k-race"}) for _ in range(20))
    )
    assert {r.status_code for r in responses} == {201}
    assert len({r.json()["id"] for r in responses}) == 1
    assert sum("idempotent-replayed" in r.headers for r in responses) == 19
    assert await count(client) == 13


async def test_keys_expire_after_the_ttl(tmp_path, backend, request) -> None:
    now = [1_000_000.0]
    if backend == "sqlite":
        store = SqliteStore(PetStore(tmp_path / "ttl.db", clock=lambda: now[0]))
    else:
        store = await PostgresStore.open(request.getfixturevalue("pg_url"), clock=lambda: now[0])
    app = create_app(store, api_keys=[KEY])
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE, headers=AUTH) as client:
        first = await client.post("/pets", json=REX, headers={"Idempotency-Key": "k-old"})
        now[0] += IDEMPOTENCY_TTL_SECONDS - 1
        assert (
            await client.post("/pets", json={**REX, "name": "Max"}, headers={"Idempotency-Key": "k-old"})
        ).status_code == 422
        now[0] += 2
        fresh = await client.post("/pets", json={**REX, "name": "Max"}, headers={"Idempotency-Key": "k-old"})
    await store.close()
    assert fresh.status_code == 201 and "idempotent-replayed" not in fresh.headers
    assert fresh.json()["id"] != first.json()["id"]

"""PetStore: durability settings, commits, distinct ids under threads, seeding and reset."""

from __future__ import annotations

import json
import sqlite3
import threading

import pytest

from petstore_server.records import Idempotency
from petstore_server.store import IDEMPOTENCY_TTL_SECONDS, SAMPLE_PETS, IdempotencyConflict, PetStore


@pytest.fixture
def empty(tmp_path):
    store = PetStore(tmp_path / "empty.db")
    yield store
    store.close()


def page_ids(store: PetStore, **kwargs) -> list[int]:
    return [pet["id"] for pet in json.loads(store.list_page(**kwargs).body)]


def test_wal_and_normal_sync(empty: PetStore) -> None:
    conn = sqlite3.connect(empty.path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()
    assert empty._conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL


def test_create_is_committed_before_returning(empty: PetStore) -> None:
    pet = empty.create_pet(name="Rex", category_id=1)
    other = sqlite3.connect(empty.path)
    assert other.execute("SELECT id, name, category_id, status FROM pets").fetchall() == [(pet["id"], "Rex", 1, None)]
    other.close()


def test_pets_survive_reopening(tmp_path) -> None:
    store = PetStore(tmp_path / "p.db")
    created = store.create_pet(name="Rex", category_id=1, status="sold")
    store.close()
    reopened = PetStore(tmp_path / "p.db")
    assert reopened.get_pet(created["id"]) == created
    reopened.close()


def test_threads_get_distinct_ids(empty: PetStore) -> None:
    ids: list[int] = []

    def work() -> None:
        ids.extend(empty.create_pet(name="t", category_id=1)["id"] for _ in range(50))

    threads = [threading.Thread(target=work) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(ids)) == 400
    assert page_ids(empty, limit=100) == sorted(ids)[:100]


def test_page_reports_where_the_next_one_starts(empty: PetStore) -> None:
    for i in range(5):
        empty.create_pet(name=f"p{i}", category_id=i, status="sold" if i % 2 else None)
    first = empty.list_page(limit=2)
    assert first.next_after == 2
    assert page_ids(empty, limit=2, after_id=2) == [3, 4]
    assert empty.list_page(limit=5).next_after is None
    assert page_ids(empty, limit=5, status="sold") == [2, 4]


def test_pet_json_keeps_status_absent_and_text_exact(empty: PetStore) -> None:
    empty.create_pet(name='"\x00\x1b\u202e', category_id=-(2**63))
    assert json.loads(empty.list_page(limit=1).body) == [{"id": 1, "name": '"\x00\x1b\u202e', "categoryId": -(2**63)}]


def test_idempotent_create_replays_or_conflicts(empty: PetStore) -> None:
    first = empty.create_pet_once(idempotency=Idempotency("k", "f1", "s"), name="Rex", category_id=1)
    replay = empty.create_pet_once(idempotency=Idempotency("k", "f1", "s"), name="Rex", category_id=1)
    assert (first.replayed, replay.replayed) == (False, True)
    assert first.body == replay.body and first.status_code == 201
    with pytest.raises(IdempotencyConflict):
        empty.create_pet_once(idempotency=Idempotency("k", "f2", "s"), name="Max", category_id=1)
    assert page_ids(empty, limit=10) == [1]


def test_seed_only_into_an_empty_store(empty: PetStore) -> None:
    assert empty.seed_sample() == len(SAMPLE_PETS)
    assert empty.seed_sample() == 0
    statuses = {pet["status"] for pet in json.loads(empty.list_page(limit=100).body)}
    assert statuses == {"available", "pending", "sold"}


def test_reset_wipes_pets_and_keys(empty: PetStore) -> None:
    empty.seed_sample()
    empty.create_pet_once(idempotency=Idempotency("k", "f1", "s"), name="Rex", category_id=1)
    empty.reset()
    assert page_ids(empty, limit=100) == []
    assert not empty.create_pet_once(idempotency=Idempotency("k", "f2", "s"), name="Max", category_id=1).replayed


def test_expired_keys_are_pruned(tmp_path) -> None:
    now = [0.0]
    store = PetStore(tmp_path / "ttl.db", clock=lambda: now[0])
    store.create_pet_once(idempotency=Idempotency("old", "f", "s"), name="Rex", category_id=1)
    now[0] += IDEMPOTENCY_TTL_SECONDS + 1
    store.create_pet_once(idempotency=Idempotency("new", "f", "s"), name="Rex", category_id=1)
    assert [key for (key,) in store._conn.execute("SELECT key FROM idempotency")] == ["new"]
    store.close()

"""The Store contract, on SQLite and on PostgreSQL: pages, cursors, names, idempotency, schema versions."""

from __future__ import annotations

import asyncio
import json
import sqlite3

import psycopg
import pytest

from petstore_os.db_url import parse_db
from petstore_server.pg_store import PRUNE_BATCH, PRUNE_EXPIRED, PostgresStore
from petstore_server.pg_store import SCHEMA_VERSION as PG_SCHEMA_VERSION
from petstore_server.records import IDEMPOTENCY_TTL_SECONDS, Idempotency, IdempotencyConflict, SchemaTooNew
from petstore_server.sqlite_store import SqliteStore
from petstore_server.storage import Store
from petstore_server.store import SCHEMA_VERSION, PetStore

#: What the first release wrote (no schema_version table): a file of that layout must open as is.
LEGACY_LAYOUT = """
CREATE TABLE pets (id INTEGER PRIMARY KEY, name TEXT NOT NULL, category_id INTEGER NOT NULL, status TEXT NULL);
CREATE INDEX pets_status_id ON pets (status, id);
CREATE TABLE idempotency (key TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, status_code INTEGER NOT NULL,
    body BLOB NOT NULL, created_at REAL NOT NULL);
CREATE INDEX idempotency_created_at ON idempotency (created_at);
"""
NAMES = ["Rex", "\x00", "a\x00b\x00", "🐶‍🦺 e\u0301", "\U0010ffff" * 200, "n" * 200, '"\\\x1b\u202e', "x" * 10_000]


async def create(store: Store, name: str = "Rex", *, status: str | None = None, key: str | None = None) -> dict:
    idempotency = None if key is None else Idempotency(key=key, fingerprint=f"f-{len(name)}", scope="s")
    created = await store.create_pet(name=name, category_id=7, status=status, idempotency=idempotency)
    assert created.status_code == 201
    return json.loads(created.body)


async def page(store: Store, **kwargs) -> tuple[list[dict], int | None]:
    result = await store.list_page(**{"limit": 100, "status": None, "after_id": None, **kwargs})
    return json.loads(result.body), result.next_after


@pytest.fixture
async def empty(backend: str, tmp_path, request):
    if backend == "sqlite":
        store = await SqliteStore.open(tmp_path / "contract.db")
    else:
        store = await PostgresStore.open(request.getfixturevalue("pg_url"))
    yield store
    await store.close()


def test_db_targets() -> None:
    assert parse_db("pets.db") == parse_db("sqlite:///pets.db")
    assert parse_db("sqlite:////tmp/p.db").location == "/tmp/p.db"
    assert parse_db("postgresql://u@h:5432/d").backend == "postgresql"
    with pytest.raises(ValueError, match="postgresql://"):
        parse_db("mysql://u@h/d")


async def test_pages_follow_ids_and_the_status_filter(empty: Store) -> None:
    ids = [(await create(empty, f"p{i}", status="sold" if i % 2 else None))["id"] for i in range(5)]
    assert ids == sorted(ids) and len(set(ids)) == 5
    first, after = await page(empty, limit=2)
    assert [pet["id"] for pet in first] == ids[:2] and after == ids[1]
    rest, end = await page(empty, limit=5, after_id=after)
    assert [pet["id"] for pet in rest] == ids[2:] and end is None
    sold, _ = await page(empty, status="sold")
    assert [pet["id"] for pet in sold] == [ids[1], ids[3]]
    assert "status" not in first[0] and first[1]["status"] == "sold"


@pytest.mark.parametrize("name", NAMES, ids=range(len(NAMES)))
async def test_every_name_round_trips(empty: Store, name: str) -> None:
    pet = await create(empty, name)
    assert pet["name"] == name
    assert (await empty.get_pet(pet_id=pet["id"])).name == name
    assert (await page(empty))[0][0]["name"] == name
    assert (await create(empty, name, key="k"))["name"] == name
    keyed = {"name": name, "category_id": -3, "status": "sold", "idempotency": Idempotency("r", "f", "s")}
    first, again = await empty.create_pet(**keyed), await empty.create_pet(**keyed)
    assert again.replayed and again.body == first.body and json.loads(first.body)["name"] == name


async def test_int64_extremes_and_missing_pets(empty: Store) -> None:
    pet = await empty.create_pet(name="Big", category_id=-(2**63), status=None, idempotency=None)
    assert json.loads(pet.body)["categoryId"] == -(2**63)
    assert await empty.get_pet(pet_id=2**63 - 1) is None


async def test_one_key_never_makes_two_pets(empty: Store) -> None:
    results = await asyncio.gather(
        *(
            empty.create_pet(name="Rex", category_id=1, status=None, idempotency=Idempotency("k", "f", "s"))
            for _ in range(12)
        )
    )
    assert len({result.body for result in results}) == 1
    assert sum(not result.replayed for result in results) == 1
    with pytest.raises(IdempotencyConflict):
        await empty.create_pet(name="Max", category_id=1, status=None, idempotency=Idempotency("k", "other", "s"))
    assert len((await page(empty))[0]) == 1


async def test_concurrent_creates_commit_in_id_order(empty: Store) -> None:
    """Every pet a create returned is listed, once, in id order; nothing lands behind a cursor."""
    created = await asyncio.gather(*(create(empty, f"c{i}") for i in range(60)))
    listed, _ = await page(empty)
    assert [pet["id"] for pet in listed] == sorted(pet["id"] for pet in created)


async def test_seed_once_then_health(empty: Store) -> None:
    assert await empty.seed_sample() == 12
    assert await empty.seed_sample() == 0
    assert (await create(empty))["id"] == 13
    await empty.health_check()
    assert await empty.list_orders() == b"[]"


def test_a_file_from_before_versioning_opens_with_its_pets(tmp_path) -> None:
    path = tmp_path / "legacy.db"
    conn = sqlite3.connect(path)
    conn.executescript(LEGACY_LAYOUT)
    conn.execute("INSERT INTO pets VALUES (41, ?, 3, 'sold')", ("Old\x00timer",))
    conn.commit()
    conn.close()
    store = PetStore(path)
    assert store.schema_version() == SCHEMA_VERSION == 2
    assert store.get_pet(41) == {"id": 41, "name": "Old\x00timer", "categoryId": 3, "status": "sold"}
    assert store.create_pet(name="New", category_id=1)["id"] == 42
    store.close()
    assert PetStore(path).schema_version() == 2


def test_a_version_1_file_keeps_its_pets_and_drops_the_keys_of_unknown_api_keys(tmp_path) -> None:
    """Version 1 kept Idempotency-Keys for every API key at once; whose each was is not known, so they go."""
    path = tmp_path / "v1.db"
    with sqlite3.connect(path) as conn:
        conn.executescript(LEGACY_LAYOUT + "CREATE TABLE schema_version (version INTEGER NOT NULL);")
        conn.execute("INSERT INTO schema_version VALUES (1)")
        conn.execute("INSERT INTO pets VALUES (7, 'Rex', 1, NULL)")
        conn.execute("INSERT INTO idempotency VALUES ('order-1', 'f', 201, ?, 1e12)", (b'{"id":7}',))
    conn.close()
    store = PetStore(path)
    assert store.schema_version() == 2 and store.get_pet(7) == {"id": 7, "name": "Rex", "categoryId": 1}
    created = store.create_pet_once(idempotency=Idempotency("order-1", "f", "s"), name="Rex", category_id=1)
    assert not created.replayed and json.loads(created.body)["id"] == 8
    store.close()


async def test_a_version_1_postgresql_schema_keeps_its_pets_and_drops_unscoped_keys(pg_url: str) -> None:
    from petstore_server.pg_store import _MIGRATIONS

    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE schema_version (version integer NOT NULL)")
        for statement in _MIGRATIONS[1]:
            conn.execute(statement)
        conn.execute("INSERT INTO schema_version VALUES (1)")
        conn.execute("INSERT INTO pets (id, name, category_id) VALUES (7, 'Rex', 1)")
        conn.execute("INSERT INTO idempotency VALUES ('order-1', 'f', 201, '{}', 1e12)")
    store = await PostgresStore.open(pg_url)
    try:
        assert await store.schema_version() == PG_SCHEMA_VERSION and (await store.get_pet(pet_id=7)) is not None
        again = await store.create_pet(
            name="Rex", category_id=1, status=None, idempotency=Idempotency("order-1", "f", "s")
        )
        assert not again.replayed
    finally:
        await store.close()


def test_a_newer_sqlite_schema_is_refused(tmp_path) -> None:
    path = tmp_path / "future.db"
    PetStore(path).close()
    with sqlite3.connect(path) as conn:
        conn.execute("INSERT INTO schema_version VALUES (99)")
    conn.close()
    with pytest.raises(SchemaTooNew):
        PetStore(path)


async def test_postgresql_schema_is_versioned_and_upgrades_once(pg_url: str) -> None:
    first = await PostgresStore.open(pg_url)
    second = await PostgresStore.open(pg_url)
    assert await first.schema_version() == await second.schema_version() == PG_SCHEMA_VERSION == 4
    await first.close()
    await second.close()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        assert conn.execute("SELECT count(*) FROM schema_version").fetchone() == (PG_SCHEMA_VERSION,)
        conn.execute("INSERT INTO schema_version VALUES (99)")
    with pytest.raises(SchemaTooNew):
        await PostgresStore.open(pg_url)


# ------------------------------------------------------------------ expired idempotency records (PostgreSQL)

EXPIRED_AT = 1_000.0  # the test's records: this old, so expired for a clock at NOW
NOW = EXPIRED_AT + IDEMPOTENCY_TTL_SECONDS + 60


def plan_nodes(plan: dict) -> list[str]:
    return [plan["Node Type"], *(node for child in plan.get("Plans", ()) for node in plan_nodes(child))]


async def test_pruning_expired_records_walks_the_index_without_statistics(pg_url: str) -> None:
    """The prune as plpgsql runs it (a generic plan) on a table the planner has no statistics of yet: an index walk
    that stops after a few rows. The range DELETE of version 3 was a sequential scan of every record, on every keyed
    create (the bench's creates fell to ~1,000 a second, the backend busy scanning)."""
    await (await PostgresStore.open(pg_url)).close()  # the schema
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO idempotency SELECT 's', 'k' || i, 'f', 201, 'x', %s + i FROM generate_series(1, 20000) i",
            (NOW,),
        )
        conn.execute("SET plan_cache_mode = force_generic_plan")
        conn.execute(f"PREPARE prune(float8) AS {PRUNE_EXPIRED % {'expired': '$1'}}")
        (plan,) = conn.execute(f"EXPLAIN (FORMAT JSON) EXECUTE prune({NOW})").fetchone()[0]
    nodes = plan_nodes(plan["Plan"])
    assert "Seq Scan" not in nodes and "Limit" in nodes, nodes


def idempotency_rows(pg_url: str) -> dict[str, float]:
    with psycopg.connect(pg_url) as conn:
        return dict(conn.execute("SELECT key, created_at FROM idempotency").fetchall())


async def test_a_keyed_create_prunes_a_few_expired_records_and_never_replays_one(pg_url: str) -> None:
    """40 expired records, the key ``k-39`` the newest of them: each keyed create deletes the 16 oldest; a create
    under ``k-39`` makes a new pet (its old record replaced, not replayed), and that new record replays."""
    store = await PostgresStore.open(pg_url, clock=lambda: NOW)
    try:
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute(
                "INSERT INTO idempotency SELECT 's', 'k-' || i, 'old', 201, 'x', %s + i FROM generate_series(0, 39) i",
                (EXPIRED_AT,),
            )
        first = await create(store, key="k-39")
        rows = idempotency_rows(pg_url)
        assert len(rows) == 40 - PRUNE_BATCH and rows["k-39"] == NOW
        assert min(rows.values()) == EXPIRED_AT + PRUNE_BATCH  # the oldest went first
        again = await store.create_pet(
            name="Rex", category_id=7, status=None, idempotency=Idempotency(key="k-39", fingerprint="f-3", scope="s")
        )
        assert again.replayed and json.loads(again.body) == first
        assert len(idempotency_rows(pg_url)) == 40 - 2 * PRUNE_BATCH  # a replay prunes too
        await create(store, key="fresh")
        assert idempotency_rows(pg_url) == {"k-39": NOW, "fresh": NOW}  # the last expired ones gone
    finally:
        await store.close()

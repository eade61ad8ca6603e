"""The PostgreSQL backend behind the :class:`~.storage.Store` interface (psycopg 3).

Names are stored as ``bytea`` holding their UTF-8 bytes. PostgreSQL ``text`` cannot hold U+0000,
and every name SQLite keeps (NUL, astral characters, any length) must round-trip exactly; raw
UTF-8 bytes do, with no escaping rule to get wrong. ``convert_from(name, 'UTF8')`` reads any
name without a NUL in SQL.

Creates are serialised by a transaction-scoped advisory lock (one per schema) taken before the
id is drawn and held until commit, so ids are committed in increasing order: a reader paging by
cursor never passes an id that a slower transaction commits later, and two requests with one
Idempotency-Key never both create (the second waits, then replays). Reads take no lock.

Every use of the database runs on :class:`~.pg_threads.PgThreads`: synchronous autocommit connections on threads
of their own, one for reads and one for writes, fed through queues (cheaper per query than psycopg's async
connections and pool). Creates that arrive together are committed together (one transaction, one WAL flush; each
still its own answer, and one failing is run again alone). It checks each connection before use and replaces one
the server closed, answers :class:`~.records.StoreUnavailable` (503) at once while the database cannot be reached,
and bounds every request's wait (see its module).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from petstore_os.db_url import redact

from .pg_threads import LANES, OPERATION_TIMEOUT, PgThreads, Query, in_one_transaction, pipelined
from .records import (
    IDEMPOTENCY_TTL_SECONDS,
    MIN_ID,
    SAMPLE_PETS,
    Created,
    Idempotency,
    IdempotencyConflict,
    Page,
    PetRecord,
    SchemaTooNew,
    StoreOpenError,
    pet_json,
)

__all__ = [
    "CONNECTIONS",
    "OPERATION_TIMEOUT",
    "SCHEMA_VERSION",
    "PostgresStore",
    "decode_name",
    "encode_name",
]


#: Version 2 keeps idempotency records per API key and drops those of version 1, as SQLite does
#: (``petstore_server.store.SCOPED_IDEMPOTENCY`` says why); version 3 adds ``petstore_create_once``, and
#: version 4 makes its pruning of expired records bounded.
SCHEMA_VERSION = 4
#: Most expired idempotency records one keyed create deletes. Each create adds at most one record, so a backlog
#: (a service stopped past the TTL) shrinks with every create while no create pays for all of it.
PRUNE_BATCH = 16
#: The oldest expired records (created at or before ``%(expired)s``), at most :data:`PRUNE_BATCH`, deleted. The
#: ``ORDER BY ... LIMIT`` walks the created_at index from its start whatever the planner's statistics say: a plain
#: ``created_at <= $1`` in a generic plan (as plpgsql caches one) was a sequential scan of the table.
PRUNE_EXPIRED = (
    "DELETE FROM idempotency WHERE (scope, key) IN (SELECT e.scope, e.key FROM idempotency e"
    f" WHERE e.created_at <= %(expired)s ORDER BY e.created_at LIMIT {PRUNE_BATCH})"
)
# A keyed create in one statement, one round trip: under the create lock (held until commit), a few expired
# records dropped, the key's record replayed if it exists and has not expired, else the pet and its record inserted
# (replacing an expired record of the key not yet dropped). Each statement in the function sees what committed
# before the lock was granted. The record's body is the pet's JSON: '{"id":<id>,' and the rest (``body_tail``),
# made by the caller.
_CREATE_ONCE_FUNCTION = f"""CREATE OR REPLACE FUNCTION petstore_create_once(
        p_scope text, p_key text, p_fingerprint text, p_name bytea, p_category_id bigint, p_status text,
        p_body_tail bytea, p_now double precision, p_expired double precision
    ) RETURNS TABLE (pet_id bigint, found_fingerprint text, found_status integer, found_body bytea)
    LANGUAGE plpgsql AS $$
    BEGIN
        PERFORM pg_advisory_xact_lock(hashtext('petstore.create:' || current_schema()));
        {PRUNE_EXPIRED % {"expired": "p_expired"}};
        RETURN QUERY SELECT NULL::bigint, i.fingerprint, i.status_code, i.body FROM idempotency i
            WHERE i.scope = p_scope AND i.key = p_key AND i.created_at > p_expired;
        IF FOUND THEN
            RETURN;
        END IF;
        INSERT INTO pets (name, category_id, status) VALUES (p_name, p_category_id, p_status)
            RETURNING id INTO pet_id;
        INSERT INTO idempotency (scope, key, fingerprint, status_code, body, created_at) VALUES (
            p_scope, p_key, p_fingerprint, 201,
            convert_to('{{"id":' || pet_id || ',', 'UTF8') || p_body_tail, p_now)
            ON CONFLICT (scope, key) DO UPDATE SET fingerprint = EXCLUDED.fingerprint,
                status_code = EXCLUDED.status_code, body = EXCLUDED.body, created_at = EXCLUDED.created_at;
        RETURN NEXT;
    END
    $$"""
_MIGRATIONS: dict[int, tuple[str, ...]] = {
    1: (
        """CREATE TABLE pets (
            id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
            name bytea NOT NULL,
            category_id bigint NOT NULL,
            status text NULL
        )""",
        "COMMENT ON COLUMN pets.name IS 'UTF-8 bytes of the name (text cannot hold U+0000)'",
        "CREATE INDEX pets_status_id ON pets (status, id)",
        """CREATE TABLE idempotency (
            key text PRIMARY KEY,
            fingerprint text NOT NULL,
            status_code integer NOT NULL,
            body bytea NOT NULL,
            created_at double precision NOT NULL
        )""",
        "CREATE INDEX idempotency_created_at ON idempotency (created_at)",
    ),
    2: (
        "DROP TABLE idempotency",
        """CREATE TABLE idempotency (
            scope text NOT NULL,
            key text NOT NULL,
            fingerprint text NOT NULL,
            status_code integer NOT NULL,
            body bytea NOT NULL,
            created_at double precision NOT NULL,
            PRIMARY KEY (scope, key)
        )""",
        "CREATE INDEX idempotency_created_at ON idempotency (created_at)",
    ),
    3: (_CREATE_ONCE_FUNCTION,),
    # Expired records pruned a few at a time through the created_at index (version 3 deleted them with a range
    # that a generic plan without statistics ran as a scan of the whole table, on every keyed create).
    4: (_CREATE_ONCE_FUNCTION,),
}
#: Seconds to wait for the first connection when the URL sets no ``connect_timeout``.
_CONNECT_TIMEOUT = 15
#: Seconds a connection attempt of a running service may take when the URL sets no ``connect_timeout``.
_RECONNECT_TIMEOUT = 3
#: TCP keepalives (unless the URL sets them): a connection to a host that vanished is found broken in ~10 s.
_KEEPALIVES = {"keepalives": 1, "keepalives_idle": 5, "keepalives_interval": 2, "keepalives_count": 3}
#: Connections (and threads) per store, so per worker: one for reads, one for writes.
CONNECTIONS = len(LANES)
_READ, _WRITE = LANES
_LOCK = "SELECT pg_advisory_xact_lock(hashtext(%s || current_schema()))"
_COLUMNS = "SELECT id, name, category_id, status FROM pets"
_LIST_ALL = f"{_COLUMNS} WHERE id > %s ORDER BY id LIMIT %s"
_GET = f"{_COLUMNS} WHERE id = %s"
_LIST_STATUS = f"{_COLUMNS} WHERE status = %s AND id > %s ORDER BY id LIMIT %s"
# One statement, one round trip: the lock is taken before nextval() runs and held until commit.
_CREATE = (
    "WITH l AS (SELECT pg_advisory_xact_lock(hashtext('petstore.create:' || current_schema())))"
    " INSERT INTO pets (name, category_id, status) SELECT %s, %s, %s FROM l RETURNING id"
)
_CREATE_ONCE = (
    "SELECT pet_id, found_fingerprint, found_status, found_body FROM petstore_create_once("
    "%s::text, %s::text, %s::text, %s::bytea, %s::bigint, %s::text, %s::bytea, %s::float8, %s::float8)"
)


def encode_name(name: str) -> bytes:
    return name.encode("utf-8")


def decode_name(raw: bytes | memoryview) -> str:
    return bytes(raw).decode("utf-8")


def _first_connection(conninfo: str) -> None:
    """Connect once, so that a refusal is reported at once with libpq's reason; the reason is one line without the
    URL's password."""
    try:
        # a malformed URL fails in _with_defaults, before any connection
        psycopg.connect(_with_defaults(conninfo, connect_timeout=_CONNECT_TIMEOUT)).close()
    except psycopg.Error as exc:
        raise StoreOpenError(redact(" ".join(str(exc).split()), conninfo)) from None


def _with_defaults(conninfo: str, **defaults: int) -> str:
    """``conninfo`` with each of ``defaults`` that it does not set itself."""
    given = conninfo_to_dict(conninfo)
    missing = {name: value for name, value in defaults.items() if name not in given}
    return make_conninfo(conninfo, **missing) if missing else conninfo


def _first_row(cursor: psycopg.Cursor[Any]) -> Any:
    return cursor.fetchone()


def _record(row: tuple[int, bytes, int, str | None]) -> PetRecord:
    return PetRecord(row[0], decode_name(row[1]), row[2], row[3])


def _page(rows: list[tuple[int, bytes, int, str | None]], limit: int) -> Page:
    """A page from up to ``limit + 1`` rows (the extra one only says that more follow), rendered as
    :meth:`PetRecord.json` renders one pet (the same bytes), without making a record or a dict of each."""
    pets = [pet_json(pet_id, decode_name(name), category, status) for pet_id, name, category, status in rows[:limit]]
    body = ("[" + ",".join(pets) + "]").encode()
    return Page(body=body, next_after=rows[limit - 1][0] if len(rows) > limit else None)


Conn = psycopg.Connection[Any]


class PostgresStore:
    """:class:`~.storage.Store` on autocommit connections, one per thread (writes open a transaction)."""

    def __init__(self, threads: PgThreads, *, clock: Callable[[], float]) -> None:
        self._threads = threads
        self._clock = clock

    @classmethod
    async def open(cls, conninfo: str, *, clock: Callable[[], float] = time.time) -> PostgresStore:
        """A store on ``conninfo`` (:data:`CONNECTIONS` connections), its schema created or upgraded.
        :class:`StoreOpenError` (one line, no password) when the URL is malformed or the server refuses a first
        connection (down, wrong password, no database)."""
        await asyncio.to_thread(_first_connection, conninfo)
        threads = PgThreads(_with_defaults(conninfo, connect_timeout=_RECONNECT_TIMEOUT, **_KEEPALIVES))
        store = cls(threads, clock=clock)
        try:
            await threads.run(_migrate, lane=_WRITE)
        except BaseException:
            await threads.stop()
            raise
        return store

    def pool_stats(self) -> tuple[int, int]:
        """(connections in use, requests waiting for one)."""
        return self._threads.stats()

    async def schema_version(self) -> int:
        def version(conn: Conn) -> int:
            row = conn.execute("SELECT max(version) FROM schema_version").fetchone()
            return (row[0] if row else None) or 0

        return await self._threads.run(version)

    async def list_page(self, *, limit: int, status: str | None, after_id: int | None) -> Page:
        after = MIN_ID if after_id is None else after_id
        params: tuple[object, ...]
        if status is None:
            query, params = _LIST_ALL, (after, limit + 1)
        else:
            query, params = _LIST_STATUS, (status, after, limit + 1)
        return await self._threads.run(
            Query(query, params, lambda cursor: _page(cursor.fetchall(), limit)), group=pipelined
        )

    async def get_pet(self, *, pet_id: int) -> PetRecord | None:
        row = await self._threads.run(Query(_GET, (pet_id,), _first_row), group=pipelined)
        return None if row is None else _record(row)

    async def create_pet(
        self, *, name: str, category_id: int, status: str | None, idempotency: Idempotency | None
    ) -> Created:
        if idempotency is not None:
            return await self._create_once(name=name, category_id=category_id, status=status, idempotency=idempotency)
        params = (encode_name(name), category_id, status)
        row = await self._threads.run(Query(_CREATE, params, _first_row), lane=_WRITE, group=in_one_transaction)
        assert row is not None
        return Created(201, PetRecord(row[0], name, category_id, status).json(), replayed=False)

    async def _create_once(
        self, *, name: str, category_id: int, status: str | None, idempotency: Idempotency
    ) -> Created:
        """One statement (``petstore_create_once``): the first create under a key, or the replay of its record."""
        now = self._clock()
        # The pet's JSON after '{"id":0,', which the function completes with the id it draws.
        tail = PetRecord(0, name, category_id, status).json().split(b",", 1)[1]
        params = (
            *(idempotency.scope, idempotency.key, idempotency.fingerprint, encode_name(name), category_id, status),
            *(tail, now, now - IDEMPOTENCY_TTL_SECONDS),
        )
        row = await self._threads.run(Query(_CREATE_ONCE, params, _first_row), lane=_WRITE, group=in_one_transaction)
        assert row is not None
        pet_id, fingerprint, status_code, body = row
        if pet_id is not None:
            return Created(201, PetRecord(pet_id, name, category_id, status).json(), replayed=False)
        if fingerprint != idempotency.fingerprint:
            raise IdempotencyConflict(idempotency.key)
        return Created(status_code, bytes(body), replayed=True)

    async def list_orders(self) -> bytes:
        return b"[]"

    async def seed_sample(self) -> int:
        return await self._threads.run(_seed_sample, lane=_WRITE)

    async def health_check(self) -> None:
        await self._threads.run(lambda conn: conn.execute("SELECT 1 FROM pets LIMIT 1").fetchall())

    async def close(self) -> None:
        await self._threads.stop()


def _migrate(conn: Conn) -> None:
    with conn.transaction():
        conn.execute(_LOCK, ("petstore.schema:",))
        conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version integer NOT NULL)")
        row = conn.execute("SELECT max(version) FROM schema_version").fetchone()
        version = (row[0] if row else None) or 0
        if version > SCHEMA_VERSION:
            raise SchemaTooNew(f"schema version {version} is newer than this petstore's")
        for target in range(version + 1, SCHEMA_VERSION + 1):
            for statement in _MIGRATIONS[target]:
                conn.execute(statement)
            conn.execute("INSERT INTO schema_version (version) VALUES (%s)", (target,))


def _seed_sample(conn: Conn) -> int:
    with conn.transaction():
        conn.execute(_LOCK, ("petstore.create:",))
        if conn.execute("SELECT 1 FROM pets LIMIT 1").fetchone() is not None:
            return 0
        with conn.cursor() as cursor:
            cursor.executemany(
                "INSERT INTO pets (id, name, category_id, status) VALUES (%s, %s, %s, %s)",
                [(pet_id, encode_name(name), cat, status) for pet_id, name, cat, status in SAMPLE_PETS],
            )
        conn.execute("SELECT setval(pg_get_serial_sequence('pets', 'id'), (SELECT max(id) FROM pets))")
    return len(SAMPLE_PETS)

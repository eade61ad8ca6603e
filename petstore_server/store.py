"""SQLite persistence for pets and idempotency records.

The file, its WAL and -shm are private to their owner (0600). One connection in
autocommit mode, WAL journal, ``synchronous=NORMAL``: every write is committed
before its method returns, so an acknowledged create survives ``kill -9``. A lock
serialises use of the connection, so the store may be shared by the event loop
thread and a test client's thread; ids come from SQLite's rowid and are therefore
distinct. Pets are returned in wire shape (``categoryId``; ``status`` only when
set): pages as JSON bytes, single pets as dicts.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from petstore_os import Warn, open_private, tighten

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
)

__all__ = [
    "IDEMPOTENCY_TTL_SECONDS",
    "SAMPLE_PETS",
    "SCHEMA_VERSION",
    "Created",
    "IdempotencyConflict",
    "Page",
    "PetStore",
]

#: The layout this code writes. Version 1 is the layout of the first release, which had no
#: ``schema_version`` table: such a file is adopted as version 1 as it stands (its pets kept).
#: Version 2 scopes idempotency records by API key (see :data:`SCOPED_IDEMPOTENCY`).
SCHEMA_VERSION = 2

#: Version 2: idempotency records are kept per API key (``scope``). The records of version 1 are dropped: which
#: key sent each is not known, and replaying one to whichever key asks is the leak version 2 closes. The cost: a
#: create answered just before the upgrade, whose answer was lost and which is retried after it with the same
#: Idempotency-Key, makes a second pet (``petstore serve`` answers the requests in flight before it stops).
SCOPED_IDEMPOTENCY = """
DROP TABLE IF EXISTS idempotency;
CREATE TABLE idempotency (
    scope TEXT NOT NULL,
    key TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    status_code INTEGER NOT NULL,
    body BLOB NOT NULL,
    created_at REAL NOT NULL,
    PRIMARY KEY (scope, key)
);
CREATE INDEX idempotency_created_at ON idempotency (created_at);
"""

#: Migrations by the version they produce; each runs inside the same IMMEDIATE transaction
#: that bumps ``schema_version``, so concurrent openers (several workers) apply each once.
_MIGRATIONS: dict[int, str] = {
    1: """
CREATE TABLE IF NOT EXISTS pets (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    category_id INTEGER NOT NULL,
    status TEXT NULL
);
CREATE INDEX IF NOT EXISTS pets_status_id ON pets (status, id);
CREATE TABLE IF NOT EXISTS idempotency (
    key TEXT PRIMARY KEY,
    fingerprint TEXT NOT NULL,
    status_code INTEGER NOT NULL,
    body BLOB NOT NULL,
    created_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS idempotency_created_at ON idempotency (created_at);
""",
    2: SCOPED_IDEMPOTENCY,
}

_COLUMNS = "SELECT id, name, category_id, status FROM pets"
# SQLite renders each pet's JSON itself: the list path does no per-row Python work.
_PET_JSON = (
    "SELECT id, CASE WHEN status IS NULL"
    " THEN json_object('id', id, 'name', name, 'categoryId', category_id)"
    " ELSE json_object('id', id, 'name', name, 'categoryId', category_id, 'status', status) END FROM pets"
)
_LIST_ALL = f"{_PET_JSON} WHERE id > ? ORDER BY id LIMIT ?"
_LIST_STATUS = f"{_PET_JSON} WHERE status = ? AND id > ? ORDER BY id LIMIT ?"
_GET = f"{_COLUMNS} WHERE id = ?"
_INSERT = "INSERT INTO pets (name, category_id, status) VALUES (?, ?, ?)"
_FIND_RECORD = "SELECT fingerprint, status_code, body FROM idempotency WHERE scope = ? AND key = ?"
_ADD_RECORD = (
    "INSERT INTO idempotency (scope, key, fingerprint, status_code, body, created_at) VALUES (?, ?, ?, 201, ?, ?)"
)


def _enable_wal(conn: sqlite3.Connection, *, timeout: float = 5.0) -> None:
    """Switch the file to WAL (it stays so), retrying while another process holds it.

    Switching takes an exclusive lock, and SQLite answers "database is locked" at once, without its busy
    handler, when another connection is opening the same new file: two faces started together on a fresh
    sandbox (two `petstore web` sessions) met it.
    """
    deadline = time.monotonic() + timeout
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.005)


def _private_files(path: Path, *, warn: Warn | None) -> None:
    """The database file made (empty) 0600 before SQLite opens it, an older one tightened with its WAL and -shm.

    SQLite gives the WAL and shared-memory files it creates the database file's mode, so they are 0600 too.
    """
    os.close(open_private(path, os.O_RDWR | os.O_CREAT, warn=warn))
    for suffix in ("-wal", "-shm"):
        tighten(path.with_name(path.name + suffix), warn=warn)


class PetStore:
    """Pets and idempotency records in one SQLite file (mode 0600, as are its WAL and -shm).

    ``warn`` takes the line said of a file found open to others, which is tightened (default: stderr).
    """

    def __init__(self, path: str | Path, *, clock: Callable[[], float] = time.time, warn: Warn | None = None) -> None:
        self.path = Path(path)
        self._clock = clock
        self._lock = threading.Lock()
        if str(path) != ":memory:":
            _private_files(self.path, warn=warn)
        self._conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self._conn.execute("PRAGMA busy_timeout=5000")
        _enable_wal(self._conn)
        self._conn.execute("PRAGMA synchronous=NORMAL")
        try:
            self._migrate()
        except BaseException:
            self._conn.close()
            raise

    def schema_version(self) -> int:
        """The version recorded in the file (0: none recorded)."""
        with self._lock:
            return self._recorded_version()

    def _recorded_version(self) -> int:
        self._conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
        row = self._conn.execute("SELECT max(version) FROM schema_version").fetchone()
        return row[0] or 0

    def _migrate(self) -> None:
        with self._lock, self._transaction():
            version = self._recorded_version()
            if version > SCHEMA_VERSION:
                raise SchemaTooNew(f"{self.path}: schema version {version} is newer than this petstore's")
            for target in range(version + 1, SCHEMA_VERSION + 1):
                for statement in _MIGRATIONS[target].split(";"):
                    if statement.strip():
                        self._conn.execute(statement)
                self._conn.execute("INSERT INTO schema_version (version) VALUES (?)", (target,))

    def list_page(self, *, limit: int, status: str | None = None, after_id: int | None = None) -> Page:
        """Up to ``limit`` pets with id > ``after_id`` (in id order), as a JSON array."""
        after = MIN_ID if after_id is None else after_id
        with self._lock:
            if status is None:
                rows = self._conn.execute(_LIST_ALL, (after, limit + 1)).fetchall()
            else:
                rows = self._conn.execute(_LIST_STATUS, (status, after, limit + 1)).fetchall()
        next_after = rows[limit - 1][0] if len(rows) > limit else None
        body = "[" + ",".join([row[1] for row in rows[:limit]]) + "]"
        return Page(body=body.encode(), next_after=next_after)

    def get_record(self, pet_id: int) -> PetRecord | None:
        with self._lock:
            row = self._conn.execute(_GET, (pet_id,)).fetchone()
        return None if row is None else PetRecord(*row)

    def get_pet(self, pet_id: int) -> dict[str, Any] | None:
        record = self.get_record(pet_id)
        return None if record is None else dict(record.wire())

    def create_record(self, *, name: str, category_id: int, status: str | None = None) -> PetRecord:
        """Insert and commit a pet; returns it with its assigned id."""
        with self._lock:
            pet_id = self._conn.execute(_INSERT, (name, category_id, status)).lastrowid
        assert pet_id is not None
        return PetRecord(pet_id, name, category_id, status)

    def create_pet(self, *, name: str, category_id: int, status: str | None = None) -> dict[str, Any]:
        return dict(self.create_record(name=name, category_id=category_id, status=status).wire())

    def ping(self) -> None:
        """Raise unless the file answers a query on the pets table."""
        with self._lock:
            self._conn.execute("SELECT 1 FROM pets LIMIT 1").fetchall()

    def create_pet_once(
        self, *, idempotency: Idempotency, name: str, category_id: int, status: str | None = None
    ) -> Created:
        """Create under an idempotency key (of one API key: its ``scope``), atomically with the key's record.

        A record of the same scope and key younger than the TTL with the same fingerprint is
        replayed (nothing created); a different fingerprint raises :class:`IdempotencyConflict`.
        Expired records are pruned here, so the table holds at most a TTL's worth of keys.
        """
        now = self._clock()
        scope, key = idempotency.scope, idempotency.key
        with self._lock, self._transaction():
            self._conn.execute("DELETE FROM idempotency WHERE created_at <= ?", (now - IDEMPOTENCY_TTL_SECONDS,))
            found = self._conn.execute(_FIND_RECORD, (scope, key)).fetchone()
            if found is not None:
                if found[0] != idempotency.fingerprint:
                    raise IdempotencyConflict(key)
                return Created(status_code=found[1], body=found[2], replayed=True)
            pet_id = self._conn.execute(_INSERT, (name, category_id, status)).lastrowid
            assert pet_id is not None
            body = PetRecord(pet_id, name, category_id, status).json()
            self._conn.execute(_ADD_RECORD, (scope, key, idempotency.fingerprint, body, now))
        return Created(status_code=201, body=body, replayed=False)

    def seed_sample(self) -> int:
        """Insert :data:`SAMPLE_PETS` when there are no pets; returns how many were inserted."""
        with self._lock, self._transaction():
            if self._conn.execute("SELECT 1 FROM pets LIMIT 1").fetchone() is not None:
                return 0
            self._conn.executemany("INSERT INTO pets VALUES (?, ?, ?, ?)", SAMPLE_PETS)
        return len(SAMPLE_PETS)

    def reset(self) -> None:
        """Delete every pet and idempotency record."""
        with self._lock, self._transaction():
            self._conn.execute("DELETE FROM pets")
            self._conn.execute("DELETE FROM idempotency")

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        """``BEGIN IMMEDIATE`` ... ``COMMIT``; ``ROLLBACK`` on any exception."""
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        self._conn.execute("COMMIT")

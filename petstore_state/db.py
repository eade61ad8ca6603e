"""One connection to the state database, used from asyncio through a thread of its own.

SQL is written once, with ``?`` placeholders and the types both SQLite and PostgreSQL take (TEXT, BIGINT,
DOUBLE PRECISION, ``INSERT ... ON CONFLICT``, ``RETURNING``); :class:`Transaction` turns the placeholders into
psycopg's. Every :meth:`Database.run` is one transaction: committed when the work returns, rolled back when it
raises. A PostgreSQL connection lost between two runs (a restart of the database) is replaced once, transparently.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol, TypeVar

from petstore_os import private_database
from petstore_os.db_url import parse_db, redact, shown

if TYPE_CHECKING:
    import psycopg

__all__ = ["Database", "Dialect", "StateError", "Transaction", "open_database", "parse_state_url"]

Dialect = Literal["sqlite", "postgresql"]
T = TypeVar("T")
Row = tuple[object, ...]
#: Seconds SQLite waits for another process's write lock before it gives up.
_SQLITE_BUSY_MS = 5000


class StateError(Exception):
    """The state database cannot be opened or used; the message says which and why, never a password."""


class _Cursor(Protocol):
    @property
    def rowcount(self) -> int: ...

    def execute(self, sql: str, params: Sequence[object], /) -> object: ...

    def fetchone(self) -> Row | None: ...

    def fetchall(self) -> list[Row]: ...


class Transaction:
    """The statements of one :meth:`Database.run`, on the database's thread."""

    def __init__(self, cursor: _Cursor, dialect: Dialect) -> None:
        self._cursor = cursor
        self.dialect: Dialect = dialect

    def execute(self, sql: str, params: Sequence[object] = ()) -> int:
        """Run one statement; returns the number of rows it changed."""
        self._cursor.execute(self._sql(sql), params)
        return self._cursor.rowcount

    def one(self, sql: str, params: Sequence[object] = ()) -> Row | None:
        """The first row of a query (or of an ``INSERT ... RETURNING``), None when there is none."""
        self._cursor.execute(self._sql(sql), params)
        return self._cursor.fetchone()

    def all(self, sql: str, params: Sequence[object] = ()) -> list[Row]:
        self._cursor.execute(self._sql(sql), params)
        return self._cursor.fetchall()

    def _sql(self, sql: str) -> str:
        return sql if self.dialect == "sqlite" else sql.replace("?", "%s")


class Database:
    """A state database (see the module docstring). Open with :func:`open_database`; close when done."""

    def __init__(self, *, dialect: Dialect, connect: Callable[[], object], where: str) -> None:
        self.dialect: Dialect = dialect
        #: Where the state is, for messages and logs (a path, or the PostgreSQL URL without its password).
        self.where = where
        self._connect = connect
        self._connection: object | None = None
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="petstore-state")
        self._schemas: set[str] = set()
        self._lock = threading.Lock()

    async def run(self, work: Callable[[Transaction], T]) -> T:
        """Run ``work`` in one transaction on the database's thread; raises StateError when the database fails."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._thread, self.run_sync, work)

    def run_sync(self, work: Callable[[Transaction], T]) -> T:
        """:meth:`run` for code without an event loop (a terminal command); blocks the calling thread."""
        with self._lock:
            try:
                return self._attempt(work)
            except _Stale:
                self._drop()
                return self._attempt(work)

    def ensure_schema(self, name: str, statements: Sequence[str], *, upgrades: Sequence[Sequence[str]] = ()) -> None:
        """Bring a module's tables to their newest version once per process; safe to race.

        ``statements`` make version 1 (``CREATE TABLE IF NOT EXISTS ...``), each of ``upgrades`` the next one
        (``ALTER TABLE ...``). ``state_schemas(name, version)`` records how far each module's tables are; the
        versions after the recorded one run and the last is recorded in one transaction, so a database is at one
        version or the next, never between. A database newer than this program is refused in one line. A database
        made before versions were recorded is version 0 (version 1 is idempotent). Where the recorded version is
        the newest nothing is created or altered: a terminal whose PostgreSQL role does not own the tables opens
        the state the bots made."""
        if name not in self._schemas:
            versions = [statements, *upgrades]
            self.run_sync(lambda tx: _upgrade(tx, name=name, versions=versions, where=self.where))
            self._schemas.add(name)

    def close(self) -> None:
        with self._lock:
            self._drop()
        self._thread.shutdown(wait=True)

    def _attempt(self, work: Callable[[Transaction], T]) -> T:
        connection = self._open()
        if self.dialect == "sqlite":
            return _sqlite_transaction(connection, work)  # type: ignore[arg-type]
        return _pg_transaction(connection, work)  # type: ignore[arg-type]

    def _open(self) -> object:
        if self._connection is None:
            self._connection = self._connect()
        return self._connection

    def _drop(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            try:
                connection.close()  # type: ignore[attr-defined]
            except Exception:  # noqa: BLE001 - a broken connection may fail to close; it is dropped either way
                pass


#: The advisory lock key that serialises schema upgrades in PostgreSQL ("petstore" in ASCII, as a bigint).
_SCHEMA_LOCK = 0x7065747374_6F7265


class _Stale(Exception):
    """The PostgreSQL connection broke before the transaction did anything: open a new one and try again."""


def _sqlite_transaction(connection: sqlite3.Connection, work: Callable[[Transaction], T]) -> T:
    try:
        with connection:  # commit on return, roll back on raise
            connection.execute("BEGIN IMMEDIATE")
            return work(Transaction(connection.cursor(), "sqlite"))
    except sqlite3.Error as exc:
        raise StateError(f"the bot's state database failed: {exc}") from None


def _pg_transaction(connection: psycopg.Connection[Row], work: Callable[[Transaction], T]) -> T:
    import psycopg

    if connection.closed or connection.broken:
        raise _Stale
    try:
        with connection.transaction(), connection.cursor() as cursor:
            return work(Transaction(cursor, "postgresql"))
    except psycopg.OperationalError as exc:
        if connection.broken:
            raise _Stale from exc
        raise StateError(f"the bot's state database failed: {exc}") from None
    except psycopg.Error as exc:
        raise StateError(f"the bot's state database failed: {exc}") from None


def parse_state_url(value: str | None, *, state_dir: Path) -> tuple[Dialect, str]:
    """``(dialect, target)`` for a ``[bot] state`` value: unset means ``state_dir/state.sqlite3``; otherwise a
    database URL (:func:`petstore_os.db_url.parse_db`, no bare path), a ValueError saying what is allowed."""
    if value is None or not value.strip():
        return "sqlite", str(state_dir / "state.sqlite3")
    target = parse_db(value.strip(), paths=False)
    return target.backend, target.location  # sqlite:///relative/path, sqlite:////absolute/path


def open_database(value: str | None, *, state_dir: Path) -> Database:
    """The database ``value`` names (see :func:`parse_state_url`), connected now so a bad one fails at start-up."""
    try:
        dialect, target = parse_state_url(value, state_dir=state_dir)
    except ValueError as exc:
        raise StateError(f"[bot] state: {exc}") from None
    if dialect == "sqlite":
        database = Database(dialect="sqlite", connect=lambda: _connect_sqlite(Path(target)), where=target)
    else:
        database = Database(dialect="postgresql", connect=lambda: _connect_pg(target), where=shown(target))
    database.run_sync(lambda tx: tx.one("SELECT 1"))
    return database


def _connect_sqlite(path: Path) -> sqlite3.Connection:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        private_database(path)  # 0600 (it holds who asked for what), no descriptor of it closed: SQLite's locks hold
        connection = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        connection.execute(f"PRAGMA busy_timeout = {_SQLITE_BUSY_MS}")
        connection.execute("PRAGMA journal_mode = WAL")
    except (OSError, sqlite3.Error) as exc:
        raise StateError(f"cannot open the bot's state {path}: {exc}") from None
    return connection


def _connect_pg(url: str) -> object:
    try:
        import psycopg
    except ImportError:
        raise StateError("[bot] state names PostgreSQL: install petstore[postgres]") from None
    try:
        return psycopg.connect(url, connect_timeout=5)
    except psycopg.Error as exc:
        raise StateError(redact(f"cannot connect to the bot's state at {shown(url)}: {_one_line(exc)}", url)) from None


def _upgrade(tx: Transaction, *, name: str, versions: Sequence[Sequence[str]], where: str) -> None:
    """Bring ``name``'s tables to ``len(versions)`` (see :meth:`Database.ensure_schema`)."""
    newest = len(versions)
    if _recorded(tx, name) == newest:
        return
    if tx.dialect == "postgresql":  # replicas upgrading at once: one at a time, the others then find it done
        tx.execute("SELECT pg_advisory_xact_lock(?)", (_SCHEMA_LOCK,))
    tx.execute("CREATE TABLE IF NOT EXISTS state_schemas (name TEXT PRIMARY KEY, version BIGINT NOT NULL)")
    current = _recorded(tx, name) or 0
    if current > newest:
        raise StateError(
            f"the bot's state at {where} has {name} tables of version {current}, newer than this petstore knows "
            f"({newest}): upgrade petstore, or point [bot] state at another database"
        )
    for statements in versions[current:]:
        for statement in statements:
            tx.execute(statement)
    tx.execute(
        "INSERT INTO state_schemas (name, version) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET version = ?",
        (name, newest, newest),
    )


def _recorded(tx: Transaction, name: str) -> int | None:
    """The version ``state_schemas`` records for ``name``; None when it records none (or has no table yet)."""
    if tx.dialect == "postgresql":
        exists = tx.one("SELECT to_regclass('state_schemas') IS NOT NULL")
    else:
        exists = tx.one("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'state_schemas'")
    if exists is None or not exists[0]:
        return None
    row = tx.one("SELECT version FROM state_schemas WHERE name = ?", (name,))
    return None if row is None else int(str(row[0]))


def _one_line(exc: BaseException) -> str:
    """What ``exc`` says, on one line (libpq's messages span several)."""
    return " ".join(str(exc).split())

"""The state database: one SQL dialect on SQLite and PostgreSQL, transactions, private files, clear errors."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from pg_support import throwaway_cluster

from petstore_state import Database, StateError, Transaction, open_database, parse_state_url

_TABLE = ["CREATE TABLE IF NOT EXISTS notes (id TEXT PRIMARY KEY, body TEXT NOT NULL, n BIGINT NOT NULL)"]


def _put(tx: Transaction, key: str, n: int) -> None:
    tx.execute(
        "INSERT INTO notes (id, body, n) VALUES (?, ?, ?) ON CONFLICT (id) DO UPDATE SET n = excluded.n",
        (key, f"note {key}", n),
    )


async def test_writes_are_read_back_and_upserts_replace(database: Database) -> None:
    database.ensure_schema("notes", _TABLE)
    await database.run(lambda tx: _put(tx, "a", 1))
    await database.run(lambda tx: _put(tx, "a", 2))
    rows = await database.run(lambda tx: tx.all("SELECT id, n FROM notes"))
    assert rows == [("a", 2)]


async def test_a_failed_transaction_leaves_nothing(database: Database) -> None:
    database.ensure_schema("notes", _TABLE)

    def half(tx: Transaction) -> None:
        _put(tx, "b", 1)
        raise RuntimeError("the work failed midway")

    with pytest.raises(RuntimeError):
        await database.run(half)
    assert await database.run(lambda tx: tx.one("SELECT count(*) FROM notes")) == (0,)


async def test_returning_gives_the_row_written(database: Database) -> None:
    database.ensure_schema("notes", _TABLE)
    row = await database.run(lambda tx: tx.one("INSERT INTO notes VALUES (?, ?, ?) RETURNING n", ("c", "x", 7)))
    assert row == (7,)


async def test_a_bad_statement_is_a_state_error(database: Database) -> None:
    with pytest.raises(StateError, match="state database failed"):
        await database.run(lambda tx: tx.execute("SELECT * FROM no_such_table"))


def test_the_sqlite_file_is_private(tmp_path: Path) -> None:
    db = open_database(None, state_dir=tmp_path / "state")
    db.close()
    assert stat.S_IMODE((tmp_path / "state" / "state.sqlite3").stat().st_mode) == 0o600


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, ("sqlite", "/d/state.sqlite3")),
        ("sqlite:////var/x.db", ("sqlite", "/var/x.db")),
        ("sqlite:///rel/x.db", ("sqlite", "rel/x.db")),
        ("postgresql://u@h/db", ("postgresql", "postgresql://u@h/db")),
    ],
)
def test_state_values(value: str | None, expected: tuple[str, str]) -> None:
    assert parse_state_url(value, state_dir=Path("/d")) == expected


def test_an_unknown_state_value_says_what_is_allowed(tmp_path: Path) -> None:
    with pytest.raises(StateError, match=r"sqlite:///PATH or postgresql://"):
        open_database("redis://localhost", state_dir=tmp_path)


def test_a_password_never_shows_in_an_error(tmp_path: Path) -> None:
    with pytest.raises(StateError) as caught:
        open_database("postgresql://bot:hunter2@127.0.0.1:1/state", state_dir=tmp_path)
    assert "hunter2" not in str(caught.value)
    assert "***" in str(caught.value)


def test_a_postgresql_restart_costs_no_run(tmp_path: Path) -> None:
    """A connection broken by a restart of the database is replaced on the next run (a throwaway cluster)."""
    with throwaway_cluster() as cluster:
        db = open_database(cluster.server.url(), state_dir=tmp_path)
        try:
            db.ensure_schema("notes", _TABLE)
            db.run_sync(lambda tx: _put(tx, "d", 1))
            cluster.stop()
            cluster.start()
            assert db.run_sync(lambda tx: tx.one("SELECT n FROM notes")) == (1,)
        finally:
            db.close()

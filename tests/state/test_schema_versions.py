"""The state's tables are versioned: upgraded on start in one transaction, refused when newer than the program.

Real databases: a SQLite file and a PostgreSQL database of each test's own (the ``database`` fixture). Every store
module declares its tables as ``_SCHEMA`` (version 1) and its later versions as ``_UPGRADES``; the test builds a
database as each earlier version left it and opens it with the program as it is.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

import pytest

from petstore_state import (
    Database,
    StateError,
    Transaction,
    claims,
    conversations,
    lease,
    open_database,
    pending,
    schedules,
    watches,
)

V1 = ["CREATE TABLE IF NOT EXISTS notes (id TEXT PRIMARY KEY, body TEXT NOT NULL)"]
V2 = ["ALTER TABLE notes ADD COLUMN n BIGINT NOT NULL DEFAULT 7"]
V3 = ["CREATE TABLE IF NOT EXISTS notes_more (id TEXT PRIMARY KEY)"]


def _tables(tx: Transaction) -> set[str]:
    if tx.dialect == "sqlite":
        rows = tx.all("SELECT name FROM sqlite_master WHERE type = 'table'")
    else:
        rows = tx.all("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")
    return {str(row[0]) for row in rows}


def _version(tx: Transaction, name: str) -> int:
    row = tx.one("SELECT version FROM state_schemas WHERE name = ?", (name,))
    assert row is not None
    return int(str(row[0]))


def test_an_upgrade_keeps_the_rows_and_records_the_version(database: Database, state_url: str, tmp_path: Path) -> None:
    database.ensure_schema("notes", V1)
    database.run_sync(lambda tx: tx.execute("INSERT INTO notes (id, body) VALUES ('a', 'kept')"))
    later = open_database(state_url, state_dir=tmp_path)  # the next release of the program
    later.ensure_schema("notes", V1, upgrades=[V2])
    assert later.run_sync(lambda tx: tx.all("SELECT id, body, n FROM notes")) == [("a", "kept", 7)]
    assert later.run_sync(lambda tx: _version(tx, "notes")) == 2
    later.close()


def test_a_database_made_before_versions_were_recorded_is_version_zero(database: Database) -> None:
    database.run_sync(lambda tx: tx.execute(V1[0]))  # the tables as a release before versions made them
    database.run_sync(lambda tx: tx.execute("INSERT INTO notes (id, body) VALUES ('old', 'row')"))
    database.ensure_schema("notes", V1, upgrades=[V2, V3])
    assert database.run_sync(lambda tx: tx.all("SELECT id, n FROM notes")) == [("old", 7)]
    assert database.run_sync(lambda tx: (_version(tx, "notes"), "notes_more" in _tables(tx))) == (3, True)


def test_a_newer_database_is_refused_in_one_line_and_left_as_it_is(
    database: Database, state_url: str, tmp_path: Path
) -> None:
    database.ensure_schema("notes", V1, upgrades=[V2, V3])
    older = open_database(state_url, state_dir=tmp_path)  # an older program on the same state
    with pytest.raises(StateError) as refused:
        older.ensure_schema("notes", V1)
    message = str(refused.value)
    assert "\n" not in message
    assert "notes tables of version 3, newer than this petstore knows (1): upgrade petstore" in message
    assert older.run_sync(lambda tx: _version(tx, "notes")) == 3
    older.close()


def test_a_failed_upgrade_leaves_the_database_at_its_version(database: Database) -> None:
    database.ensure_schema("notes", V1)
    with pytest.raises(StateError):
        database.ensure_schema("notes2", V1, upgrades=[V3, ["ALTER TABLE no_such_table ADD COLUMN x TEXT"]])
    assert database.run_sync(lambda tx: ("notes_more" in _tables(tx), _version(tx, "notes"))) == (False, 1)


STORES: dict[str, ModuleType] = {
    "pending": pending,
    "watches": watches,
    "schedules": schedules,
    "lease": lease,
    "lease_claims": claims,
    "conversations": conversations,
}


def _versions(module: ModuleType) -> list[Sequence[str]]:
    return [module._SCHEMA, *getattr(module, "_UPGRADES", ())]


@pytest.mark.parametrize("name", sorted(STORES))
def test_every_store_opens_a_database_made_by_each_earlier_version(name: str, state_url: str, tmp_path: Path) -> None:
    versions = _versions(STORES[name])
    for made in range(len(versions)):  # 0: the tables as a release before versions made them (version 1's)
        db = open_database(state_url, state_dir=tmp_path / f"v{made}")
        if made:
            db.ensure_schema(name, versions[0], upgrades=versions[1:made])
        else:
            db.run_sync(lambda tx: [tx.execute(statement) for statement in versions[0]])
        db.ensure_schema(name, versions[0], upgrades=versions[1:])
        assert db.run_sync(lambda tx: _version(tx, name)) == len(versions)
        db.run_sync(lambda tx: tx.execute("DELETE FROM state_schemas"))  # the next round starts from scratch
        db.run_sync(lambda tx: [tx.execute(f"DROP TABLE {t}") for t in sorted(_tables(tx) - {"state_schemas"})])
        db.close()

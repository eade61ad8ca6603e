"""The bots' state database on both backends: SQLite in a temp dir, and a real PostgreSQL database per test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pg_support import database_url, start_pg_server

from petstore_state import Database, open_database


@pytest.fixture(params=["sqlite", "postgresql"])
def state_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A ``[bot] state`` value: ``sqlite:///...`` in the test's dir, or a PostgreSQL database of the test's own."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'state.sqlite3'}"
        return
    with start_pg_server() as server, database_url(server) as url:
        yield url


@pytest.fixture
def database(state_url: str, tmp_path: Path) -> Iterator[Database]:
    db = open_database(state_url, state_dir=tmp_path)
    yield db
    db.close()

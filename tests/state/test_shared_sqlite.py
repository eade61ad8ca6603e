"""Several processes on one SQLite state file (bots with a lease, terminals, the real ``petstore``) keep it whole.

Opening a second connection to the state in one process (the bot's lease beside its database) must not drop the
first one's locks: a process that had closed a descriptor of the file lost them, and another process closing the
database then took it for the last and deleted the WAL under it (``database disk image is malformed``, requests
read back with another's content). The long run is ``bench/state_soak.py``.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from petstore_state import open_database
from petstore_state.lease import open_lease
from state import state_hammer

pytestmark = pytest.mark.slow

#: Seconds the processes share the file: every run of the old code failed well within it.
SECONDS = 20.0


def _close_from_another_process(path: Path) -> None:
    """Another process opens the database, reads, and closes it: as the last connection, SQLite deletes the WAL."""
    script = "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute('SELECT count(*) FROM t'); c.close()"
    subprocess.run([sys.executable, "-c", script, str(path)], check=True, timeout=30)


def test_a_second_connection_in_the_process_keeps_the_first_ones_locks(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite3"
    database = open_database(f"sqlite:///{path}", state_dir=tmp_path)
    database.ensure_schema("t", ["CREATE TABLE IF NOT EXISTS t (n INTEGER)"])
    database.run_sync(lambda tx: tx.execute("INSERT INTO t (n) VALUES (1)"))
    lease = open_lease(f"sqlite:///{path}", state_dir=tmp_path, name="bot")  # a second connection, as the bot's
    try:
        _close_from_another_process(path)
        assert (tmp_path / "state.sqlite3-wal").exists()  # this process still holds the database: not the last
        database.run_sync(lambda tx: tx.execute("INSERT INTO t (n) VALUES (2)"))
    finally:
        lease.close()
        database.close()
    with sqlite3.connect(path) as connection:
        assert connection.execute("SELECT n FROM t ORDER BY n").fetchall() == [(1,), (2,)]
        assert connection.execute("PRAGMA integrity_check").fetchall() == [("ok",)]


def test_bots_terminals_and_petstore_on_one_file_lose_nothing(tmp_path: Path) -> None:
    run = state_hammer.hammer(tmp_path, seconds=SECONDS)
    assert (state_hammer.problems(tmp_path, run), run.failures) == ([], [])
    assert len(run.rows) > 100 and len({writer for writer, _ in run.rows}) == 4  # every worker wrote
    assert run.requests  # and the real petstore asked for approvals

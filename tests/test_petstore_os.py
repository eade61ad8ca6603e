"""petstore_os: the one place that makes files private (0600) and reads files of secrets.

The faces and the service use it (their own tests show each file); here its rules, in-process.
"""

from __future__ import annotations

import fcntl
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from petstore_os import open_private, private_database, read_secret_lines, tighten


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_new_file_is_0600_whatever_the_umask(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    previous = os.umask(0)
    try:
        os.close(open_private(tmp_path / "audit"))
    finally:
        os.umask(previous)
    assert mode(tmp_path / "audit") == 0o600
    assert capsys.readouterr().err == ""  # nothing to say about a file it made itself


def test_an_open_file_is_tightened_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "history"
    path.write_text("+/list\n")
    path.chmod(0o644)
    fd = open_private(path)
    os.write(fd, b"+/get 1\n")
    os.close(fd)
    assert mode(path) == 0o600 and path.read_text() == "+/list\n+/get 1\n"
    assert capsys.readouterr().err == f"petstore: warning: tightened {path} to 0600 (it was 0644)\n"
    os.close(open_private(path))
    assert capsys.readouterr().err == ""  # once tight, nothing more is said


def test_tighten_says_nothing_of_a_missing_or_private_file(tmp_path: Path) -> None:
    said: list[str] = []
    assert tighten(tmp_path / "missing", warn=said.append) is False
    (tmp_path / "db").write_bytes(b"")
    (tmp_path / "db").chmod(0o600)
    assert tighten(tmp_path / "db", warn=said.append) is True
    (tmp_path / "db-wal").write_bytes(b"")
    (tmp_path / "db-wal").chmod(0o660)
    tighten(tmp_path / "db-wal", warn=said.append)
    assert said == [f"tightened {tmp_path / 'db-wal'} to 0600 (it was 0660)"] and mode(tmp_path / "db-wal") == 0o600


def test_exclusive_creation_refuses_an_existing_file(tmp_path: Path) -> None:
    (tmp_path / "key").write_text("kept\n")
    with pytest.raises(FileExistsError):
        open_private(tmp_path / "key", os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    assert (tmp_path / "key").read_text() == "kept\n"


def test_secret_lines_skip_comments_and_blanks(tmp_path: Path) -> None:
    path = tmp_path / "keys"
    path.write_text("# alice\nsk-alice\n\n   \n  sk-bob  \n#sk-old\n")
    path.chmod(0o640)
    said: list[str] = []
    assert read_secret_lines(path, warn=said.append) == [(2, "sk-alice"), (5, "sk-bob")]
    assert said == [f"tightened {path} to 0600 (it was 0640)"]
    with pytest.raises(FileNotFoundError):
        read_secret_lines(tmp_path / "nothing")


def _locked_by_another(path: Path) -> bool:
    """Whether another process is refused an exclusive POSIX lock on ``path`` (this one holds a lock on it)."""
    script = (
        "import fcntl, os, sys\nfd = os.open(sys.argv[1], os.O_RDWR)\n"
        "try:\n    fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)\nexcept OSError:\n    sys.exit(3)\n"
    )
    return subprocess.run([sys.executable, "-c", script, str(path)], timeout=30).returncode == 3


def test_a_database_is_created_0600_and_an_existing_one_never_opened(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite3"
    previous = os.umask(0)
    try:
        private_database(path)
    finally:
        os.umask(previous)
    assert mode(path) == 0o600 and path.read_bytes() == b""
    fd = os.open(path, os.O_RDWR)  # a lock this process holds on it, as SQLite's connections do
    fcntl.lockf(fd, fcntl.LOCK_SH)
    try:
        private_database(path)  # a descriptor of it closed here would drop the lock
        assert _locked_by_another(path)
    finally:
        os.close(fd)
    assert not _locked_by_another(path)


def test_a_database_its_wal_and_shm_are_tightened(tmp_path: Path) -> None:
    said: list[str] = []
    for name in ("db", "db-wal", "db-shm"):
        (tmp_path / name).write_bytes(b"")
        (tmp_path / name).chmod(0o644)
    private_database(tmp_path / "db", warn=said.append)
    assert [mode(tmp_path / name) for name in ("db", "db-wal", "db-shm")] == [0o600] * 3
    assert said == [f"tightened {tmp_path / name} to 0600 (it was 0644)" for name in ("db", "db-wal", "db-shm")]

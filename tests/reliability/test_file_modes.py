"""Files that hold data or secrets are 0600, whatever the umask: the sandbox (database, WAL, -shm, key), the audit
log, the service's database; one an older petstore left open to others is tightened, with one line each.

Every process runs with umask 022 (what most systems have), so a file created the ordinary way would be 0644.
"""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from .support import CANARY, ROOT, clean_env, petstore, read_until

pytestmark = pytest.mark.slow
SIDE_FILES = ("sandbox.db", "sandbox.db-wal", "sandbox.db-shm", "api-key")


def modes(*paths: Path) -> dict[str, str]:
    return {path.name: f"{stat.S_IMODE(path.stat().st_mode):04o}" for path in paths}


@contextmanager
def started(args: list[str], env: dict[str, str]) -> Iterator[subprocess.Popen[str]]:
    """``python -m petstore_cli ARGS`` with umask 022, stdin and stdout piped; killed (SIGKILL) if still up."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "petstore_cli", *args],
        cwd=ROOT,
        env={**env, "PYTHONUNBUFFERED": "1"},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        umask=0o022,
    )
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


@contextmanager
def chat_that_added_a_pet(tmp_path: Path, audit: Path) -> Iterator[subprocess.Popen[str]]:
    """Piped ``petstore chat`` on a fresh sandbox, once its ``/add`` is done (the WAL and -shm exist then)."""
    with started(["--audit-log", str(audit), "chat"], clean_env(tmp_path)) as chat:
        assert chat.stdin is not None
        chat.stdin.write("/add Rex --category 1\n")
        chat.stdin.flush()
        read_until(chat, "Added pet 13")
        yield chat


def test_a_fresh_sandbox_and_its_audit_are_private(tmp_path: Path) -> None:
    sandbox = tmp_path / "data" / "petstore" / "sandbox"
    audit = tmp_path / "audit.ndjson"
    with chat_that_added_a_pet(tmp_path, audit) as chat:
        held = modes(*(sandbox / name for name in SIDE_FILES), audit)
        assert chat.stdin is not None
        chat.stdin.close()
        assert chat.wait(timeout=30) == 0
    assert held == dict.fromkeys([*SIDE_FILES, audit.name], "0600")


def test_files_left_open_by_an_older_petstore_are_tightened_with_one_line_each(tmp_path: Path) -> None:
    env = clean_env(tmp_path)
    sandbox = tmp_path / "data" / "petstore" / "sandbox"
    audit = tmp_path / "audit.ndjson"
    with chat_that_added_a_pet(tmp_path, audit) as chat:
        chat.send_signal(signal.SIGKILL)  # as a crash would: the WAL and -shm stay behind
        chat.wait(timeout=30)
    loose = [sandbox / name for name in SIDE_FILES] + [audit]
    for path in loose:
        path.chmod(0o644)
    ran = petstore(tmp_path, "--audit-log", str(audit), "run", "-c", "/add Max --category 2", env=env)
    assert ran.code == 0 and "Added pet 14" in ran.out  # the crash lost nothing: pet 13 was committed
    assert sorted(ran.err.splitlines()) == sorted(
        f"petstore: warning: tightened {path} to 0600 (it was 0644)" for path in loose
    )
    assert modes(sandbox / "sandbox.db", sandbox / "api-key", audit) == dict.fromkeys(
        ["sandbox.db", "api-key", audit.name], "0600"
    )
    again = petstore(tmp_path, "--audit-log", str(audit), "run", "-c", "/list", env=env)
    assert again.code == 0 and again.err == ""  # said once


def test_the_services_database_wal_and_shm_are_private(tmp_path: Path) -> None:
    db = tmp_path / "pets.db"
    db.write_bytes(b"")  # left by an older `petstore serve`, open to others
    db.chmod(0o644)
    env = clean_env(tmp_path, PETSTORE_SERVER_API_KEYS=CANARY)
    with started(["serve", "--port", "0", "--db", str(db)], env) as serve:
        url = read_until(serve, r"Serving the Pet Store API at \S+/v1").split(" at ", 1)[1].split()[0]
        headers = {"Authorization": f"Bearer {CANARY}"}
        created = httpx.post(f"{url}/pets", json={"name": "Rex", "categoryId": 1}, headers=headers, timeout=10)
        assert created.status_code == 201
        held = modes(db, Path(f"{db}-wal"), Path(f"{db}-shm"))
        serve.send_signal(signal.SIGTERM)
        _, err = serve.communicate(timeout=30)
    assert held == {"pets.db": "0600", "pets.db-wal": "0600", "pets.db-shm": "0600"}
    said = [line for line in err.splitlines() if not line.startswith("{")]  # not the access lines
    assert said == [f"petstore: warning: tightened {db} to 0600 (it was 0644)"]
    assert serve.returncode == 0 and os.stat(db).st_mode & 0o077 == 0

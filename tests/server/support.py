"""Shared helpers for the service tests: constants, Error assertions, a real server subprocess."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import httpx

KEY = "sk-test-0123456789abcdef"
OTHER_KEY = "sk-test-second-key"
AUTH = {"Authorization": f"Bearer {KEY}"}
BASE = "http://testserver/v1"
REPO = Path(__file__).resolve().parents[2]
ERROR_KEYS = {"code", "message", "status"}


def assert_error(response: httpx.Response, status: int, code: str, *, mentions: str = "") -> dict:
    """The response is exactly an Error body for ``status`` with ``code``."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert set(body) == ERROR_KEYS
    assert body["status"] == status and body["code"] == code
    assert isinstance(body["message"], str) and body["message"]
    assert mentions in body["message"]
    assert "Traceback" not in response.text
    return body


def server_command(db_path: Path | str | None, *args: str) -> list[str]:
    """``python -m petstore_server`` on a free port; no ``--db`` for ``db_path=None`` (PETSTORE_SERVER_DB then)."""
    db = [] if db_path is None else ["--db", str(db_path)]
    return [sys.executable, "-m", "petstore_server", "--port", "0", *db, *args]


@contextmanager
def running_server(
    db_path: Path | str | None, *args: str, env: dict[str, str] | None = None, keys: Sequence[str] = ()
) -> Iterator[tuple[subprocess.Popen, str, list[str]]]:
    """Start the service on a free loopback port; yields (process, base URL, lines printed before it).

    ``keys``: the API keys it accepts, given as ``PETSTORE_SERVER_API_KEYS`` (never on the command line).
    The socket listens before the URL line is printed, so no polling is needed.
    """
    with tempfile.TemporaryDirectory(prefix="petstore-serve-") as logs:
        # stderr (where the access log goes by default) to a file: a pipe nobody reads would fill and stop it.
        err = Path(logs) / "stderr"
        with err.open("w") as writer:
            proc = subprocess.Popen(
                server_command(db_path, *args),
                cwd=REPO,
                stdout=subprocess.PIPE,
                stderr=writer,
                text=True,
                env={**os.environ, **({"PETSTORE_SERVER_API_KEYS": ",".join(keys)} if keys else {}), **(env or {})},
            )
        proc.stderr = err.open()  # what the server wrote to stderr so far, then on
        try:
            lines = _read_until_url(proc)
            yield proc, re.search(r"http://\S+", lines[-1]).group(0), lines[:-1]
        finally:
            if proc.poll() is None:
                proc.terminate()
            proc.wait(timeout=20)
            proc.stdout.close()
            proc.stderr.close()


def _read_until_url(proc: subprocess.Popen) -> list[str]:
    lines: list[str] = []
    while not lines or "http://" not in lines[-1]:
        line = proc.stdout.readline()
        if not line:
            raise AssertionError(f"server did not start: {proc.stderr.read()}")
        lines.append(line.rstrip("\n"))
    return lines


def descendants(pid: int) -> set[int]:
    """Every live process under ``pid`` (children, their children...), from /proc."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found

"""The real entry point for subprocess tests: ``petstore`` with a clean environment of its own, and ``petstore
serve`` on an ephemeral loopback port (seeded), stopped by PID at the end."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def clean_env(home: Path, **extra: str) -> dict[str, str]:
    """This environment without petstore's settings or forced colours, config and data under ``home``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PETSTORE_", "NO_COLOR", "FORCE_COLOR"))}
    env |= {"XDG_CONFIG_HOME": str(home / "config"), "XDG_DATA_HOME": str(home / "data")}
    return env | extra


@contextmanager
def serving(db: Path, env: dict[str, str]) -> Iterator[str]:
    """``petstore serve --db DB --seed`` on 127.0.0.1 (port 0) with ``env``; yields its base URL."""
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "petstore_cli",
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--db",
            str(db),
            "--seed",
            "--no-access-log",  # stderr is a pipe read only at the end: access lines would fill it
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        assert "Serving the Pet Store API at " in line, proc.stderr.read() if proc.stderr else line
        yield line.split(" at ", 1)[1].split()[0]
    finally:
        proc.terminate()
        proc.communicate(timeout=30)


@contextmanager
def keyed_service(home: Path, key: str) -> Iterator[str]:
    """``petstore serve`` (seeded) in ``home`` (made if need be), accepting the API key ``key``: its base URL."""
    home.mkdir(parents=True, exist_ok=True)
    with serving(home / "pets.db", clean_env(home, PETSTORE_SERVER_API_KEYS=key)) as url:
        yield url


def run_petstore(*args: str, env: dict[str, str], stdin: str = "") -> subprocess.CompletedProcess[str]:
    """``petstore ARGS`` run to its end (60 s at most), its output captured as text."""
    return subprocess.run(
        [sys.executable, "-m", "petstore_cli", *args],
        cwd=ROOT,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )

"""No core files: every petstore process sets its core-file limit to 0 first thing, and what it starts inherits it.

A core file is the process's memory on disk: the API keys it holds, in the clear, readable by whoever can read the
directory it lands in. The crash tests run the real program with ``ulimit -c unlimited`` in a directory of their own
and crash it with SIGSEGV once it holds a key; the same crash of the same program with the measure taken out leaves a
core holding the key, so the test can tell. They need the kernel to write cores as plain files in the working
directory (``/proc/sys/kernel/core_pattern`` a bare name such as ``core``); a pipe to a crash collector is skipped.
"""

from __future__ import annotations

import mmap
import os
import resource
import select
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from .support import CANARY, clean_env, read_until

pytestmark = pytest.mark.slow
#: The program with its first measure taken out: the control that shows a crash would leave a core.
WITHOUT_THE_MEASURE = (
    "import sys, petstore_os, petstore_cli.main as m; petstore_os.no_core_dumps = lambda: None; "
    "sys.argv[0] = 'petstore'; sys.exit(m.main())"
)


def limits(pid: int) -> tuple[str, str]:
    """The soft and hard core-file size limits of ``pid``, as the kernel shows them."""
    for line in Path(f"/proc/{pid}/limits").read_text().splitlines():
        if line.startswith("Max core file size"):
            soft, hard = line.split()[4:6]
            return soft, hard
    raise AssertionError(f"no core limit for {pid}")


def descendants(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    children = [int(p) for p in path.read_text().split()] if path.exists() else []
    return children + [grandchild for child in children for grandchild in descendants(child)]


@contextmanager
def program(args: list[str], *, cwd: Path, env: dict[str, str], unlimited: bool = False, code: str | None = None):
    """The petstore program (``-m petstore_cli``, or ``-c code``) with ARGS; with ``unlimited``, under
    ``ulimit -c unlimited`` (the shell execs it: same process). Ended by SIGTERM (it stops its workers) if still up."""
    python = [sys.executable, "-c", code] if code else [sys.executable, "-m", "petstore_cli"]
    argv = ["bash", "-c", 'ulimit -c unlimited && exec "$@"', "bash", *python, *args] if unlimited else python + args
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        env={**env, "PYTHONUNBUFFERED": "1"},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.terminate()
        try:
            proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate(timeout=60)


def test_the_service_its_workers_and_the_faces_run_with_no_core_limit(tmp_path: Path) -> None:
    env = clean_env(tmp_path, PETSTORE_SERVER_API_KEYS=CANARY)
    serve = ["serve", "--port", "0", "--db", str(tmp_path / "p.db"), "--workers", "2"]
    with program(serve, cwd=tmp_path, env=env, unlimited=True) as proc:
        read_until(proc, "Serving the Pet Store API")
        deadline = time.monotonic() + 30
        while len(descendants(proc.pid)) < 2 and time.monotonic() < deadline:  # the workers are spawned
            select.select([], [], [], 0.05)
        family = [proc.pid, *descendants(proc.pid)]
        assert len(family) >= 3 and {pid: limits(pid) for pid in family} == dict.fromkeys(family, ("0", "0"))
    token = tmp_path / "token"
    token.write_text("web-token-0123456789abcdefXYZ\n")
    token.chmod(0o600)
    with program(["web", "--port", "0", "--token-file", str(token)], cwd=tmp_path, env=env, unlimited=True) as web:
        read_until(web, r"http://127\.0\.0\.1:\d+")
        assert limits(web.pid) == ("0", "0")


def core_files(directory: Path) -> list[Path]:
    return sorted(p for p in directory.iterdir() if p.name == "core" or p.name.startswith("core."))


@pytest.fixture
def cores_land_here() -> None:
    pattern = Path("/proc/sys/kernel/core_pattern").read_text().strip()
    if pattern.startswith("|") or "/" in pattern:
        pytest.skip(f"the kernel sends cores to {pattern!r}, not to a file in the working directory")
    hard = resource.getrlimit(resource.RLIMIT_CORE)[1]
    if hard != resource.RLIM_INFINITY and os.geteuid() != 0:
        pytest.skip(f"this process's hard core limit is {hard}: `ulimit -c unlimited` cannot be had")


def crash(proc: subprocess.Popen[str]) -> None:
    os.kill(proc.pid, signal.SIGSEGV)
    assert proc.wait(timeout=60) == -signal.SIGSEGV


@pytest.mark.usefixtures("cores_land_here")
@pytest.mark.parametrize(
    ("args", "up"),
    [
        (["serve", "--port", "0", "--db", "p.db"], "Serving the Pet Store API"),  # holds PETSTORE_SERVER_API_KEYS
        (["run", "--base-url", "http://127.0.0.1:9/v1", "-c", "/env", "-c", "/sleep 60"], r"sk-\.\.\."),
    ],
    ids=["serve", "run"],
)
def test_a_crashed_petstore_leaves_no_core_file(tmp_path: Path, args: list[str], up: str) -> None:
    env = clean_env(tmp_path, PETSTORE_SERVER_API_KEYS=CANARY)  # and PETSTORE_API_KEY=CANARY for the client
    with program(args, cwd=tmp_path, env=env, unlimited=True) as proc:
        read_until(proc, up)  # up, with the key in memory
        crash(proc)
    assert core_files(tmp_path) == []


@pytest.mark.usefixtures("cores_land_here")
def test_without_the_measure_the_same_crash_leaves_a_core_holding_the_key(tmp_path: Path) -> None:
    env = clean_env(tmp_path, PETSTORE_SERVER_API_KEYS=CANARY)
    args = ["serve", "--port", "0", "--db", "p.db"]
    with program(args, cwd=tmp_path, env=env, unlimited=True, code=WITHOUT_THE_MEASURE) as proc:
        read_until(proc, "Serving the Pet Store API")
        crash(proc)
    [core] = core_files(tmp_path)
    with core.open("rb") as file, mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as memory:
        assert memory.find(CANARY.encode()) >= 0  # what the measure keeps off the disk
    core.unlink()

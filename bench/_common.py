"""Shared helpers for the benchmarks: servers on loopback, subprocess timers, a hard time bound.

Every server a benchmark starts runs in its own process group on 127.0.0.1 and is
stopped (SIGTERM, then SIGKILL) when its ``with`` block ends, also on errors and
when the time budget (``deadline``) expires.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import re
import select
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
#: The venv whose programs are timed: the project's, or BENCH_VENV (e.g. a lean ``pip install -e .`` without
#: extras, to time what a base install starts with). Servers the benchmarks time against run from the project's.
VENV = Path(os.environ.get("BENCH_VENV") or ROOT / ".venv")
PY = str(VENV / "bin" / "python")
PETSTORE = str(VENV / "bin" / "petstore")
SERVER_PETSTORE = str(ROOT / ".venv" / "bin" / "petstore")
API_KEY = "sk-bench-0123456789abcdef"
AUTH = {"Authorization": f"Bearer {API_KEY}"}
URL_RE = re.compile(rb"(http://127\.0\.0\.1:\d+)")


class BudgetExceeded(Exception):
    """The benchmark ran past its time budget."""


@contextlib.contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Raise BudgetExceeded after ``seconds`` (so every ``finally`` still stops its server)."""

    def expired(signum: int, frame: object) -> None:
        raise BudgetExceeded(f"time budget of {seconds:g} s exceeded")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def clean_env(home: Path, **extra: str) -> dict[str, str]:
    """The environment for product processes: no user config, no stray PETSTORE_* settings."""
    # Bytecode caching on, as on a user's machine (this sandbox sets PYTHONDONTWRITEBYTECODE=1,
    # which would make every start-up recompile the project's own modules).
    env = {k: v for k, v in os.environ.items() if not k.startswith("PETSTORE_") and k != "PYTHONDONTWRITEBYTECODE"}
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / "config"),
        XDG_DATA_HOME=str(home / "data"),
        NO_COLOR="1",
    )
    env.update(extra)
    return env


@contextlib.contextmanager
def scratch() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="petstore-bench-") as tmp:
        yield Path(tmp)


@contextlib.contextmanager
def server(argv: Sequence[str], **options: Any) -> Iterator[str]:
    """Start ``argv``, wait for a line matching ``ready`` (group 1 is yielded), stop it on exit.

    With ``port``, wait instead until 127.0.0.1:port accepts connections and yield its origin.
    The options are :func:`server_process`'s.
    """
    with server_process(argv, **options) as (url, _):
        yield url


@contextlib.contextmanager
def server_process(
    argv: Sequence[str],
    *,
    env: dict[str, str] | None = None,
    ready: re.Pattern[bytes] = URL_RE,
    timeout: float = 60.0,
    cwd: Path | None = None,
    port: int | None = None,
) -> Iterator[tuple[str, int]]:
    """:func:`server`, yielding (URL, PID); the PID leads a process group holding the server's processes (``env``,
    ``cwd``: the server's; ``ready``, ``timeout``, ``port``: how to know it is up)."""
    out = subprocess.PIPE if port is None else subprocess.DEVNULL  # a chatty server must not cost us CPU
    proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=cwd, start_new_session=True)
    try:
        if port is None:
            yield _wait_ready(proc, ready, timeout), proc.pid
        else:
            yield _wait_port(proc, port, timeout), proc.pid
    finally:
        stop(proc)


def group_cpu_seconds(pgid: int) -> float:
    """utime + stime of every live process in process group ``pgid`` (from /proc), in seconds."""
    ticks = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            if int(fields[2]) == pgid:  # after the command's ")": state, ppid, pgrp, ..., utime, stime
                ticks += int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")


def _wait_port(proc: subprocess.Popen[bytes], port: int, timeout: float) -> str:
    end = time.monotonic() + timeout
    while time.monotonic() < end and proc.poll() is None:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
            return f"http://127.0.0.1:{port}"
        time.sleep(0.1)
    raise RuntimeError(f"server {proc.args!r} not listening on port {port} (exit code {proc.poll()})")


def _wait_ready(proc: subprocess.Popen[bytes], ready: re.Pattern[bytes], timeout: float) -> str:
    assert proc.stdout is not None
    end = time.monotonic() + timeout
    seen = b""
    fd = proc.stdout.fileno()
    while time.monotonic() < end:
        readable, _, _ = select.select([fd], [], [], 0.2)
        if readable:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            seen += chunk
            match = ready.search(seen)
            if match:
                _drain(proc)
                return match.group(1).decode()
        elif proc.poll() is not None:
            break
    raise RuntimeError(f"server {proc.args!r} not ready: {seen[-2000:].decode(errors='replace')}")


def _drain(proc: subprocess.Popen[bytes]) -> None:
    """Keep reading the server's output in the background so it never blocks on a full pipe."""
    import threading

    def pump() -> None:
        assert proc.stdout is not None
        with contextlib.suppress(Exception):
            while proc.stdout.read(65536):
                pass

    threading.Thread(target=pump, daemon=True).start()


def stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM the process group we started, then SIGKILL it if it lingers."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
    with contextlib.suppress(ProcessLookupError):  # children left in the group (node workers)
        os.killpg(proc.pid, signal.SIGKILL)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def petstore_server(db: Path, *, seed: bool = True) -> contextlib.AbstractContextManager[str]:
    """``petstore serve`` on a free loopback port; yields the base URL (``.../v1``)."""
    argv = [SERVER_PETSTORE, "serve", "--host", "127.0.0.1", "--port", "0", "--db", str(db)]
    env = clean_env(db.parent, PETSTORE_SERVER_API_KEYS=API_KEY)  # a key never goes on a command line
    return _with_v1(server([*argv, *(["--seed"] if seed else [])], env=env))


@contextlib.contextmanager
def _with_v1(cm: contextlib.AbstractContextManager[str]) -> Iterator[str]:
    with cm as origin:
        yield origin + "/v1"


def timed_run(argv: Sequence[str], *, env: dict[str, str] | None = None, timeout: float = 120.0) -> float:
    """Wall seconds of one subprocess run (stdout discarded); raises when it fails."""
    started = time.perf_counter()
    done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, timeout=timeout)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"{argv!r} exited {done.returncode}: {done.stderr.decode(errors='replace')[-2000:]}")
    return elapsed


def interleaved(
    cases: dict[str, Sequence[str]],
    *,
    reps: int,
    warmup: int = 2,
    env: dict[str, str] | None = None,
    envs: dict[str, dict[str, str]] | None = None,
) -> dict[str, list[float]]:
    """Run each case ``reps`` times, round-robin (so drift hits all alike); seconds per run.
    ``envs``: a case's own environment (else ``env``)."""
    own = envs or {}
    for _ in range(warmup):
        for name, argv in cases.items():
            timed_run(argv, env=own.get(name, env))
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(reps):
        for name, argv in cases.items():
            times[name].append(timed_run(argv, env=own.get(name, env)))
    return times


def trees(specs: Sequence[str]) -> dict[str, Path]:
    """``--tree LABEL=DIR`` options: other source trees of the project (``git archive`` of an earlier commit), timed
    side by side with this one through ``PYTHONPATH`` (same venv, same floors, interleaved)."""
    found = {}
    for spec in specs:
        label, sep, path = spec.partition("=")
        tree = Path(path).resolve()
        if not sep or not label or not (tree / "petstore_cli" / "main.py").is_file():
            raise SystemExit(f"--tree {spec!r}: LABEL=DIR, DIR a source tree of petstore")
        found[label] = tree
    return found


def tree_env(env: dict[str, str], tree: Path | None) -> dict[str, str]:
    """``env`` with ``tree`` first on ``PYTHONPATH`` (ahead of the editable install); ``env`` itself for None."""
    if tree is None:
        return env
    return {**env, "PYTHONPATH": os.pathsep.join(filter(None, [str(tree), env.get("PYTHONPATH", "")]))}


def median_ms(values: Sequence[float]) -> float:
    return statistics.median(values) * 1000


def spread(values: Sequence[float]) -> str:
    """``min..p90`` in ms."""
    ordered = sorted(values)
    p90 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.9))]
    return f"{ordered[0] * 1000:.0f}..{p90 * 1000:.0f}"


def machine() -> dict[str, str]:
    cpu = "unknown"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    python = subprocess.run(
        [PY, "-c", "import sys; print(sys.version.split()[0])"], capture_output=True, text=True
    ).stdout.strip()
    return {"nproc": str(os.cpu_count()), "cpu": cpu, "python": python, "kernel": platform.release()}


def verdict(ok: bool) -> str:
    return "MEETS" if ok else "MISSES"


def report(name: str, rows: list[dict[str, object]]) -> None:
    """Print the rows as a table and save them as JSON in bench/results/<name>.json."""
    out = BENCH / "results"
    out.mkdir(exist_ok=True)
    payload = {
        "machine": machine(),
        "when": time.strftime("%Y-%m-%d %H:%M:%S"),
        "command": " ".join(sys.argv),
        "rows": rows,
    }
    (out / f"{name}.json").write_text(json.dumps(payload, indent=2) + "\n")
    m = payload["machine"]
    print(f"\nmachine: nproc={m['nproc']} cpu={m['cpu']} python={m['python']}")
    for row in rows:
        print("  " + "  ".join(f"{k}={v}" for k, v in row.items()))

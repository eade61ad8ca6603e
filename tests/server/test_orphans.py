"""Workers never outlive their supervisor: after ``kill -9`` of ``petstore serve --workers 2`` every process under it
exits and the port is free again."""

from __future__ import annotations

import os
import select
import signal
import socket
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from .support import AUTH, KEY, descendants, running_server

pytestmark = pytest.mark.slow


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def wait_exit(pid: int, *, timeout: float) -> bool:
    """Wait for ``pid`` (not our child) to exit, on a pidfd; False when it still runs after ``timeout``."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        return bool(select.select([fd], [], [], timeout)[0]) or not alive(pid)
    finally:
        os.close(fd)


def test_workers_exit_when_the_supervisor_is_killed(tmp_path: Path) -> None:
    metrics = tmp_path / "metrics"
    metrics.mkdir()
    env = {"TMPDIR": str(metrics)}  # where the supervisor makes the workers' metrics directory
    with running_server(tmp_path / "p.db", "--workers", "2", keys=[KEY], env=env) as (proc, url, _):
        assert len(list(metrics.iterdir())) == 1
        assert httpx.get(f"{url}/pets", headers=AUTH, timeout=10).status_code == 200
        workers = descendants(proc.pid)
        assert len(workers) >= 2
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        for pid in workers:  # 30 s: a hang guard (they go within 5 s)
            assert wait_exit(pid, timeout=30), f"orphaned worker {pid} still runs"
    parts = urlsplit(url)
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((parts.hostname, parts.port))  # the port is free: a restart can listen on it
    assert not any(alive(pid) for pid in workers) and os.getpid() not in workers
    assert list(metrics.iterdir()) == [], "the workers removed the metrics directory the supervisor left"

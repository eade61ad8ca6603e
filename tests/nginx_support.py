"""A real nginx (Debian's package) for tests, on a free loopback port, from a site file in docs/."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from real_parts import unavailable

__all__ = ["HOSTS_SITE", "running_nginx", "running_nginx_site"]

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "docs" / "nginx-petstore.conf"
HOSTS_SITE = ROOT / "docs" / "nginx-petstore-hosts.conf"

_MAIN = """daemon off;
master_process off;
pid {dir}/nginx.pid;
error_log {dir}/error.log warn;
events {{ worker_connections 256; }}
http {{
    {access_log}
    client_body_temp_path {dir}/body;
    proxy_temp_path {dir}/proxy;
    fastcgi_temp_path {dir}/fastcgi;
    uwsgi_temp_path {dir}/uwsgi;
    scgi_temp_path {dir}/scgi;
    include {dir}/site.conf;
}}
"""


def _nginx() -> str:
    found = shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx",) if os.path.exists(p)), None)
    if found is None:
        message = "nginx is needed for this test: apt-get install -y nginx (.ci/run does)"
        unavailable(message)
    return found


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_listening(port: int, proc: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"nginx exited: {log.read_text() if log.exists() else ''}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.02)  # poll interval, bounded by the deadline
    raise AssertionError("nginx did not listen within 20 s")


@contextmanager
def running_nginx(backend_port: int, workdir: Path) -> Iterator[int]:
    """nginx with the documented site, pointed at ``backend_port``; yields its port. Stopped by PID."""
    site = SITE.read_text().replace("127.0.0.1:8080", f"127.0.0.1:{backend_port}")
    with running_nginx_site(site, workdir) as port:
        yield port


@contextmanager
def running_nginx_site(site: str, workdir: Path, *, log_format: str | None = None) -> Iterator[int]:
    """nginx serving ``site`` (a site file's text; its ``listen 80;`` moved to a free loopback port); yields the
    port. With ``log_format`` (nginx variables), each request is a line of ``workdir/access.log``. Stopped by PID."""
    binary = _nginx()
    port = _free_port()
    (workdir / "site.conf").write_text(site.replace("listen 80;", f"listen 127.0.0.1:{port};"))
    access_log = "access_log off;"
    if log_format is not None:
        access_log = f"log_format tests '{log_format}';\n    access_log {workdir}/access.log tests;"
    (workdir / "nginx.conf").write_text(_MAIN.format(dir=workdir, access_log=access_log))
    proc = subprocess.Popen(
        [binary, "-p", str(workdir), "-c", str(workdir / "nginx.conf")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        _wait_listening(port, proc, workdir / "error.log")
        yield port
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        proc.stderr.close()

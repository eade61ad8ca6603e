"""Several hosts, one database: two ``petstore serve`` hosts behind nginx, one killed mid-load and brought back.

Each host is a network namespace of its own (``netns_support``) whose server listens on the
namespace's address only and reaches the shared PostgreSQL through its unix socket; nginx runs here,
on the host side, with docs/nginx-petstore-hosts.conf as written (only the addresses changed). The
creates go through nginx with the real client, each under an Idempotency-Key of its own, while a
reader pages through nginx; host A is killed (every process in its namespace, by PID, SIGKILL), the
load runs on B, then A is started again and takes requests again.
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import psycopg
import pytest
from netns_support import NetHost, network_hosts
from nginx_support import HOSTS_SITE, running_nginx_site
from pg_support import PgServer

from petstore_api import PetStoreClient
from petstore_api.policy import RetryPolicy
from petstore_server.pg_store import decode_name

from .support import KEY, REPO, _read_until_url

pytestmark = pytest.mark.slow

PORT = 8080
#: nginx's access log: when, what, the final status, and every host tried in turn ("a:8080, b:8080").
LOG_FORMAT = "$request_method $status $upstream_addr"
WRITERS = 6


@contextmanager
def shared_database(server: PgServer) -> Iterator[tuple[str, str]]:
    """A database made for this test, dropped after: (URL over this side's TCP, URL over the unix socket)."""
    name = f"petstore_hosts_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(server.url(), autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
        sockets = conn.execute("SHOW unix_socket_directories").fetchone()[0]
    try:
        socket_dir = sockets.split(",")[0].strip()
        yield (
            f"postgresql://{server.user}@{server.host}:{server.port}/{name}",
            f"postgresql://{server.user}@/{name}?host={socket_dir}&port={server.port}",
        )
    finally:
        with psycopg.connect(server.url(), autocommit=True) as conn:
            conn.execute(f"DROP DATABASE {name} WITH (FORCE)")


def start_host(host: NetHost, db: str, logs: Path, *, workers: int) -> subprocess.Popen[str]:
    """``petstore serve`` inside ``host``'s namespace on its address; returns once it listens."""
    argv = [sys.executable, "-m", "petstore_server", "--host", host.address, "--port", str(PORT)]
    with open(logs / f"{host.namespace}.log", "a") as stderr:  # the server's log, for a failing run
        proc = host.popen(
            [*argv, "--db", db, "--workers", str(workers)],
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=stderr,
            env={**os.environ, "PETSTORE_SERVER_API_KEYS": KEY},
        )
    try:
        _read_until_url(proc)
    except BaseException:
        host.kill_all()
        proc.wait(timeout=20)
        raise
    return proc


def stop_host(host: NetHost, proc: subprocess.Popen[str]) -> None:
    host.kill_all()
    proc.wait(timeout=20)
    assert proc.stdout is not None
    proc.stdout.close()


@dataclass
class Load:
    """Creates through nginx, each under its own key, until ``stop``; ``acked`` maps key -> id of each 201."""

    base: str
    run: str = field(default_factory=lambda: uuid.uuid4().hex[:8])
    acked: dict[str, int] = field(default_factory=dict)
    failed: list[str] = field(default_factory=list)
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    progress: asyncio.Event = field(default_factory=asyncio.Event)
    walks: int = 0

    async def until(self, count: int) -> None:
        """Wait until ``count`` creates have been acknowledged; fail at the first create that failed."""
        while len(self.acked) < count:
            self.progress.clear()
            await self.progress.wait()
            if self.failed:
                raise AssertionError(f"creates failed through nginx: {self.failed[:5]}")

    async def write(self, client: PetStoreClient, writer: int) -> None:
        n = 0
        while not self.stop.is_set():
            key = f"{self.run}-{writer}-{n}"
            n += 1
            try:
                created = await client.create_pet(name=f"hosts {key}", category_id=1, idempotency_key=key)
            except Exception as exc:  # recorded and asserted on: any failure reaching the client is a finding
                self.failed.append(f"{key}: {exc}")
            else:
                self.acked[key] = created.pet.id
            self.progress.set()

    async def read(self, client: PetStoreClient) -> None:
        """Page through every pet, again and again: each walk ascends without a repeat and holds every pet
        acknowledged before it began."""
        while not self.stop.is_set():
            before = set(self.acked.values())
            ids = [pet.id for page in [p async for p in client.iter_pages(limit=50)] for pet in page.pets]
            assert ids == sorted(set(ids)), "a page walk through nginx repeated or reordered pets"
            missing = before - set(ids)
            assert not missing, f"a page walk through nginx skipped acknowledged pets: {sorted(missing)[:10]}"
            self.walks += 1


def upstream_lines(log: Path) -> list[list[str]]:
    """nginx's access log as [method, status, upstream, upstream, ...] per request."""
    lines = log.read_text().splitlines() if log.exists() else []
    return [re.split(r",?\s+", line.strip()) for line in lines]


async def until_served_by(log: Path, address: str, *, after: int, timeout: float = 30.0) -> None:
    """Wait until a request logged after line ``after`` got a 2xx from ``address`` (nginx's log is the event)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for fields in upstream_lines(log)[after:]:
            if fields[1].startswith("2") and fields[-1] == f"{address}:{PORT}":
                return
        await asyncio.sleep(0.05)  # the log file is polled, bounded by the deadline
    raise AssertionError(f"nginx sent no request to {address} within {timeout} s")


async def test_two_hosts_behind_nginx_survive_one_host_dying(pg_server: PgServer, tmp_path: Path) -> None:
    with ExitStack() as stack:
        admin_url, socket_url = stack.enter_context(shared_database(pg_server))
        a, b = stack.enter_context(network_hosts(2))
        procs = {a: start_host(a, socket_url, tmp_path, workers=2), b: start_host(b, socket_url, tmp_path, workers=1)}
        stack.callback(lambda: [stop_host(h, p) for h, p in procs.items()])
        site = HOSTS_SITE.read_text().replace("10.0.0.2:8080", f"{a.address}:{PORT}")
        site = site.replace("10.0.0.6:8080", f"{b.address}:{PORT}")
        (tmp_path / "nginx").mkdir()
        nginx_port = stack.enter_context(running_nginx_site(site, tmp_path / "nginx", log_format=LOG_FORMAT))
        log = tmp_path / "nginx" / "access.log"

        load = Load(base=f"http://127.0.0.1:{nginx_port}/v1")
        retry = RetryPolicy(attempts=4, backoff=0.05, backoff_max=0.5)
        async with PetStoreClient(base_url=load.base, api_key=KEY, retry=retry) as client:
            tasks = [asyncio.create_task(load.write(client, w)) for w in range(WRITERS)]
            tasks.append(asyncio.create_task(load.read(client)))
            try:
                await load.until(60)
                await until_served_by(log, a.address, after=0)
                killed_at = len(upstream_lines(log))  # before the kill: nginx fails over while it happens
                await asyncio.to_thread(a.kill_all)
                procs[a].wait(timeout=20)
                await load.until(len(load.acked) + 120)
                procs[a] = await asyncio.to_thread(start_host, a, socket_url, tmp_path, workers=2)
                restarted_at = len(upstream_lines(log))
                await until_served_by(log, a.address, after=restarted_at)
                await load.until(len(load.acked) + 60)
            finally:
                load.stop.set()
                outcomes = await asyncio.gather(*tasks, return_exceptions=True)
        for outcome in outcomes:
            if isinstance(outcome, BaseException):
                raise outcome
        assert not load.failed, f"creates failed through nginx: {load.failed[:5]}"
        assert load.walks >= 1

        logged = upstream_lines(log)
        after_kill = logged[killed_at:restarted_at]
        # No request failed at nginx (the client's own retries would hide a 502), and nginx failed over: the
        # requests A could not take went on to B within the same request, keyed creates too.
        assert all(f[1].startswith("2") for f in logged), [f for f in logged if not f[1].startswith("2")][:5]
        assert any(len(f) > 3 and f[1].startswith("2") and f[-1] == f"{b.address}:{PORT}" for f in after_kill)

        with psycopg.connect(admin_url) as conn:
            rows = conn.execute("SELECT id, name FROM pets ORDER BY id").fetchall()
        names = [decode_name(name) for _, name in rows]
        by_name = {name: pet_id for pet_id, name in zip((r[0] for r in rows), names, strict=True)}
        assert len(by_name) == len(names), "an Idempotency-Key made two pets"
        lost = {key: pet_id for key, pet_id in load.acked.items() if by_name.get(f"hosts {key}") != pet_id}
        assert not lost, f"acknowledged pets lost or changed: {list(lost.items())[:5]}"

        async with PetStoreClient(base_url=load.base, api_key=KEY) as client:
            walked = [pet.id for page in [p async for p in client.iter_pages(limit=100)] for pet in page.pets]
        assert walked == [r[0] for r in rows]

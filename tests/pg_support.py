"""A PostgreSQL server for tests: the machine's (127.0.0.1:5432), else a throwaway cluster.

Each test gets its own schema (``t_<hex>`` in database ``test`` or ``postgres``), created before
and dropped after; the URL it gets sets ``search_path`` to that schema. Where no server can be had,
``pytest.fail`` under ``CI=true`` and ``pytest.skip`` elsewhere, with the reason.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psycopg
from real_parts import unavailable

__all__ = [
    "Cluster",
    "database_url",
    "PgServer",
    "password_pg_server",
    "pg_unavailable",
    "schema_url",
    "start_pg_server",
    "throwaway_cluster",
]


@dataclass(frozen=True)
class PgServer:
    host: str
    port: int
    user: str
    dbname: str

    def url(self, *, schema: str | None = None) -> str:
        base = f"postgresql://{self.user}@{self.host}:{self.port}/{self.dbname}"
        return base if schema is None else f"{base}?options=-csearch_path%3D{schema}"


def pg_unavailable(reason: str) -> None:
    message = f"PostgreSQL is needed for this test and none could be had: {reason}"
    unavailable(message)


def _answers(server: PgServer) -> bool:
    try:
        with psycopg.connect(server.url(), connect_timeout=3):
            return True
    except psycopg.Error:
        return False


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class Cluster:
    """A throwaway cluster the test may stop and start again (``pg_ctl``); ``server`` is where it answers."""

    server: PgServer
    data: Path
    root: Path
    prefix: list[str]

    def pg_ctl(self, *args: str) -> None:
        options = f"-c listen_addresses=127.0.0.1 -c port={self.server.port} -c unix_socket_directories={self.root}"
        subprocess.run(
            [*self.prefix, "pg_ctl", "-D", str(self.data), "-o", options, "-w", "-l", str(self.root / "log"), *args],
            check=True,
            capture_output=True,
        )

    def stop(self) -> None:
        """Stop it (fast: open connections are closed) and wait until it is down."""
        self.pg_ctl("-m", "fast", "stop")

    def start(self) -> None:
        """Start it and wait until it accepts connections."""
        self.pg_ctl("start")


@contextmanager
def throwaway_cluster(*, password: str | None = None) -> Iterator[Cluster]:
    """initdb + pg_ctl in a temp dir on a free loopback port (as user postgres when run as root), stopped at the end.

    With ``password``: user postgres has it and every connection must give it (scram-sha-256), else trust.
    """
    if not (shutil.which("initdb") and shutil.which("pg_ctl")):
        pg_unavailable("initdb/pg_ctl are not on PATH")
    root = Path(tempfile.mkdtemp(prefix="petstore-pg-"))
    prefix: list[str] = []
    if os.geteuid() == 0:
        shutil.chown(root, "postgres")
        prefix = ["runuser", "-u", "postgres", "--"]
    auth = ["--auth=trust"]
    if password is not None:
        (root / "pw").write_text(password + "\n")
        auth = ["--auth=scram-sha-256", f"--pwfile={root / 'pw'}"]
    cluster = Cluster(PgServer("127.0.0.1", _free_port(), "postgres", "postgres"), root / "data", root, prefix)
    try:
        subprocess.run(
            [*prefix, "initdb", "-D", str(cluster.data), "-U", "postgres", *auth], check=True, capture_output=True
        )
        cluster.start()
    except (OSError, subprocess.CalledProcessError) as exc:
        shutil.rmtree(root, ignore_errors=True)
        pg_unavailable(f"a throwaway cluster did not start: {exc}")
    try:
        yield cluster
    finally:
        subprocess.run(
            [*prefix, "pg_ctl", "-D", str(cluster.data), "-m", "immediate", "-w", "stop"], capture_output=True
        )
        shutil.rmtree(root, ignore_errors=True)


@contextmanager
def _throwaway_server(*, password: str | None = None) -> Iterator[PgServer]:
    with throwaway_cluster(password=password) as cluster:
        yield cluster.server


@contextmanager
def start_pg_server() -> Iterator[PgServer]:
    for dbname in ("test", "postgres"):
        local = PgServer("127.0.0.1", 5432, "postgres", dbname)
        if _answers(local):
            yield local
            return
    with _throwaway_server() as server:
        yield server


@contextmanager
def password_pg_server(password: str) -> Iterator[PgServer]:
    """A throwaway cluster whose user postgres must give ``password`` (scram-sha-256); its URL has none."""
    with _throwaway_server(password=password) as server:
        yield server


@contextmanager
def schema_url(server: PgServer) -> Iterator[str]:
    """A URL whose connections work in a fresh schema, dropped (with everything in it) afterwards."""
    schema = f"t_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(server.url(), autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    try:
        yield server.url(schema=schema)
    finally:
        with psycopg.connect(server.url(), autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


@contextmanager
def database_url(server: PgServer) -> Iterator[str]:
    """A URL of a database of its own, created now and dropped (its connections ended first) afterwards."""
    name = f"t_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(server.url(), autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    try:
        yield f"postgresql://{server.user}@{server.host}:{server.port}/{name}"
    finally:
        with psycopg.connect(server.url(), autocommit=True) as conn:
            conn.execute(f"DROP DATABASE {name} WITH (FORCE)")


class SyncPgPets:
    """What tests do through ``PetStore`` (add pets behind the service's back), on PostgreSQL."""

    def __init__(self, url: str) -> None:
        self._conn = psycopg.connect(url, autocommit=True)

    def create_pet(self, *, name: str, category_id: int, status: str | None = None) -> dict:
        from petstore_server.pg_store import encode_name

        row = self._conn.execute(
            "INSERT INTO pets (name, category_id, status) VALUES (%s, %s, %s) RETURNING id",
            (encode_name(name), category_id, status),
        ).fetchone()
        pet = {"id": row[0], "name": name, "categoryId": category_id}
        return pet if status is None else {**pet, "status": status}

    def close(self) -> None:
        self._conn.close()

"""`petstore serve`: the service on uvicorn, until Ctrl-C (or SIGTERM).

SIGTERM and Ctrl-C shut down gracefully: the socket stops accepting, requests in flight
finish (up to ``graceful_timeout`` seconds), then the store closes. With ``workers > 1``
uvicorn's supervisor runs that many processes on one listening socket; each worker stops when the
supervisor is gone (:mod:`.supervision`), and their metrics are summed (:mod:`.metrics`). The HTTP
protocol is uvicorn's httptools one with whole-head and whole-body deadlines and a connection cap (:mod:`.guard`).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import signal
import socket
import sqlite3
import sys
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import partial
from importlib.util import find_spec
from pathlib import Path

import uvicorn
from uvicorn.supervisors import Multiprocess

from petstore_os.db_url import StoreTarget, parse_db, redact

from .accesslog import STDERR
from .guard import (
    DEFAULT_BODY_TIMEOUT,
    DEFAULT_HEAD_TIMEOUT,
    DEFAULT_KEEP_ALIVE,
    GuardedConfig,
    GuardedHttpToolsProtocol,
)
from .logformat import LOG_CONFIG
from .metrics import metrics_dir
from .options import OptionError, default_max_connections, serve_options
from .records import StoreOpenError
from .served import ServeSettings, served_app
from .storage import open_store

__all__ = ["generate_key", "run_server", "serve_command"]


def serve_command(args: argparse.Namespace, *, environ: Mapping[str, str] | None = None) -> int:
    """``petstore serve`` / ``python -m petstore_server`` with parsed ``args`` (see :mod:`.options`)."""
    try:
        options = serve_options(args, environ)
    except OptionError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return run_server(
        host=options.host,
        port=options.port,
        db_path=options.db,
        api_keys=options.api_keys,
        log_level=options.log_level,
        seed=options.seed,
        workers=options.workers,
        access_log=options.access_log,
        head_timeout=options.head_timeout,
        body_timeout=options.body_timeout,
        keep_alive_timeout=options.keep_alive_timeout,
        max_connections=options.max_connections,
        metrics_token=options.metrics_token,
    )


def generate_key() -> str:
    return "sk-" + secrets.token_urlsafe(32)


def _listen(host: str, port: int) -> socket.socket:
    """A listening TCP socket, bound before uvicorn starts so the printed URL is already reachable.

    Created with an explicit IPPROTO_TCP: asyncio sets TCP_NODELAY only on sockets whose proto
    says TCP, and accepted sockets inherit it (without it small responses wait on Nagle's algorithm and
    the client's delayed ACK).
    """
    family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[
        0
    ]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(2048)
    except OSError:
        sock.close()
        raise
    return sock


def _url(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://{f'[{host}]' if ':' in host else host}:{port}/v1"


@contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """Make SIGTERM end the server like Ctrl-C (uvicorn re-raises it after its graceful shutdown)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


#: The signals that end the server; held from the banner until the server's own handlers take them.
HELD_SIGNALS = frozenset({signal.SIGINT, signal.SIGTERM})


@contextmanager
def _held_until_handled() -> Iterator[None]:
    """SIGINT and SIGTERM held (blocked) until :meth:`QuietServer.capture_signals` hands them to the server's loop: one
    sent as soon as the banner shows (a supervisor, a test) would otherwise raise KeyboardInterrupt inside the event
    loop's construction, whose half-built loop prints a traceback when it is collected."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, HELD_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


class QuietServer(uvicorn.Server):
    """uvicorn whose SIGINT/SIGTERM end it gracefully and are then done with.

    Plain uvicorn records the signal, shuts down, restores the handlers it found and raises the signal again, so
    the process ends by it (exit -2/-15) or by whatever handler it restored (seen: a finished event loop's). A
    second signal stops waiting for open connections.
    """

    @contextmanager
    def capture_signals(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        loop = asyncio.get_running_loop()
        for signum in HELD_SIGNALS:
            loop.add_signal_handler(signum, self._stop)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, HELD_SIGNALS)  # a signal held since the banner (_run) comes now
        try:
            yield
        finally:
            for signum in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(signum)

    def _stop(self) -> None:
        self.force_exit = self.should_exit
        self.should_exit = True


class DrainingMultiprocess(Multiprocess):
    """uvicorn's supervisor, which closes its copy of the listening socket as it starts stopping the workers.

    The workers close theirs as they begin their graceful shutdown; the supervisor's copy would keep the socket
    open, and a new connection would wait in its backlog, unanswered, until the supervisor exits. Closed, a new
    connection is refused at once while the requests in flight are answered.
    """

    def terminate_all(self) -> None:
        for sock in self.sockets:
            sock.close()
        super().terminate_all()


async def _prepare(target: StoreTarget, *, seed: bool) -> None:
    """Create or upgrade the schema (and seed) once, before any worker starts."""
    store = await open_store(target)
    try:
        if seed:
            await store.seed_sample()
    finally:
        await store.close()


#: The modules of the PostgreSQL backend: the postgres extra.
POSTGRES_MODULES = ("psycopg",)
NEEDS_POSTGRES = "a PostgreSQL database needs the postgres extra: pip install 'petstore[postgres]'"


def _open_errors(target: StoreTarget) -> tuple[type[Exception], ...]:
    """What opening ``target``'s database may raise (psycopg is imported only for PostgreSQL)."""
    errors: tuple[type[Exception], ...] = (OSError, RuntimeError, StoreOpenError, sqlite3.Error)
    if target.backend != "postgresql":
        return errors
    import psycopg

    return (*errors, psycopg.Error)


def run_server(
    *,
    host: str = "127.0.0.1",
    port: int = 8080,
    db_path: str | Path,
    api_keys: Sequence[str],
    log_level: str = "warning",
    seed: bool = False,
    workers: int = 1,
    access_log: str | None = STDERR,
    graceful_timeout: int = 30,
    head_timeout: float = DEFAULT_HEAD_TIMEOUT,
    body_timeout: float = DEFAULT_BODY_TIMEOUT,
    keep_alive_timeout: int = DEFAULT_KEEP_ALIVE,
    max_connections: int | None = None,
    metrics_token: str | None = None,
) -> int:
    """Serve until interrupted; returns the exit code (0 after Ctrl-C or SIGTERM, 1 when it cannot
    open the database or listen, 2 for a ``db_path`` that names no backend).

    ``db_path`` is a SQLite path, ``sqlite:///path`` or ``postgresql://...``. With no ``api_keys``
    a key is generated and printed once (``API key: ...``). ``seed`` adds the sample pets to an
    empty database. ``access_log`` is where JSON access lines go (a file, ``-`` or standard error; None: nowhere).
    ``head_timeout``, ``body_timeout``, ``keep_alive_timeout`` and ``max_connections`` (per worker) are the limits of
    :mod:`.guard`; ``metrics_token`` the bearer token ``/metrics`` asks for.
    """
    try:
        target = parse_db(str(db_path))
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if target.backend == "postgresql" and not all(find_spec(module) for module in POSTGRES_MODULES):
        print(f"error: {NEEDS_POSTGRES}", file=sys.stderr)
        return 2
    try:
        asyncio.run(_prepare(target, seed=seed))
    except _open_errors(target) as exc:
        print(f"error: cannot open the database: {redact(str(exc), str(db_path))}", file=sys.stderr)
        return 1
    try:
        sock = _listen(host, port)
    except OSError as exc:
        print(f"error: cannot listen on {host}:{port}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    keys = list(api_keys) or [generate_key()]
    settings = ServeSettings(
        db=str(db_path),
        api_keys=tuple(keys),
        access_log=access_log,
        supervisor=os.getpid() if workers > 1 else None,
        metrics_token=metrics_token,
    )
    config = GuardedConfig(
        partial(served_app, settings),
        factory=True,
        log_level=log_level,
        log_config=LOG_CONFIG,  # one format on stderr: the service's own lines are JSON, as the access lines
        lifespan="on",
        server_header=False,
        access_log=False,
        workers=workers,
        timeout_graceful_shutdown=graceful_timeout,
        timeout_keep_alive=keep_alive_timeout,
        http=GuardedHttpToolsProtocol,
        ws="none",  # HTTP only: an Upgrade header is an ordinary request's (no WebSocket protocol takes the socket)
        head_timeout=head_timeout,
        body_timeout=body_timeout,
        max_connections=max_connections or default_max_connections(),
    )
    if not api_keys:
        print(f"API key: {keys[0]}", flush=True)
    plural = f" with {workers} workers" if workers > 1 else ""
    with sock:
        return _run(
            config, sock, workers=workers, banner=f"Serving the Pet Store API at {_url(sock)}{plural} (Ctrl-C to stop)"
        )


def _run(config: uvicorn.Config, sock: socket.socket, *, workers: int, banner: str) -> int:
    """Serve on ``sock``; ``banner`` (the URL) is printed once SIGTERM ends the server cleanly: a SIGTERM sent
    as soon as the URL is seen (a supervisor, a test) then shuts it down with 0 instead of killing it."""
    try:
        with _sigterm_as_interrupt(), metrics_dir() if workers > 1 else _held_until_handled():
            print(banner, flush=True)
            if workers > 1:
                DrainingMultiprocess(config, sockets=[sock]).run()
            else:
                server = QuietServer(config)
                server.run(sockets=[sock])
                if not server.started:
                    return 1
    except KeyboardInterrupt:
        pass
    return 0

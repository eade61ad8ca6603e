"""`petstore serve`: the service on uvicorn, until Ctrl-C (or SIGTERM)."""

from __future__ import annotations

import os
import secrets
import signal
import socket
import sys
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

import uvicorn

from .app import create_app
from .store import PetStore

__all__ = ["KEYS_ENV", "generate_key", "keys_from_env", "run_server"]

KEYS_ENV = "PETSTORE_SERVER_API_KEYS"


def keys_from_env(environ: Mapping[str, str] | None = None) -> list[str]:
    """API keys from ``PETSTORE_SERVER_API_KEYS`` (comma-separated, blanks dropped)."""
    raw = (os.environ if environ is None else environ).get(KEYS_ENV, "")
    return [key.strip() for key in raw.split(",") if key.strip()]


def generate_key() -> str:
    return "sk-" + secrets.token_urlsafe(32)


def _listen(host: str, port: int) -> socket.socket:
    """A listening TCP socket, bound before uvicorn starts so the printed URL is already reachable.

    Created with an explicit IPPROTO_TCP: asyncio sets TCP_NODELAY only on sockets whose proto
    says TCP, and accepted sockets inherit it (without it every response waits ~40 ms on Nagle).
    """
    family, kind, proto, _, address = socket.getaddrinfo(
        host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )[0]
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


def run_server(
    *,
    host: str = "127.0.0.1",
    port: int = 8080,
    db_path: str | Path,
    api_keys: Sequence[str],
    log_level: str = "warning",
    seed: bool = False,
) -> int:
    """Serve until interrupted; returns the exit code (0 after Ctrl-C or SIGTERM, 1 when it cannot listen).

    With no ``api_keys`` a key is generated and printed once (``API key: ...``).
    ``seed`` adds the sample pets to an empty database.
    """
    keys = list(api_keys) or [generate_key()]
    store = PetStore(db_path)
    try:
        with _sigterm_as_interrupt():
            if seed:
                store.seed_sample()
            app = create_app(store, api_keys=keys)
            try:
                sock = _listen(host, port)
            except OSError as exc:
                print(f"error: cannot listen on {host}:{port}: {exc.strerror or exc}", file=sys.stderr)
                return 1
            if not api_keys:
                print(f"API key: {keys[0]}", flush=True)
            print(f"Serving the Pet Store API at {_url(sock)} (Ctrl-C to stop)", flush=True)
            config = uvicorn.Config(app, log_level=log_level, lifespan="off", server_header=False)
            uvicorn.Server(config).run(sockets=[sock])
    except KeyboardInterrupt:
        pass
    finally:
        store.close()
    return 0

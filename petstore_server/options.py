"""The options of ``petstore serve`` (and ``python -m petstore_server``), and where its secrets come from.

A command line is readable by every local user (``ps``, ``/proc/PID/cmdline``), so no secret is taken from it:

- API keys come from ``--api-key-file FILE`` (one a line; blank lines and ``#`` comments allowed; the file is
  tightened to 0600 if others may read it) and ``PETSTORE_SERVER_API_KEYS`` (comma-separated). ``--api-key KEY``
  is refused with one line saying so.
- The database password comes from ``PETSTORE_SERVER_DB`` (the whole URL, password included), or from libpq
  itself: ``PGPASSFILE`` or ``~/.pgpass`` (libpq reads them only when mode 0600), or ``PGPASSWORD``. A ``--db``
  URL that holds a password is refused.
- The token ``/metrics`` may ask for comes from ``--metrics-token-file FILE`` or ``PETSTORE_SERVER_METRICS_TOKEN``.

Nothing heavy is imported here: ``petstore --help`` builds these options.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from dataclasses import dataclass

from petstore_os import read_secret_lines
from petstore_os.arguments import port_number

__all__ = [
    "DB_ENV",
    "KEYS_ENV",
    "METRICS_TOKEN_ENV",
    "OptionError",
    "ServeOptions",
    "add_serve_options",
    "default_max_connections",
    "keys_from_env",
    "serve_options",
]

KEYS_ENV = "PETSTORE_SERVER_API_KEYS"
DB_ENV = "PETSTORE_SERVER_DB"
METRICS_TOKEN_ENV = "PETSTORE_SERVER_METRICS_TOKEN"
DEFAULT_DB = "petstore.db"
#: The most idle seconds a keep-alive connection may be given.
MAX_KEEP_ALIVE = 60
#: Descriptors kept apart from connections (the database, logs, the pool, Python's own).
_SPARE_FILES = 64
_ELSEWHERE = f"put the keys in a file (--api-key-file FILE, one a line) or in {KEYS_ENV}"


class OptionError(ValueError):
    """Options the service cannot start with: one line, exit 2."""


@dataclass(frozen=True, slots=True)
class ServeOptions:
    host: str
    port: int
    db: str
    api_keys: tuple[str, ...]
    workers: int
    access_log: str | None
    seed: bool
    log_level: str
    head_timeout: float = 10.0
    body_timeout: float = 10.0
    keep_alive_timeout: int = 5
    max_connections: int = 1000
    metrics_token: str | None = None


def add_serve_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    parser.add_argument("--port", type=port_number, default=8080, help="port; 0 picks a free one (default: 8080)")
    parser.add_argument(
        "--db",
        metavar="PATH|URL",
        help=f"SQLite file or sqlite:///PATH, or postgresql://user@host:port/db; a URL with a password goes in "
        f"{DB_ENV} (or the password in ~/.pgpass) (default: {DB_ENV}, else ./{DEFAULT_DB})",
    )
    parser.add_argument("--workers", type=int, default=1, metavar="N", help="worker processes (default: 1)")
    parser.add_argument(
        "--access-log",
        metavar="FILE|-",
        help="write the JSON access lines to FILE (made 0600) or - (stdout) instead of stderr",
    )
    parser.add_argument("--no-access-log", action="store_true", help="write no access lines")
    parser.add_argument(
        "--head-timeout",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="close a connection whose request head (line and headers) is not all in within SECONDS (default: 10)",
    )
    parser.add_argument(
        "--body-timeout",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="close a connection whose request body is not all in within SECONDS of its head (default: 10)",
    )
    parser.add_argument(
        "--keep-alive-timeout",
        type=int,
        default=5,
        metavar="SECONDS",
        help=f"close a keep-alive connection idle for SECONDS, 1 to {MAX_KEEP_ALIVE} (default: 5)",
    )
    parser.add_argument(
        "--max-connections",
        type=int,
        metavar="N",
        help="open connections per worker; past N a new one gets 503 and is closed (default: 1000, or fewer when "
        "the open-files limit is lower)",
    )
    parser.add_argument(
        "--metrics-token-file",
        metavar="FILE",
        help=f"GET /metrics asks for this bearer token (first line of FILE; also {METRICS_TOKEN_ENV}); "
        "default: no token",
    )
    parser.add_argument(
        "--api-key-file",
        metavar="FILE",
        help=f"accepted API keys, one a line (# comments); also {KEYS_ENV}, comma-separated; "
        "none given: one is generated and printed once",
    )
    # Kept to refuse it with the way out (and so that it is no abbreviation of --api-key-file).
    parser.add_argument("--api-key", dest="api_keys", action="append", default=[], help=argparse.SUPPRESS)
    parser.add_argument("--seed", action="store_true", help="add the sample pets when the database is empty")
    parser.add_argument("--log-level", default="warning", help="uvicorn's log level (default: warning)")


def keys_from_env(environ: Mapping[str, str] | None = None) -> list[str]:
    """API keys from ``PETSTORE_SERVER_API_KEYS`` (comma-separated, blanks dropped)."""
    raw = (os.environ if environ is None else environ).get(KEYS_ENV, "")
    return [key.strip() for key in raw.split(",") if key.strip()]


def serve_options(args: argparse.Namespace, environ: Mapping[str, str] | None = None) -> ServeOptions:
    """The parsed options checked, the keys read; OptionError names what is wrong and what to do instead."""
    environ = os.environ if environ is None else environ
    if args.api_keys:
        raise OptionError(f"--api-key puts the key on the command line, where any local user can read it; {_ELSEWHERE}")
    from_env = keys_from_env(environ)
    if not all(_one_word(key) for key in from_env):
        raise OptionError(f"{KEYS_ENV}: a key is one word of visible ASCII characters; separate keys with commas")
    keys = [*(_keys_from_file(args.api_key_file) if args.api_key_file else []), *from_env]
    from petstore_os.db_url import parse_db, url_password

    db = args.db or environ.get(DB_ENV) or DEFAULT_DB
    try:
        parse_db(db)
    except ValueError as exc:
        raise OptionError(f"{'--db' if args.db else DB_ENV}: {exc}") from None
    if args.db and url_password(args.db):
        raise OptionError(
            "--db holds a password, and any local user can read the command line; put the URL in "
            f"{DB_ENV}, or the password in ~/.pgpass (or the file PGPASSFILE names)"
        )
    if args.workers < 1:
        raise OptionError(f"--workers {args.workers}: at least 1")
    if not 0 < args.head_timeout <= 3600:
        raise OptionError(f"--head-timeout {args.head_timeout:g}: more than 0 and at most 3600 seconds")
    if not 0 < args.body_timeout <= 3600:
        raise OptionError(f"--body-timeout {args.body_timeout:g}: more than 0 and at most 3600 seconds")
    if not 1 <= args.keep_alive_timeout <= MAX_KEEP_ALIVE:
        raise OptionError(f"--keep-alive-timeout {args.keep_alive_timeout}: 1 to {MAX_KEEP_ALIVE} seconds")
    if args.max_connections is not None and args.max_connections < 1:
        raise OptionError(f"--max-connections {args.max_connections}: at least 1")
    if args.no_access_log and args.access_log:
        raise OptionError("--access-log and --no-access-log: give one")
    from .accesslog import STDERR

    return ServeOptions(
        host=args.host,
        port=args.port,
        db=db,
        api_keys=tuple(keys),
        workers=args.workers,
        access_log=None if args.no_access_log else (args.access_log or STDERR),
        seed=args.seed,
        log_level=args.log_level,
        head_timeout=args.head_timeout,
        body_timeout=args.body_timeout,
        keep_alive_timeout=args.keep_alive_timeout,
        max_connections=args.max_connections or default_max_connections(),
        metrics_token=_metrics_token(args.metrics_token_file, environ),
    )


def default_max_connections() -> int:
    """1000, or fewer when the open-files limit would run out first (some descriptors are kept for the rest)."""
    import resource

    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return 1000
    return max(1, min(1000, soft - _SPARE_FILES))


def _metrics_token(path: str | None, environ: Mapping[str, str]) -> str | None:
    if path is None:
        token = environ.get(METRICS_TOKEN_ENV, "").strip()
        if token and not _one_word(token):
            raise OptionError(f"{METRICS_TOKEN_ENV}: a token is one word of visible ASCII characters")
        return token or None
    lines = _secret_lines("--metrics-token-file", path)
    if len(lines) != 1 or not _one_word(lines[0][1]):
        raise OptionError(f"--metrics-token-file {path}: one token on one line, visible ASCII characters")
    return lines[0][1]


def _secret_lines(option: str, path: str) -> list[tuple[int, str]]:
    """The lines of the file of secrets ``option`` names (tightened to 0600); OptionError when it cannot be read."""
    try:
        return read_secret_lines(path)
    except OSError as exc:
        raise OptionError(f"{option} {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise OptionError(f"{option} {path}: not a text file (UTF-8)") from None


def _keys_from_file(path: str) -> list[str]:
    lines = _secret_lines("--api-key-file", path)
    if not lines:
        raise OptionError(f"--api-key-file {path} holds no key: one a line, # starts a comment")
    for number, key in lines:
        if not _one_word(key):
            raise OptionError(f"--api-key-file {path}, line {number}: a key is one word of visible ASCII characters")
    return [key for _, key in lines]


def _one_word(key: str) -> bool:
    """A key a client can send in ``Authorization: Bearer``: visible ASCII, no space."""
    return key.isascii() and key.isprintable() and " " not in key

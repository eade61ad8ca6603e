"""The options of ``petstore serve`` (and ``python -m petstore_server``), and where its secrets come from.

A command line is readable by every local user (``ps``, ``/proc/PID/cmdline``), so no secret is taken from it:

- API keys come from ``--api-key-file FILE`` (one a line; blank lines and ``#`` comments allowed; the file is
  tightened to 0600 if others may read it) and ``PETSTORE_SERVER_API_KEYS`` (comma-separated). ``--api-key KEY``
  is refused with one line saying so.
- The database password comes from ``PETSTORE_SERVER_DB`` (the whole URL, password included), or from libpq
  itself: ``PGPASSFILE`` or ``~/.pgpass`` (libpq reads them only when mode 0600), or ``PGPASSWORD``. A ``--db``
  URL that holds a password is refused.

Nothing heavy is imported here: ``petstore --help`` builds these options.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from dataclasses import dataclass

from petstore_os import read_secret_lines

__all__ = ["DB_ENV", "KEYS_ENV", "OptionError", "ServeOptions", "add_serve_options", "keys_from_env", "serve_options"]

KEYS_ENV = "PETSTORE_SERVER_API_KEYS"
DB_ENV = "PETSTORE_SERVER_DB"
DEFAULT_DB = "petstore.db"
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


def add_serve_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8080, help="port; 0 picks a free one (default: 8080)")
    parser.add_argument(
        "--db",
        metavar="PATH|URL",
        help=f"SQLite file or sqlite:///PATH, or postgresql://user@host:port/db; a URL with a password goes in "
        f"{DB_ENV} (or the password in ~/.pgpass) (default: {DB_ENV}, else ./{DEFAULT_DB})",
    )
    parser.add_argument("--workers", type=int, default=1, metavar="N", help="worker processes (default: 1)")
    parser.add_argument("--access-log", metavar="FILE|-", help="write JSON access log lines to FILE (or - for stdout)")
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
    from .db_url import parse_db, url_password

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
    return ServeOptions(
        host=args.host,
        port=args.port,
        db=db,
        api_keys=tuple(keys),
        workers=args.workers,
        access_log=args.access_log,
        seed=args.seed,
        log_level=args.log_level,
    )


def _keys_from_file(path: str) -> list[str]:
    try:
        lines = read_secret_lines(path)
    except OSError as exc:
        raise OptionError(f"--api-key-file {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise OptionError(f"--api-key-file {path}: not a text file (UTF-8)") from None
    if not lines:
        raise OptionError(f"--api-key-file {path} holds no key: one a line, # starts a comment")
    for number, key in lines:
        if not _one_word(key):
            raise OptionError(f"--api-key-file {path}, line {number}: a key is one word of visible ASCII characters")
    return [key for _, key in lines]


def _one_word(key: str) -> bool:
    """A key a client can send in ``Authorization: Bearer``: visible ASCII, no space."""
    return key.isascii() and key.isprintable() and " " not in key

"""``python -m petstore_server``: run the service (what ``petstore serve`` does)."""

from __future__ import annotations

import argparse
import os
import sys

from .serve import DB_ENV, KEYS_ENV, keys_from_env, run_server


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m petstore_server", description="Run the Pet Store service.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8080, help="0 picks a free port (printed at start)")
    parser.add_argument(
        "--db",
        default=os.environ.get(DB_ENV, "petstore.db"),
        help=f"SQLite file, sqlite:///PATH or postgresql://user@host:port/db (also ${DB_ENV}; default: petstore.db)",
    )
    parser.add_argument("--workers", type=int, default=1, help="worker processes (default: 1)")
    parser.add_argument("--access-log", metavar="FILE|-", help="JSON access log lines to FILE or stdout")
    parser.add_argument("--api-key", action="append", default=[], help=f"accepted key; repeatable (also ${KEYS_ENV})")
    parser.add_argument("--seed", action="store_true", help="add the sample pets to an empty database")
    parser.add_argument("--log-level", default="warning")
    args = parser.parse_args(argv)
    keys = args.api_key or keys_from_env()
    return run_server(
        host=args.host,
        port=args.port,
        db_path=args.db,
        api_keys=keys,
        log_level=args.log_level,
        seed=args.seed,
        workers=args.workers,
        access_log=args.access_log,
    )


if __name__ == "__main__":
    sys.exit(main())

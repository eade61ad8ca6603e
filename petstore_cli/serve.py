"""``petstore serve``: run the Pet Store service."""

from __future__ import annotations

import argparse
import os


def serve_command(args: argparse.Namespace) -> int:
    from petstore_server.serve import DB_ENV, keys_from_env, run_server

    keys = [*args.api_keys, *keys_from_env()]
    return run_server(
        host=args.host,
        port=args.port,
        db_path=args.db or os.environ.get(DB_ENV) or "petstore.db",
        api_keys=keys,
        seed=args.seed,
        workers=args.workers,
        access_log=args.access_log,
    )

"""``petstore serve``: run the Pet Store service."""

from __future__ import annotations

import argparse
from pathlib import Path


def serve_command(args: argparse.Namespace) -> int:
    from petstore_server.serve import keys_from_env, run_server

    keys = [*args.api_keys, *keys_from_env()]
    return run_server(host=args.host, port=args.port, db_path=Path(args.db), api_keys=keys, seed=args.seed)

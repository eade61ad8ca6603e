"""The service floor: a bare Starlette + SQLite app serving pets, on plain uvicorn.

    PETSTORE_SERVER_API_KEYS=KEY python bench/baseline_app.py --db FILE [--port 0] [--http h11]

``GET /v1/pets?limit=N`` (bearer key checked) returns the first N pets as JSON;
``POST /v1/pets`` inserts one (no validation beyond json.loads, no idempotency).
What anyone would write in ten minutes: Request/JSONResponse, one shared connection.
Prints ``Serving the baseline at http://127.0.0.1:PORT/v1`` once listening. uvicorn's default protocol (httptools when
it is installed, as with petstore's server extra), or ``--http h11`` (the floor of the figures before issue 41).
"""

from __future__ import annotations

import argparse
import os
import socket
import sqlite3

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

SCHEMA = """CREATE TABLE IF NOT EXISTS pets (
    id INTEGER PRIMARY KEY, name TEXT NOT NULL, category_id INTEGER NOT NULL, status TEXT)"""


def create_app(db: str, api_key: str) -> Starlette:
    conn = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute(SCHEMA)
    expected = f"Bearer {api_key}"

    async def pets(request: Request) -> JSONResponse:
        if request.headers.get("authorization") != expected:
            return JSONResponse({"code": "unauthorized", "message": "bad key", "status": 401}, 401)
        if request.method == "POST":
            body = await request.json()
            cur = conn.execute(
                "INSERT INTO pets (name, category_id, status) VALUES (?, ?, ?)",
                (body["name"], body["categoryId"], body.get("status")),
            )
            return JSONResponse({"id": cur.lastrowid, **body}, 201)
        limit = int(request.query_params.get("limit", "20"))
        rows = conn.execute("SELECT id, name, category_id, status FROM pets ORDER BY id LIMIT ?", (limit,))
        return JSONResponse([{"id": i, "name": n, "categoryId": c, "status": s} for i, n, c, s in rows])

    return Starlette(routes=[Route("/v1/pets", pets, methods=["GET", "POST"])])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--db", required=True)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--http", choices=("auto", "h11", "httptools"), default="auto")
    args = parser.parse_args()
    app = create_app(args.db, os.environ["PETSTORE_SERVER_API_KEYS"])  # as petstore serve: never on the command line
    # IPPROTO_TCP explicitly: asyncio sets TCP_NODELAY only when the socket says TCP.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", args.port))
    sock.listen(2048)
    print(f"Serving the baseline at http://127.0.0.1:{sock.getsockname()[1]}/v1", flush=True)
    config = uvicorn.Config(app, log_level="warning", lifespan="off", server_header=False, http=args.http)
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()

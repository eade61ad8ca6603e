"""What each piece of the service's per-request path costs: instructions per GET, one piece off at a time.

    .venv/bin/python bench/bench_pieces.py [--requests 2000] [--load GET|POST]

The service on SQLite (one process, as ``petstore serve`` runs it) with the access log, the metrics, the head and
body guard and the file check of reads each taken off in turn, every piece off, and the bare Starlette+SQLite floor
(``baseline_app.py``), each under valgrind's callgrind: after 320 warm-up requests the counters are zeroed,
``--requests`` requests go over 16 keep-alive connections, and the instructions the server ran (all its threads)
are divided by the requests. Instruction counts do not move with the machine's load, unlike time on shared cores;
they do not count the kernel's side of system calls nor the cost of handing the interpreter between threads, which
``bench_backends.py``'s CPU time does. Needs valgrind (``apt-get install valgrind``); ~2 min a configuration.

``python bench/bench_pieces.py --serve PORT DB [--no-log] [--no-metrics] [--no-guard] [--unwatched]`` is the
service so configured (what the script runs under callgrind).
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import API_KEY, BENCH, PY, clean_env, free_port, report
from bench_backends import PETS

PIECES = {
    "the service as deployed": [],
    "without the access log": ["--no-log"],
    "without the metrics": ["--no-metrics"],
    "without the head/body guard": ["--no-guard"],
    "reads without the file check": ["--unwatched"],
    "without all four": ["--no-log", "--no-metrics", "--no-guard", "--unwatched"],
}
FLOOR = "floor (Starlette+SQLite)"


def serve(args: argparse.Namespace) -> None:
    """The service on SQLite in this process, with the pieces ``args`` takes off."""
    import uvicorn
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    from petstore_server.accesslog import AccessLog
    from petstore_server.app import create_app
    from petstore_server.guard import GuardedConfig, GuardedHttpToolsProtocol
    from petstore_server.metrics import Metrics
    from petstore_server.observed import Observed
    from petstore_server.sqlite_store import SqliteStore
    from petstore_server.store import PetStore

    class App:
        app: Any = None

        async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
            if scope["type"] != "lifespan":
                await self.app(scope, receive, send)
                return
            while (await receive())["type"] == "lifespan.startup":
                store = SqliteStore(PetStore(args.db)) if args.unwatched else await SqliteStore.open(args.db)
                metrics = None if args.no_metrics else Metrics(pool_stats=store.pool_stats)
                if metrics is not None:
                    metrics.start()
                log = None if args.no_log else AccessLog(fd=2)
                app: Any = create_app(store, api_keys=[API_KEY])
                self.app = app if metrics is log is None else Observed(app, metrics=metrics, log=log)
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})

    PetStore(args.db).close()  # the tables, before the port answers
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", args.port))
    sock.listen(2048)
    options: dict[str, Any] = {"log_level": "warning", "lifespan": "on", "server_header": False, "access_log": False}
    if args.no_guard:
        config = uvicorn.Config(App(), http=HttpToolsProtocol, **options)
    else:
        config = GuardedConfig(App(), http=GuardedHttpToolsProtocol, head_timeout=10.0, max_connections=1000, **options)
    uvicorn.Server(config).run(sockets=[sock])


def drive(port: int, count: int, load: str, *, tag: str) -> None:
    """``count`` requests over 16 keep-alive connections, each checked."""

    def connection(number: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
        for i in range(count // 16):
            if load == "POST":
                body = f'{{"name":"Bench {i}","categoryId":1,"status":"available"}}'
                headers = {"Content-Type": "application/json", "Idempotency-Key": f"{tag}-{number}-{i}"}
                conn.request("POST", "/v1/pets", body, {"Authorization": f"Bearer {API_KEY}", **headers})
            else:
                conn.request("GET", "/v1/pets?limit=20", headers={"Authorization": f"Bearer {API_KEY}"})
            response = conn.getresponse()
            response.read()
            assert response.status in (200, 201), response.status
        conn.close()

    threads = [threading.Thread(target=connection, args=(number,)) for number in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


@contextlib.contextmanager
def under_callgrind(argv: list[str], *, port: int, tmp: Path) -> Iterator[int]:
    out = tmp / "callgrind.out"
    command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *argv]
    env = clean_env(tmp, PETSTORE_SERVER_API_KEYS=API_KEY)
    with (tmp / "stderr").open("w") as err:
        proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)
    try:
        deadline = time.monotonic() + 300
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
                break
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{argv} did not start: {(tmp / 'stderr').read_text()[-2000:]}")
            time.sleep(0.5)
        yield proc.pid
    finally:
        os.killpg(proc.pid, 15)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.wait()


def instructions(argv: list[str], *, db: Path, requests: int, load: str, keep: Path | None = None) -> float:
    """Instructions per request of the server ``argv`` (``{port}`` in it is replaced); ``keep``: where to copy
    callgrind's dump (for ``callgrind_annotate``)."""
    with tempfile.TemporaryDirectory(prefix="petstore-pieces-") as scratch:
        tmp = Path(scratch)
        port = free_port()
        with under_callgrind([arg.replace("{port}", str(port)) for arg in argv], port=port, tmp=tmp) as pid:
            with sqlite3.connect(db) as conn:
                conn.executemany("INSERT INTO pets VALUES (?, ?, ?, ?)", PETS)
            conn.close()
            drive(port, 320, load, tag=f"warm-{port}")
            subprocess.run(["callgrind_control", "-z", str(pid)], check=True, capture_output=True)
            drive(port, requests, load, tag=f"run-{port}")
            subprocess.run(["callgrind_control", "-d", str(pid)], check=True, capture_output=True)
            for dump in sorted(tmp.glob("callgrind.out.*")):
                if keep is not None:
                    shutil.copy(dump, keep)
                for line in dump.read_text().splitlines():
                    if line.startswith(("summary:", "totals:")):
                        return int(line.split()[1]) / requests
    raise RuntimeError("callgrind wrote no totals")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--load", choices=("GET", "POST"), default="GET")
    parser.add_argument("--only", action="append", help="measure only this configuration (repeatable)")
    parser.add_argument("--keep", type=Path, help="a directory to copy each configuration's callgrind dump to")
    parser.add_argument("--serve", nargs=2, metavar=("PORT", "DB"))
    for flag in ("--no-log", "--no-metrics", "--no-guard", "--unwatched"):
        parser.add_argument(flag, action="store_true")
    args = parser.parse_args()
    if args.serve:
        args.port, args.db = int(args.serve[0]), args.serve[1]
        serve(args)
        return 0
    rows: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory(prefix="petstore-pieces-db-") as scratch:
        configurations = {FLOOR: [PY, str(BENCH / "baseline_app.py"), "--port", "{port}", "--db", "{db}"]}
        for label, flags in PIECES.items():
            configurations[label] = [PY, __file__, "--serve", "{port}", "{db}", *flags]
        for number, (label, argv) in enumerate(configurations.items()):
            if args.only and label not in args.only:
                continue
            db = Path(scratch) / f"{number}.db"
            if label == FLOOR:
                sqlite3.connect(db).close()  # the floor makes its table as it starts
            keep = None
            if args.keep is not None:
                args.keep.mkdir(parents=True, exist_ok=True)
                keep = args.keep / f"callgrind.{args.load}.{number}"
            per_request = instructions(
                [arg.replace("{db}", str(db)) for arg in argv], db=db, requests=args.requests, load=args.load, keep=keep
            )
            rows.append({"configuration": label, "load": args.load, "instructions": per_request})
            print(f"{label:32} {args.load} {per_request / 1000:8.1f} k instructions a request", flush=True)
    report("bench_pieces", rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The service on each backend, side by side in one run: wrk (2 threads, 16 connections), loopback only.

    flock /work/cpu.lock .venv/bin/python bench/bench_backends.py [--duration 5] [--rounds 2] [--big 1000000]

Servers, all started first and then driven round-robin (each round: every workload on every
server in turn, so drift hits all alike): the bare Starlette+SQLite floor (bench/baseline_app.py),
``petstore serve`` on SQLite x1 worker, on PostgreSQL x1 and x2 workers (a database created for
the run and dropped after). Workloads: GET /v1/pets?limit=20, POST /v1/pets (a distinct
Idempotency-Key each, as the client sends), and a 50/50 mix. Figures: requests/s (mean of the
rounds), p99 latency (median of the rounds) and the service's own CPU time per request: utime +
stime of every process in the server's process group (master and workers, from /proc) over the
wrk runs, divided by the requests wrk completed; PostgreSQL's own processes are not in it. Then
``--big`` pets per backend: median latency of the first page and of a deep page (cursor near the
end), 200 requests each.
Targets: SQLite x1 >= 1.0x the floor (GET); PostgreSQL x1's CPU per request <= 1.5x SQLite x1's,
for GET and for POST.
"""

from __future__ import annotations

import argparse
import contextlib
import re
import sqlite3
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import API_KEY, BENCH, PETSTORE, PY, clean_env, group_cpu_seconds, report, scratch, server_process, verdict

PG_ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"
#: The whole origin, up to the path (a read that ends inside the port number must not match).
SERVING = re.compile(rb"(http://127\.0\.0\.1:\d+)/v1")
ASYNC_COMMIT = "PostgreSQL x1 async commit"
UNIX_SOCKET = "PostgreSQL x1 unix socket"
FLOOR = "floor (Starlette+SQLite)"
PETS = [(i, f"Pet {i}", i % 4 + 1, ("available", "pending", "sold")[i % 3]) for i in range(1, 31)]

_HEAD = f'local auth = "Bearer {API_KEY}"\n'
_POST = """local n = 0
local run = "@RUN@"
function setup(thread) thread:set("tid", tostring(math.random(1, 1e9))) end
function post()
  n = n + 1
  local body = '{"name":"Bench ' .. n .. '","categoryId":' .. (n % 5 + 1) .. ',"status":"available"}'
  return wrk.format("POST", "/v1/pets", {["Authorization"] = auth, ["Content-Type"] = "application/json",
    ["Idempotency-Key"] = run .. "-" .. tid .. "-" .. n}, body)
end
function get() return wrk.format("GET", "/v1/pets?limit=20", {["Authorization"] = auth}) end
"""
SCRIPTS = {
    "GET": "function request() return get() end\n",
    "POST": "function request() return post() end\n",
    "MIX": "local i = 0\nfunction request() i = i + 1\n if i % 2 == 0 then return post() end\n return get() end\n",
}


def wrk(origin: str, script: Path, duration: int, *, pgid: int) -> dict[str, float]:
    """One wrk run: requests/s, p99 (ms), requests done, and the CPU seconds process group ``pgid`` spent."""
    argv = ["wrk", "-t2", "-c16", f"-d{duration}s", "--timeout", "5s", "--latency", "-s", str(script), origin]
    cpu_before = group_cpu_seconds(pgid)
    out = subprocess.run(argv, capture_output=True, text=True, timeout=duration + 60).stdout
    cpu = group_cpu_seconds(pgid) - cpu_before
    rate = re.search(r"Requests/sec:\s+([\d.]+)", out)
    p99 = re.search(r"99%\s+([\d.]+)(us|ms|s)", out)
    done = re.search(r"(\d+) requests in", out)
    if rate is None or p99 is None or done is None or re.search(r"Non-2xx|Socket errors", out):
        raise RuntimeError(f"wrk failed against {origin}:\n{out}")
    scale = {"us": 0.001, "ms": 1.0, "s": 1000.0}
    p99_ms = float(p99.group(1)) * scale[p99.group(2)]
    return {"rps": float(rate.group(1)), "p99_ms": p99_ms, "requests": float(done.group(1)), "cpu_s": cpu}


def combine(runs: list[dict[str, float]]) -> dict[str, float]:
    """The rounds of one server and workload: mean req/s, median p99, CPU per request over all of them (µs)."""
    return {
        "rps": statistics.mean(run["rps"] for run in runs),
        "p99_ms": statistics.median(run["p99_ms"] for run in runs),
        "cpu_us": sum(run["cpu_s"] for run in runs) / sum(run["requests"] for run in runs) * 1e6,
    }


@contextlib.contextmanager
def pg_database() -> Iterator[str]:
    name = f"petstore_bench_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    try:
        yield PG_ADMIN.rsplit("/", 1)[0] + f"/{name}"
    finally:
        with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE {name} WITH (FORCE)")


def unix_socket_url(url: str) -> str:
    """``url`` (a database on 127.0.0.1) through the server's unix socket instead of TCP."""
    with psycopg.connect(url) as conn:
        directory = conn.execute("SHOW unix_socket_directories").fetchone()[0].split(",")[0].strip()
    port = url.rsplit(":", 1)[1].split("/")[0]
    return f"postgresql://postgres@/{url.rsplit('/', 1)[1]}?host={directory}&port={port}"


def petstore(db: str, tmp: Path, workers: int = 1) -> contextlib.AbstractContextManager[tuple[str, int]]:
    """``petstore serve`` on ``db``: (URL, its process group)."""
    argv = [PETSTORE, "serve", "--port", "0", "--db", db, "--workers", str(workers)]
    return server_process(argv, env=clean_env(tmp, PETSTORE_SERVER_API_KEYS=API_KEY), ready=SERVING)


def seed(db: str, count: int) -> None:
    """``count`` pets written straight into the store's tables (SQLite executemany, PostgreSQL COPY)."""
    rows = ((i, f"Pet {i}", i % 4 + 1, ("available", "pending", "sold")[i % 3]) for i in range(1, count + 1))
    if db.startswith("postgresql://"):
        with psycopg.connect(db) as conn, conn.cursor() as cur:
            with cur.copy("COPY pets (id, name, category_id, status) FROM STDIN") as copy:
                for pet_id, name, cat, status in rows:
                    copy.write_row((pet_id, name.encode(), cat, status))
            cur.execute("SELECT setval(pg_get_serial_sequence('pets', 'id'), %s)", (count,))
            cur.execute("ANALYZE pets")
        return
    with sqlite3.connect(db) as conn:
        conn.executemany("INSERT INTO pets VALUES (?, ?, ?, ?)", rows)
    conn.close()


def page_latency(base: str, after: int | None) -> float:
    """Median ms of 200 sequential GETs of one page (keep-alive), after 20 warm-up requests."""
    from petstore_server.wire import encode_cursor

    query = "limit=20" + ("" if after is None else f"&cursor={encode_cursor(after)}")
    times = []
    with httpx.Client(headers={"Authorization": f"Bearer {API_KEY}"}) as http:
        for i in range(220):
            start = time.perf_counter()
            response = http.get(f"{base}/pets?{query}")
            if i >= 20:
                times.append((time.perf_counter() - start) * 1000)
            assert response.status_code == 200 and len(response.json()) == 20
    return statistics.median(times)


def wrk_script(tmp: Path, workload: str) -> Path:
    """The wrk script of ``workload`` (a key of :data:`SCRIPTS`), written in ``tmp``; its POSTs' Idempotency-Keys
    are this run's own."""
    path = tmp / f"{workload}.lua"
    path.write_text(_HEAD + _POST.replace("@RUN@", uuid.uuid4().hex[:8]) + SCRIPTS[workload])
    return path


@contextlib.contextmanager
def floor_server(tmp: Path, *, http: str = "auto") -> Iterator[tuple[str, int]]:
    """The bare Starlette+SQLite floor (``baseline_app.py``, on uvicorn's ``http`` protocol) on ``tmp``/base-HTTP.db
    holding :data:`PETS`: (URL, its process group)."""
    base_db = tmp / f"base-{http}.db"
    sqlite3.connect(base_db).close()
    argv = [PY, str(BENCH / "baseline_app.py"), "--db", str(base_db), "--http", http]
    with server_process(argv, env=clean_env(tmp, PETSTORE_SERVER_API_KEYS=API_KEY), ready=SERVING) as served:
        with sqlite3.connect(base_db) as conn:  # its table is made before it listens
            conn.executemany("INSERT INTO pets VALUES (?, ?, ?, ?)", PETS)
        conn.close()
        yield served


def throughput(args: argparse.Namespace, tmp: Path, pg: str) -> dict[str, dict[str, dict[str, float]]]:
    scripts = {name: wrk_script(tmp, name) for name in SCRIPTS}
    with contextlib.ExitStack() as stack:
        servers = {
            FLOOR: stack.enter_context(floor_server(tmp)),
            "SQLite x1": stack.enter_context(petstore(str(tmp / "pets.db"), tmp)),
            "PostgreSQL x1": stack.enter_context(petstore(pg, tmp)),
            "PostgreSQL x2": stack.enter_context(petstore(pg, tmp, workers=2)),
            # A reference: commits not waiting for the WAL flush, so a create's wait (and the service's idle
            # wake-ups it costs) is not the disk's; it may lose the last commits if PostgreSQL or the OS crashes.
            ASYNC_COMMIT: stack.enter_context(petstore(f"{pg}?options=-csynchronous_commit%3Doff", tmp)),
            # Another reference: the same server through its unix socket, as on one machine (no TCP stack).
            UNIX_SOCKET: stack.enter_context(petstore(unix_socket_url(pg), tmp)),
        }
        seed(str(tmp / "pets.db"), len(PETS))
        seed(pg, len(PETS))
        runs: dict[str, dict[str, list[dict[str, float]]]] = {label: {n: [] for n in SCRIPTS} for label in servers}
        for round_no in range(args.rounds):
            for name, script in scripts.items():
                for label, (url, pgid) in servers.items():
                    runs[label][name].append(wrk(url.split("/v1")[0], script, args.duration, pgid=pgid))
            print(f"  round {round_no + 1} of {args.rounds} done", flush=True)
    return {label: {name: combine(done) for name, done in by_load.items()} for label, by_load in runs.items()}


def deep_pages(count: int, tmp: Path, pg: str) -> dict[str, tuple[float, float]]:
    figures = {}
    for label, db in (("SQLite", str(tmp / "big.db")), ("PostgreSQL", pg)):
        with petstore(db, tmp) as (url, _):
            if db.startswith("postgresql://"):
                with psycopg.connect(db, autocommit=True) as conn:
                    conn.execute("TRUNCATE pets")
            started = time.perf_counter()
            seed(db, count)
            print(f"  {label}: {count:,} pets loaded in {time.perf_counter() - started:.1f} s", flush=True)
            base = url.split("/v1")[0] + "/v1"
            figures[label] = (page_latency(base, None), page_latency(base, count - 100))
    return figures


def print_throughput(results: dict[str, dict[str, dict[str, float]]]) -> list[dict[str, object]]:
    """The table of servers and workloads, and the targets' verdicts; returns the rows for the report."""
    rows: list[dict[str, object]] = []
    print(f"\n{'server':28} " + "  ".join(f"{n + ' req/s':>10} {'p99':>8} {'CPU/req':>9}" for n in SCRIPTS))
    for label, by_load in results.items():
        cells = "  ".join(
            f"{by_load[n]['rps']:>10.0f} {by_load[n]['p99_ms']:>6.1f}ms {by_load[n]['cpu_us']:>7.0f}us" for n in SCRIPTS
        )
        print(f"{label:28} {cells}")
        rows += [{"server": label, "load": n, **by_load[n]} for n in SCRIPTS]
    floor_ratio = results["SQLite x1"]["GET"]["rps"] / results[FLOOR]["GET"]["rps"]
    print(f"\nSQLite x1 / floor (GET req/s): {floor_ratio:.2f}x (target >= 1.0x) {verdict(floor_ratio >= 1.0)}")
    for load in SCRIPTS:
        for label in ("PostgreSQL x1", "PostgreSQL x2", ASYNC_COMMIT, UNIX_SOCKET):
            ratio = results[label][load]["cpu_us"] / results["SQLite x1"][load]["cpu_us"]
            target = f"(target <= 1.5x) {verdict(ratio <= 1.5)}" if label == "PostgreSQL x1" and load != "MIX" else ""
            print(f"{label} / SQLite x1, service CPU per request ({load}): {ratio:.2f}x {target}", flush=True)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--duration", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--big", type=int, default=1_000_000)
    args = parser.parse_args()
    with scratch() as tmp, pg_database() as pg:
        results = throughput(args, tmp, pg)
        rows = print_throughput(results)
        big = deep_pages(args.big, tmp, pg) if args.big else {}
    for label, (first, deep) in big.items():
        print(f"{args.big:,} pets on {label}: first page {first:.2f} ms, deep page {deep:.2f} ms (median)")
        rows.append({"backend": label, "pets": args.big, "first_page_ms": first, "deep_page_ms": deep})
    report("bench_backends", rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The service on each backend, side by side in one run: wrk (2 threads, 16 connections), loopback only.

    .venv/bin/python bench/bench_backends.py [--duration 5] [--big 1000000]

Servers: the bare Starlette+SQLite floor (bench/baseline_app.py), ``petstore serve`` on SQLite x1
worker, on PostgreSQL x1 and x2 workers (a database created for the run and dropped after).
Workloads: GET /v1/pets?limit=20, POST /v1/pets (a distinct Idempotency-Key each, as the client
sends), and a 50/50 mix. Figures: requests/s and p99 latency. Then ``--big`` pets per backend:
median latency of the first page and of a deep page (cursor near the end), 200 requests each.
Targets: SQLite x1 >= 1.0x the floor (GET); PostgreSQL x2 >= 1.3x SQLite x1 on the mix.
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
from _common import API_KEY, BENCH, PETSTORE, PY, clean_env, report, scratch, server, verdict

PG_ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"
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


def wrk(origin: str, script: Path, duration: int) -> dict[str, float]:
    argv = ["wrk", "-t2", "-c16", f"-d{duration}s", "--timeout", "5s", "--latency", "-s", str(script), origin]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=duration + 60).stdout
    rate = re.search(r"Requests/sec:\s+([\d.]+)", out)
    p99 = re.search(r"99%\s+([\d.]+)(us|ms|s)", out)
    if rate is None or p99 is None or re.search(r"Non-2xx|Socket errors", out):
        raise RuntimeError(f"wrk failed against {origin}:\n{out}")
    scale = {"us": 0.001, "ms": 1.0, "s": 1000.0}
    return {"rps": float(rate.group(1)), "p99_ms": float(p99.group(1)) * scale[p99.group(2)]}


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


def petstore(db: str, tmp: Path, workers: int = 1) -> contextlib.AbstractContextManager[str]:
    argv = [PETSTORE, "serve", "--port", "0", "--db", db, "--workers", str(workers)]
    return server(argv, env=clean_env(tmp, PETSTORE_SERVER_API_KEYS=API_KEY))


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


def throughput(args: argparse.Namespace, tmp: Path, pg: str) -> dict[str, dict[str, dict[str, float]]]:
    scripts = {}
    for name, body in SCRIPTS.items():
        scripts[name] = tmp / f"{name}.lua"
        scripts[name].write_text(_HEAD + _POST.replace("@RUN@", uuid.uuid4().hex[:8]) + body)
    base_db = tmp / "base.db"
    sqlite3.connect(base_db).close()
    floor = [PY, str(BENCH / "baseline_app.py"), "--db", str(base_db)]
    setups = {
        "floor (Starlette+SQLite)": lambda: server(floor, env=clean_env(tmp, PETSTORE_SERVER_API_KEYS=API_KEY)),
        "SQLite x1": lambda: petstore(str(tmp / "pets.db"), tmp),
        "PostgreSQL x1": lambda: petstore(pg, tmp),
        "PostgreSQL x2": lambda: petstore(pg, tmp, workers=2),
        # Same durability class as SQLite's WAL + synchronous=NORMAL: survives a crash of the
        # service (and of PostgreSQL), may lose the last few commits on an OS crash.
        "PostgreSQL x2 async commit": lambda: petstore(f"{pg}?options=-csynchronous_commit%3Doff", tmp, workers=2),
    }
    results: dict[str, dict[str, dict[str, float]]] = {}
    for label, start in setups.items():
        with start() as url:
            origin = url.split("/v1")[0]
            if label.startswith("floor"):
                sqlite3.connect(base_db).executemany("INSERT INTO pets VALUES (?, ?, ?, ?)", PETS).connection.commit()
            elif not label.startswith("PostgreSQL x2"):
                seed(str(tmp / "pets.db") if label.startswith("SQLite") else pg, len(PETS))
            results[label] = {name: wrk(origin, script, args.duration) for name, script in scripts.items()}
    return results


def deep_pages(count: int, tmp: Path, pg: str) -> dict[str, tuple[float, float]]:
    figures = {}
    for label, db in (("SQLite", str(tmp / "big.db")), ("PostgreSQL", pg)):
        with petstore(db, tmp) as url:
            if db.startswith("postgresql://"):
                with psycopg.connect(db, autocommit=True) as conn:
                    conn.execute("TRUNCATE pets")
            started = time.perf_counter()
            seed(db, count)
            print(f"  {label}: {count:,} pets loaded in {time.perf_counter() - started:.1f} s", flush=True)
            base = url.split("/v1")[0] + "/v1"
            figures[label] = (page_latency(base, None), page_latency(base, count - 100))
    return figures


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--duration", type=int, default=5)
    parser.add_argument("--big", type=int, default=1_000_000)
    args = parser.parse_args()
    with scratch() as tmp, pg_database() as pg:
        results = throughput(args, tmp, pg)
        big = deep_pages(args.big, tmp, pg)
    rows: list[dict[str, object]] = []
    print(f"\n{'server':28} " + "  ".join(f"{n + ' req/s':>11} {n + ' p99':>10}" for n in SCRIPTS))
    for label, by_load in results.items():
        cells = "  ".join(f"{by_load[n]['rps']:>11.0f} {by_load[n]['p99_ms']:>8.1f}ms" for n in SCRIPTS)
        print(f"{label:28} {cells}")
        rows += [{"server": label, "load": n, **by_load[n]} for n in SCRIPTS]
    floor_ratio = results["SQLite x1"]["GET"]["rps"] / results["floor (Starlette+SQLite)"]["GET"]["rps"]
    mix_ratio = results["PostgreSQL x2"]["MIX"]["rps"] / results["SQLite x1"]["MIX"]["rps"]
    print(f"\nSQLite x1 / floor (GET): {floor_ratio:.2f}x (target >= 1.0x) {verdict(floor_ratio >= 1.0)}")
    print(f"PostgreSQL x2 / SQLite x1 (50/50 mix): {mix_ratio:.2f}x (target >= 1.3x) {verdict(mix_ratio >= 1.3)}")
    relaxed = results["PostgreSQL x2 async commit"]["MIX"]["rps"] / results["SQLite x1"]["MIX"]["rps"]
    print(f"PostgreSQL x2 async commit / SQLite x1 (50/50 mix): {relaxed:.2f}x {verdict(relaxed >= 1.3)}")
    for label, (first, deep) in big.items():
        print(f"{args.big:,} pets on {label}: first page {first:.2f} ms, deep page {deep:.2f} ms (median)")
        rows.append({"backend": label, "pets": args.big, "first_page_ms": first, "deep_page_ms": deep})
    report("bench_backends", rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())

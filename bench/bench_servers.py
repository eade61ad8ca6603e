"""Which HTTP server runs the service: the same app (SQLite, one worker) on each, side by side in one run.

    flock /work/cpu.lock .venv/bin/python bench/bench_servers.py [--duration 5] [--rounds 3]

Servers: ``petstore serve`` (uvicorn's httptools protocol with the head deadline and connection cap of
petstore_server/guard.py), plain uvicorn (httptools, and h11), Granian (Rust, ASGI), Hypercorn, gunicorn with uvicorn's worker.
Those not installed are skipped (``pip install granian hypercorn gunicorn`` to compare them all). Workload:
wrk (2 threads, 16 connections) GET /v1/pets?limit=20 and POST /v1/pets (an Idempotency-Key each), round-robin
over ``--rounds``. Figures: requests/s, p99, and the server's own CPU per request (utime+stime of its process
group over the run divided by requests); medians over the rounds.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import statistics
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import API_KEY, BENCH, PETSTORE, PY, _wait_port, clean_env, free_port, report, scratch, stop
from bench_backends import wrk, wrk_script

BIN = Path(PY).parent
_TICK = os.sysconf("SC_CLK_TCK")


def commands(db: Path) -> dict[str, list[str]]:
    """The servers to compare, as argv with the port left as PORT; a server whose program is missing is left out."""
    app = "server_app:app"
    where = ["--host", "127.0.0.1", "--port", "PORT"]
    found = {
        "petstore serve (uvicorn httptools + guard)": [PETSTORE, "serve", *where, "--db", str(db), "--no-access-log"],
        "uvicorn httptools": [
            str(BIN / "uvicorn"),
            app,
            *where,
            "--http",
            "httptools",
            "--no-access-log",
            "--log-level",
            "warning",
        ],
        "uvicorn h11": [
            str(BIN / "uvicorn"),
            app,
            *where,
            "--http",
            "h11",
            "--no-access-log",
            "--log-level",
            "warning",
        ],
        "granian": [
            str(BIN / "granian"),
            "--interface",
            "asgi",
            *where,
            "--workers",
            "1",
            "--log-level",
            "warning",
            app,
        ],
        "hypercorn": [str(BIN / "hypercorn"), "--bind", "127.0.0.1:PORT", "--log-level", "warning", app],
        "gunicorn + uvicorn worker": [
            str(BIN / "gunicorn"),
            "--bind",
            "127.0.0.1:PORT",
            "--workers",
            "1",
            "--worker-class",
            "uvicorn.workers.UvicornH11Worker",
            app,
        ],
    }
    return {name: argv for name, argv in found.items() if Path(argv[0]).exists() or shutil.which(argv[0])}


def group_cpu_seconds(pgid: int) -> float:
    """utime+stime of every live process in process group ``pgid``."""
    total = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            if int(fields[2]) == pgid:
                total += int(fields[11]) + int(fields[12])
    return total / _TICK


@contextlib.contextmanager
def running(argv: list[str], *, port: int, env: dict[str, str]) -> Iterator[int]:
    proc = subprocess.Popen(
        argv, cwd=BENCH, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    try:
        _wait_port(proc, port, 60)
        yield proc.pid
    finally:
        stop(proc)


def measure(argv: list[str], *, db: Path, tmp: Path, scripts: dict[str, Path], duration: int) -> dict[str, dict]:
    port = free_port()
    env = clean_env(tmp, PETSTORE_SERVER_API_KEYS=API_KEY, PETSTORE_BENCH_DB=str(db), PYTHONPATH=str(BENCH))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    figures = {}
    with running([arg.replace("PORT", str(port)) for arg in argv], port=port, env=env) as pgid:
        origin = f"http://127.0.0.1:{port}"
        wrk(origin, scripts["GET"], 1, pgid=pgid)  # warm-up
        for workload, script in scripts.items():
            result = wrk(origin, script, duration, pgid=pgid)
            result["cpu_us_per_request"] = result["cpu_s"] / result["requests"] * 1e6
            figures[workload] = result
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--duration", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with scratch() as tmp:
        db = tmp / "pets.db"
        from petstore_server.store import PetStore

        pets = PetStore(db)
        pets.seed_sample()
        pets.close()
        scripts = {workload: wrk_script(tmp, workload) for workload in ("GET", "POST")}
        runs: dict[str, list[dict[str, dict]]] = {}
        for _ in range(args.rounds):
            for name, argv in commands(db).items():
                figures = measure(argv, db=db, tmp=tmp, scripts=scripts, duration=args.duration)
                runs.setdefault(name, []).append(figures)
                print(name, {w: {k: round(v, 2) for k, v in f.items()} for w, f in figures.items()}, flush=True)
    rows = []
    for name, results in runs.items():
        row: dict[str, object] = {"server": name}
        for workload in ("GET", "POST"):
            row[f"{workload}_rps"] = round(statistics.median(r[workload]["rps"] for r in results))
            row[f"{workload}_p99_ms"] = round(statistics.median(r[workload]["p99_ms"] for r in results), 2)
            row[f"{workload}_cpu_us"] = round(statistics.median(r[workload]["cpu_us_per_request"] for r in results))
        rows.append(row)
    report("bench_servers", rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())

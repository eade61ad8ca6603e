"""Command loop: 1,000 ``/add`` + 1,000 ``/list`` through ``petstore run --json`` (one process,
a 2,000-line script) against ``petstore serve``, vs a raw ``httpx.AsyncClient`` loop making the
same 2,000 requests sequentially (bench/raw_loop.py). Target: >= 0.9x the raw rate.

    .venv/bin/python bench/bench_commands.py [--rounds 3] [--adds 1000] [--lists 1000]

Two rates per side, median over the rounds (the two sides alternate on one server):
- whole process: requests / wall time of the process, start-up included on both sides;
- steady state: (requests - 1) / time from the first to the last completed request
  (petstore: stdout line arrival; raw loop: its own clock).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import (  # noqa: E402
    API_KEY,
    BENCH,
    PETSTORE,
    PY,
    clean_env,
    deadline,
    petstore_server,
    report,
    scratch,
    verdict,
)


def write_script(path: Path, adds: int, lists: int) -> None:
    lines = [f'/add "Pet {i}" --category {i % 5 + 1} --status available' for i in range(adds)]
    lines += ["/list"] * lists
    path.write_text("\n".join(lines) + "\n")


def run_petstore(script: Path, url: str, env: dict[str, str], expected: int) -> tuple[float, float]:
    """(wall seconds, seconds from first to last result line).

    The pipe is drained with large ``os.read`` calls and only the arrival times of the first and
    the last bytes are taken; the lines are checked after the process ends. Parsing each line as
    it arrives (as this script once did) is a third busy process on the two cores, beside the
    server and the client, that the raw loop (which prints one line at its end) does not have:
    it cost petstore ~4 % of its rate.
    """
    argv = [PETSTORE, "run", "--json", str(script), "--base-url", url]
    started = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert proc.stdout is not None and proc.stderr is not None
    fd = proc.stdout.fileno()
    chunks: list[bytes] = []
    first = last = 0.0
    while chunk := os.read(fd, 1 << 20):
        last = time.perf_counter()
        first = first or last
        chunks.append(chunk)
    err = proc.stderr.read()
    code = proc.wait(timeout=60)
    wall = time.perf_counter() - started
    lines = b"".join(chunks).splitlines()
    if code != 0 or len(lines) != expected:
        raise RuntimeError(f"petstore run exited {code} after {len(lines)} results: {err[-1000:]!r}")
    failed = [line for line in lines if not json.loads(line)["ok"]]
    if failed:
        raise RuntimeError(f"petstore run: a command failed: {failed[0][:300]!r}")
    return wall, last - first


def run_raw(url: str, env: dict[str, str], adds: int, lists: int) -> tuple[float, float]:
    argv = [PY, str(BENCH / "raw_loop.py"), url, API_KEY, str(adds), str(lists)]
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, env=env, timeout=600)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"raw loop failed: {done.stderr[-1000:]!r}")
    out = json.loads(done.stdout)
    return wall, out["last"] - out["first"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--adds", type=int, default=1000)
    parser.add_argument("--lists", type=int, default=1000)
    parser.add_argument("--budget", type=float, default=600, help="hard time limit in seconds")
    args = parser.parse_args()
    n = args.adds + args.lists
    walls: dict[str, list[float]] = {"petstore": [], "raw": []}
    steady: dict[str, list[float]] = {"petstore": [], "raw": []}
    with deadline(args.budget), scratch() as tmp:
        env = clean_env(tmp, PETSTORE_API_KEY=API_KEY)
        script = tmp / "commands.txt"
        write_script(script, args.adds, args.lists)
        with petstore_server(tmp / "pets.db") as url:
            run_raw(url, env, 50, 50)  # warm-up: bytecode caches, the server's first requests
            for i in range(args.rounds):
                order = ["petstore", "raw"] if i % 2 == 0 else ["raw", "petstore"]
                for side in order:
                    wall, span = (run_petstore(script, url, env, n) if side == "petstore"
                                  else run_raw(url, env, args.adds, args.lists))
                    walls[side].append(wall)
                    steady[side].append(span)
                    print(f"round {i + 1} {side}: {n / wall:.0f} req/s whole process, "
                          f"{(n - 1) / span:.0f} req/s steady", flush=True)
    p_wall, r_wall = (n / statistics.median(walls[s]) for s in ("petstore", "raw"))
    p_steady, r_steady = ((n - 1) / statistics.median(steady[s]) for s in ("petstore", "raw"))
    rows = [
        {"what": f"petstore run --json ({args.adds} /add + {args.lists} /list), whole process",
         "rate_req_s": round(p_wall), "floor": "raw httpx.AsyncClient loop, whole process",
         "floor_req_s": round(r_wall), "ratio": round(p_wall / r_wall, 2), "target": ">= 0.9x",
         "verdict": verdict(p_wall / r_wall >= 0.9)},
        {"what": "same, steady state (first to last result)", "rate_req_s": round(p_steady),
         "floor": "raw loop, first to last response", "floor_req_s": round(r_steady),
         "ratio": round(p_steady / r_steady, 2), "target": ">= 0.9x", "verdict": verdict(p_steady / r_steady >= 0.9)},
    ]
    report("commands", rows)
    print(f"\nwhole process: petstore {p_wall:.0f} req/s vs raw {r_wall:.0f} req/s = {p_wall / r_wall:.2f}x   "
          f"target >= 0.9x   {verdict(p_wall / r_wall >= 0.9)}")
    print(f"steady state:  petstore {p_steady:.0f} req/s vs raw {r_steady:.0f} req/s = "
          f"{p_steady / r_steady:.2f}x   target >= 0.9x   {verdict(p_steady / r_steady >= 0.9)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Command loop: 1,000 ``/add`` + 1,000 ``/list`` through ``petstore run --json`` (one process,
a 2,000-line script) against ``petstore serve``, vs a raw ``httpx.AsyncClient`` loop making the
same 2,000 requests sequentially (bench/raw_loop.py). Target: >= 0.95x the raw rate (issue 20; it was 0.9x).

    .venv/bin/python bench/bench_commands.py [--rounds 5] [--adds 1000] [--lists 1000]

Two rates per side, median over the rounds (the sides alternate on one server):
- whole process: requests / wall time of the process, start-up included on both sides;
- steady state: the 1,998 requests more than a 2-request run (one /add, one /list) of the same
  process, over the difference of the two wall times: start-up and exit cancel out.
Also reported (no verdict): each side's CPU time (user + system, from the kernel's accounting of
the child) per command in the full run, which the load of other jobs on the shared cores moves far
less than the wall time.
petstore's output goes to a file and is checked (every line a JSON result with ok: true) after
the process ends. Neither side has a live reader: one reading petstore's lines as they came,
as the first versions of this script did, was a third busy process on the two cores that the
raw loop (one line at its end) does not have; it cost petstore 2-4 % of its rate.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import (
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


def children_cpu() -> float:
    """CPU seconds (user + system) of every child waited for so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_petstore(script: Path, url: str, env: dict[str, str], expected: int, out: Path) -> float:
    """Wall seconds of ``petstore run --json SCRIPT``, its output written to ``out`` and checked."""
    argv = [PETSTORE, "run", "--json", str(script), "--base-url", url]
    with out.open("wb") as fh:
        started = time.perf_counter()
        done = subprocess.run(argv, stdout=fh, stderr=subprocess.PIPE, env=env, timeout=600)
        wall = time.perf_counter() - started
    lines = out.read_bytes().splitlines()
    if done.returncode != 0 or len(lines) != expected:
        raise RuntimeError(f"petstore run exited {done.returncode} after {len(lines)} results: {done.stderr[-1000:]!r}")
    failed = [line for line in lines if not json.loads(line)["ok"]]
    if failed:
        raise RuntimeError(f"petstore run: a command failed: {failed[0][:300]!r}")
    return wall


def run_raw(url: str, env: dict[str, str], adds: int, lists: int) -> float:
    """Wall seconds of the raw loop making the same requests."""
    argv = [PY, str(BENCH / "raw_loop.py"), url, API_KEY, str(adds), str(lists)]
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, env=env, timeout=600)
    wall = time.perf_counter() - started
    if done.returncode != 0 or json.loads(done.stdout)["n"] != adds + lists:
        raise RuntimeError(f"raw loop failed: {done.stderr[-1000:]!r}")
    return wall


def run_round(
    sides: list[str],
    scripts: dict[str, Path],
    url: str,
    env: dict[str, str],
    args: argparse.Namespace,
    out: Path,
    cpus: dict[str, list[float]],
) -> dict[str, tuple[float, float]]:
    """Per side: (wall of the full run, wall of the 2-request run); the full run's CPU appended to ``cpus``."""
    n = args.adds + args.lists
    walls = {}
    for side in sides:
        cpu = children_cpu()
        full = (
            run_petstore(scripts["full"], url, env, n, out)
            if side == "petstore"
            else run_raw(url, env, args.adds, args.lists)
        )
        cpus[side].append(children_cpu() - cpu)
        short = run_petstore(scripts["short"], url, env, 2, out) if side == "petstore" else run_raw(url, env, 1, 1)
        walls[side] = (full, short)
    return walls


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--adds", type=int, default=1000)
    parser.add_argument("--lists", type=int, default=1000)
    parser.add_argument("--budget", type=float, default=600, help="hard time limit in seconds")
    args = parser.parse_args()
    n = args.adds + args.lists
    full: dict[str, list[float]] = {"petstore": [], "raw": []}
    short: dict[str, list[float]] = {"petstore": [], "raw": []}
    cpus: dict[str, list[float]] = {"petstore": [], "raw": []}
    with deadline(args.budget), scratch() as tmp:
        env = clean_env(tmp, PETSTORE_API_KEY=API_KEY)
        scripts = {"full": tmp / "commands.txt", "short": tmp / "two.txt"}
        write_script(scripts["full"], args.adds, args.lists)
        write_script(scripts["short"], 1, 1)
        with petstore_server(tmp / "pets.db") as url:
            run_raw(url, env, 50, 50)  # warm-up: bytecode caches, the server's first requests
            run_petstore(scripts["short"], url, env, 2, tmp / "out.jsonl")
            for i in range(args.rounds):
                order = ["petstore", "raw"] if i % 2 == 0 else ["raw", "petstore"]
                for side, (long_wall, short_wall) in run_round(
                    order, scripts, url, env, args, tmp / "out.jsonl", cpus
                ).items():
                    full[side].append(long_wall)
                    short[side].append(short_wall)
                    print(
                        f"round {i + 1} {side}: {n / long_wall:.0f} req/s whole process "
                        f"({long_wall:.2f} s; 2 requests: {short_wall:.3f} s; CPU {cpus[side][-1]:.2f} s)",
                        flush=True,
                    )
    p_wall, r_wall = (n / statistics.median(full[s]) for s in ("petstore", "raw"))
    p_steady, r_steady = (
        (n - 2) / (statistics.median(full[s]) - statistics.median(short[s])) for s in ("petstore", "raw")
    )
    p_cpu, r_cpu = (statistics.median(cpus[s]) / n * 1e6 for s in ("petstore", "raw"))
    rows = [
        {
            "what": f"petstore run --json ({args.adds} /add + {args.lists} /list), whole process",
            "rate_req_s": round(p_wall),
            "floor": "raw httpx.AsyncClient loop, whole process",
            "floor_req_s": round(r_wall),
            "ratio": round(p_wall / r_wall, 2),
            "target": ">= 0.95x",
            "verdict": verdict(p_wall / r_wall >= 0.95),
        },
        {
            "what": "same, steady state (full run minus a 2-request run)",
            "rate_req_s": round(p_steady),
            "floor": "raw loop, the same difference",
            "floor_req_s": round(r_steady),
            "ratio": round(p_steady / r_steady, 2),
            "target": ">= 0.95x",
            "verdict": verdict(p_steady / r_steady >= 0.95),
        },
        {
            "what": "CPU per command, full run (reference)",
            "cpu_us": round(p_cpu),
            "floor_cpu_us": round(r_cpu),
            "ratio": round(r_cpu / p_cpu, 2),
        },
    ]
    report("commands", rows)
    print(
        f"\nwhole process: petstore {p_wall:.0f} req/s vs raw {r_wall:.0f} req/s = {p_wall / r_wall:.2f}x   "
        f"target >= 0.95x   {verdict(p_wall / r_wall >= 0.95)}"
    )
    print(
        f"steady state:  petstore {p_steady:.0f} req/s vs raw {r_steady:.0f} req/s = "
        f"{p_steady / r_steady:.2f}x   target >= 0.95x   {verdict(p_steady / r_steady >= 0.95)}"
    )
    print(f"CPU (reference): petstore {p_cpu:.0f} us/command vs raw {r_cpu:.0f} us/command = {r_cpu / p_cpu:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The floor and ``petstore serve`` on SQLite, alone, GET only, in many interleaved rounds: the issue-31 target
"SQLite x1 >= 1.0x the bare Starlette+SQLite floor" measured with less drift than bench_backends.py's two rounds.

    flock /work/cpu.lock .venv/bin/python bench/bench_floor.py [--rounds 8] [--duration 5]

Each round drives the floor, then the service, with the same wrk load (GET /v1/pets?limit=20, wrk -t2 -c16), so a
drift of the machine's speed hits both alike. Prints each one's mean req/s and CPU per request and their ratio.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import scratch, verdict
from bench_backends import FLOOR, PETS, floor_server, petstore, seed, wrk, wrk_script


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--duration", type=int, default=5)
    args = parser.parse_args()
    with scratch() as tmp, contextlib.ExitStack() as stack:
        script = wrk_script(tmp, "GET")
        servers = {
            FLOOR: stack.enter_context(floor_server(tmp)),
            "SQLite x1": stack.enter_context(petstore(str(tmp / "pets.db"), tmp)),
        }
        seed(str(tmp / "pets.db"), len(PETS))
        totals = {label: dict.fromkeys(("rps", "cpu_s", "requests"), 0.0) for label in servers}  # summed over rounds
        for _ in range(args.rounds):
            for label, (url, pgid) in servers.items():
                run = wrk(url.split("/v1")[0], script, args.duration, pgid=pgid)
                for key in totals[label]:
                    totals[label][key] += run[key]
    for label, total in totals.items():
        cpu_us = total["cpu_s"] / total["requests"] * 1e6
        print(f"{label:26} {total['rps'] / args.rounds:8.0f} req/s {cpu_us:7.1f} us a request")
    ratio = totals["SQLite x1"]["rps"] / totals[FLOOR]["rps"]
    print(f"SQLite x1 / floor (GET req/s), {args.rounds} rounds: {ratio:.3f}x (target >= 1.0x) {verdict(ratio >= 1.0)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

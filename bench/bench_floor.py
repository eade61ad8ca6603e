"""The floor and ``petstore serve`` on SQLite, alone, GET only, in many interleaved rounds: the issue-31 target
"SQLite x1 >= 1.0x the bare Starlette+SQLite floor" measured with less drift than bench_backends.py's two rounds.

    flock /work/cpu.lock .venv/bin/python bench/bench_floor.py [--rounds 8] [--duration 5] [--floor-h11]
        [--tree LABEL=DIR]

Each round drives the floor, then the service, with the same wrk load (GET /v1/pets?limit=20, wrk -t2 -c16), so a
drift of the machine's speed hits both alike. Prints each one's mean req/s and CPU per request and their ratio.
``--floor-h11`` adds the floor on uvicorn's h11 protocol (the floor before httptools was installed); ``--tree`` adds
``petstore serve`` from another source tree of the project (``git archive``), through ``PYTHONPATH``.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import API_KEY, PETSTORE, clean_env, scratch, server_process, tree_env, trees, verdict
from bench_backends import FLOOR, PETS, SERVING, floor_server, petstore, seed, wrk, wrk_script

FLOOR_H11 = "floor on h11"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--duration", type=int, default=5)
    parser.add_argument("--floor-h11", action="store_true")
    parser.add_argument("--tree", action="append", default=[], metavar="LABEL=DIR")
    args = parser.parse_args()
    with scratch() as tmp, contextlib.ExitStack() as stack:
        script = wrk_script(tmp, "GET")
        servers = {
            FLOOR: stack.enter_context(floor_server(tmp)),
            "SQLite x1": stack.enter_context(petstore(str(tmp / "pets.db"), tmp)),
        }
        if args.floor_h11:
            servers[FLOOR_H11] = stack.enter_context(floor_server(tmp, http="h11"))
        seed(str(tmp / "pets.db"), len(PETS))
        for label, tree in trees(args.tree).items():
            db = tmp / f"{label}.db"
            env = tree_env(clean_env(tmp, PETSTORE_SERVER_API_KEYS=API_KEY), tree)
            argv = [PETSTORE, "serve", "--port", "0", "--db", str(db)]
            servers[label] = stack.enter_context(server_process(argv, env=env, ready=SERVING))
            seed(str(db), len(PETS))
        totals = {label: dict.fromkeys(("rps", "cpu_s", "requests"), 0.0) for label in servers}  # summed over rounds
        for _ in range(args.rounds):
            for label, (url, pgid) in servers.items():
                run = wrk(url.split("/v1")[0], script, args.duration, pgid=pgid)
                for key in totals[label]:
                    totals[label][key] += run[key]
    for label, total in totals.items():
        cpu_us = total["cpu_s"] / total["requests"] * 1e6
        print(f"{label:26} {total['rps'] / args.rounds:8.0f} req/s {cpu_us:7.1f} us a request")
    for label in totals:
        if label != FLOOR:
            ratio = totals[label]["rps"] / totals[FLOOR]["rps"]
            print(
                f"{label} / floor (GET req/s), {args.rounds} rounds: {ratio:.3f}x (target >= 1.0x) {verdict(ratio >= 1.0)}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

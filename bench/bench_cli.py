"""CLI start-up: ``petstore --version`` and ``petstore run -c /list`` against ``petstore serve``.

    .venv/bin/python bench/bench_cli.py [--reps 40]

Floors, measured in the same run, round-robin with the product:
- ``python -c pass`` (interpreter start-up; for orientation, the target is absolute: < 60 ms, issue 20);
- ``python -c 'import httpx; httpx.get(URL, headers=auth)'`` doing the same request as
  ``petstore run -c /list`` (target: petstore <= 1.25x, issue 20; it was 1.5x).
Each figure is the median wall time of fresh processes.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import (
    API_KEY,
    PETSTORE,
    PY,
    clean_env,
    deadline,
    interleaved,
    median_ms,
    petstore_server,
    report,
    scratch,
    spread,
    verdict,
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=40, help="runs of each command (default 40)")
    parser.add_argument("--budget", type=float, default=300, help="hard time limit in seconds")
    args = parser.parse_args()
    with deadline(args.budget), scratch() as tmp:
        env = clean_env(tmp, PETSTORE_API_KEY=API_KEY)
        version = interleaved(
            {"petstore --version": [PETSTORE, "--version"], "python -c pass": [PY, "-c", "pass"]},
            reps=args.reps,
            env=env,
        )
        with petstore_server(tmp / "pets.db") as url:
            floor = (
                f"import httpx; r = httpx.get({url + '/pets'!r}, headers={{'Authorization': 'Bearer {API_KEY}'}});"
                " r.raise_for_status()"
            )
            listing = interleaved(
                {
                    "petstore run -c /list": [PETSTORE, "run", "-c", "/list", "--base-url", url],
                    "python -c 'import httpx; httpx.get(...)'": [PY, "-c", floor],
                },
                reps=args.reps,
                env=env,
            )
    v, p = median_ms(version["petstore --version"]), median_ms(version["python -c pass"])
    r, h = (median_ms(listing["petstore run -c /list"]), median_ms(listing["python -c 'import httpx; httpx.get(...)'"]))
    rows = [
        {
            "what": "petstore --version",
            "median_ms": round(v, 1),
            "min..p90_ms": spread(version["petstore --version"]),
            "floor": "python -c pass",
            "floor_ms": round(p, 1),
            "ratio": round(v / p, 2),
            "target": "< 60 ms",
            "verdict": verdict(v < 60),
        },
        {
            "what": "petstore run -c /list",
            "median_ms": round(r, 1),
            "min..p90_ms": spread(listing["petstore run -c /list"]),
            "floor": "python -c 'import httpx; httpx.get(...)'",
            "floor_ms": round(h, 1),
            "floor_min..p90_ms": spread(listing["python -c 'import httpx; httpx.get(...)'"]),
            "ratio": round(r / h, 2),
            "target": "<= 1.25x",
            "verdict": verdict(r / h <= 1.25),
        },
    ]
    report("cli", rows)
    print(f"\npetstore --version: {v:.1f} ms median ({args.reps} runs)   target < 60 ms   {verdict(v < 60)}")
    print(
        f"petstore run -c /list: {r:.1f} ms vs httpx one-liner {h:.1f} ms = {r / h:.2f}x   "
        f"target <= 1.25x   {verdict(r / h <= 1.25)}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

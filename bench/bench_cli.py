"""CLI start-up: ``petstore --version`` and ``petstore run -c /list`` against ``petstore serve``.

    .venv/bin/python bench/bench_cli.py [--reps 40] [--tree LABEL=DIR ...]

Floors, measured in the same run, round-robin with the product:
- ``python -c pass`` (interpreter start-up; for orientation, the target is absolute: < 40 ms, issue 41; it was 60 ms in issue 20);
- ``python -c 'import httpx; httpx.get(URL, headers=auth)'`` doing the same request as
  ``petstore run -c /list`` (target: petstore <= 1.25x, issue 20; it was 1.5x).
Each figure is the median wall time of fresh processes. ``--tree LABEL=DIR`` (repeatable) times another
source tree of the project too (an earlier commit's ``git archive``), in the same rounds, to say what a
change was worth.
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
    tree_env,
    trees,
    verdict,
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=40, help="runs of each command (default 40)")
    parser.add_argument("--budget", type=float, default=300, help="hard time limit in seconds")
    parser.add_argument("--tree", action="append", default=[], metavar="LABEL=DIR", help="another source tree to time")
    args = parser.parse_args()
    others = trees(args.tree)
    with deadline(args.budget), scratch() as tmp:
        env = clean_env(tmp, PETSTORE_API_KEY=API_KEY)
        envs = {
            f"{case} [{label}]": tree_env(env, tree)
            for label, tree in others.items()
            for case in ("petstore --version", "petstore run -c /list")
        }
        version = interleaved(
            {
                "petstore --version": [PETSTORE, "--version"],
                "python -c pass": [PY, "-c", "pass"],
                **{f"petstore --version [{label}]": [PETSTORE, "--version"] for label in others},
            },
            reps=args.reps,
            env=env,
            envs=envs,
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
                    **{
                        f"petstore run -c /list [{label}]": [PETSTORE, "run", "-c", "/list", "--base-url", url]
                        for label in others
                    },
                },
                reps=args.reps,
                env=env,
                envs=envs,
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
            "target": "< 40 ms",
            "verdict": verdict(v < 40),
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
    lines = [
        f"petstore --version: {v:.1f} ms median ({args.reps} runs)   target < 40 ms   {verdict(v < 40)}",
        f"petstore run -c /list: {r:.1f} ms vs httpx one-liner {h:.1f} ms = {r / h:.2f}x   "
        f"target <= 1.25x   {verdict(r / h <= 1.25)}",
    ]
    for label in others:
        tv = median_ms(version[f"petstore --version [{label}]"])
        tr = median_ms(listing[f"petstore run -c /list [{label}]"])
        rows.append({"what": f"petstore --version [{label}]", "median_ms": round(tv, 1)})
        rows.append({"what": f"petstore run -c /list [{label}]", "median_ms": round(tr, 1), "ratio": round(tr / h, 2)})
        lines.append(f"[{label}] petstore --version: {tv:.1f} ms; petstore run -c /list: {tr:.1f} ms = {tr / h:.2f}x")
    report("cli", rows)
    print("\n" + "\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())

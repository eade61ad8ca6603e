"""Bots, terminals and the real ``petstore`` on one SQLite state file for minutes: nothing acknowledged is lost.

    .venv/bin/python bench/state_soak.py [--seconds 300] [--bots 2] [--terminals 2] [--no-commands]

The long run of tests/state/test_shared_sqlite.py (its ~20 s are the suite's): ``--bots`` processes each holding
the state database and a lease on it (two connections, as ``petstore bot``) and writing rows, ``--terminals``
processes opening the state, writing a row and closing it again and again, and the real ``petstore --env production
add NAME --no-wait`` and ``petstore approvals`` in turn, for ``--seconds``. Then every acknowledged row and request
must read back as written, ``PRAGMA integrity_check`` say ``ok``, and the file and its WAL and -shm be 0600. Exits 1
when anything is wrong. A correctness soak, not a timing: the rates are printed for the record only.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from _common import deadline, report, scratch
from state import state_hammer


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=300.0, help="how long the processes share the file")
    parser.add_argument("--bots", type=int, default=2)
    parser.add_argument("--terminals", type=int, default=2)
    parser.add_argument("--no-commands", action="store_true", help="without the real petstore commands")
    args = parser.parse_args()
    with deadline(args.seconds + 300), scratch() as home:
        started = time.monotonic()
        run = state_hammer.hammer(
            home, seconds=args.seconds, bots=args.bots, terminals=args.terminals, commands=not args.no_commands
        )
        took = time.monotonic() - started
        found = state_hammer.problems(home, run) + run.failures
    row: dict[str, object] = {
        "seconds": round(took, 1),
        "processes": args.bots + args.terminals,
        "rows acknowledged": len(run.rows),
        "requests acknowledged": len(run.requests),
        "petstore commands": run.commands,
        "rows a second": round(len(run.rows) / took),
        "busy (not acknowledged)": run.busy,
        "lease taken or lost": sum("lease hammer" in line for line in run.logged),
        "problems": len(found),
    }
    print(row, flush=True)  # before report(), which may fail on its own
    for line in found[:20]:
        print(f"problem: {line}")
    print("every acknowledged row read back, integrity ok, 0600" if not found else f"{len(found)} problems", flush=True)
    report("state_soak", [row])
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())

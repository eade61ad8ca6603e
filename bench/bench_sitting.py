"""Issue 41's table in one sitting: every start-up and service figure against its floor, one bench after another,
with an earlier tree of the project in the same rounds where the bench can time one.

    .venv/bin/python bench/bench_sitting.py --base-venv DIR [--old DIR] [--quick]

``--base-venv``: a base install (``python3 -m venv DIR && DIR/bin/pip install .``, as the README's first command
makes: bytecode compiled, no extras) whose programs the start-up benches time. ``--old``: an earlier tree
(``git archive --prefix=old/ REV | tar -x -C /tmp``), timed through ``PYTHONPATH`` beside this one by the benches
that take ``--tree`` (the CLI, the TUI, the service against its floor, the imports); its dependencies must be in
the base venv. ``--quick``: fewer rounds (a check that every bench runs, not a figure).

Runs, in this order: ``bench_cli.py`` (``--version``, ``run -c /list``), ``bench_startup.py`` (the imports of
each path and of the bot to its first login), ``bench_tui.py`` (first frame, pets on screen), ``bench_floor.py``
(the service against bare Starlette+SQLite, GET), ``bench_service.py`` (against Prism, and POST),
``bench_commands.py`` (2,000 scripted commands against a raw httpx loop) and ``bench_backends.py --big 0``
(PostgreSQL's CPU per request against SQLite's). Each prints its own rows and verdicts and saves them in
``bench/results/<name>.json``; the whole output goes to ``bench/results/sitting.log`` too. The load average is
printed before and after each bench: a figure is a quiet machine's only if the load stayed low.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
PY = str(BENCH.parent / ".venv" / "bin" / "python")


def steps(*, old: Path | None, quick: bool) -> list[tuple[list[str], bool]]:
    """(argv after the script's path, whether it times the base venv) of each bench, in order."""
    tree = ["--tree", f"old={old}"] if old is not None else []
    reps = ["--reps", "6"] if quick else []
    rounds = ["--rounds", "1", "--duration", "2"] if quick else []
    return [
        (["bench_cli.py", "--reps", "6" if quick else "40", *tree], True),
        (["bench_startup.py", "--reps", "1" if quick else "3", "--top", "25", *tree], True),
        (["bench_tui.py", "--no-posting", "--no-scale", *reps, *tree], True),
        (["bench_floor.py", *(rounds or ["--rounds", "8"]), *tree], False),
        (["bench_service.py", *(rounds or ["--duration", "5", "--rounds", "3"])], False),
        (["bench_commands.py", *(["--rounds", "1", "--adds", "100", "--lists", "100"] if quick else [])], False),
        (["bench_backends.py", "--big", "0", *rounds], False),
    ]


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base-venv", type=Path, required=True, help="a base install's venv")
    parser.add_argument("--old", type=Path, help="an earlier source tree of the project")
    parser.add_argument("--quick", action="store_true", help="fewer rounds: check the benches run")
    args = parser.parse_args()
    if not (args.base_venv / "bin" / "petstore").is_file():
        print(f"bench_sitting: no petstore in {args.base_venv}/bin (pip install . into it first)", file=sys.stderr)
        return 2
    (BENCH / "results").mkdir(exist_ok=True)
    failed = 0
    with open(BENCH / "results" / "sitting.log", "w", encoding="utf-8") as log:
        for argv, base in steps(old=args.old.resolve() if args.old else None, quick=args.quick):
            env = {**os.environ, **({"BENCH_VENV": str(args.base_venv.resolve())} if base else {})}
            head = f"\n=== {time.strftime('%H:%M:%S')} load {load()}: {' '.join(argv)}\n"
            print(head, end="", flush=True)
            log.write(head)
            done = subprocess.run([PY, str(BENCH / argv[0]), *argv[1:]], env=env, capture_output=True, text=True)
            out = done.stdout + (done.stderr if done.returncode else "")
            print(out, end="", flush=True)
            log.write(out + f"=== exit {done.returncode}, load {load()}\n")
            failed += done.returncode != 0
    print(f"\n{failed} bench(es) failed" if failed else "\nevery bench ran")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

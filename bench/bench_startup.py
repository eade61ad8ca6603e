"""Where start-up goes: ``python -X importtime`` of each path against its floor, the top costs, and (``--callgrind``)
the instructions each runs, which the machine's load does not move.

    .venv/bin/python bench/bench_startup.py [--reps 5] [--top 15] [--callgrind] [--tree LABEL=DIR ...]

Paths, each next to its floor (the least a program doing the same job must import):
- ``petstore --version`` against ``python -c pass``;
- ``petstore run -c /list`` (against ``petstore serve``) against ``python -c 'import httpx; httpx.get(...)'``;
- the bot (in the project's venv: the ``matrix`` extra), ``petstore bot matrix`` up to its first login attempt (a homeserver that refuses the connection: every
  import before the first sync is done by then), against ``python -c 'import nio'`` (plain matrix-nio, the SDK the
  bot runs on; target: <= 0.5 s of imports, issue 41).

Each is run ``--reps`` times; a module's figure is its smallest cumulative import time over the runs (the runs
differ by the machine's noise, never by what is imported). Printed: the total import time of each path, the
modules that cost most (cumulative, two levels deep), and with ``--callgrind`` the instruction count of one run of
each under valgrind (~1 min for ``run -c /list``); the bot, which runs until stopped, is counted as a fresh
interpreter importing what it imported, in the same order. For the bot, the project's own modules it imported are
listed too. ``BENCH_VENV`` times another venv (a base ``pip install .``, as
the README's first command makes).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import (
    API_KEY,
    PETSTORE,
    PY,
    ROOT,
    SERVER_PETSTORE,
    clean_env,
    deadline,
    petstore_server,
    report,
    scratch,
    tree_env,
    trees,
)

LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)")
#: The bot and its floor run in the project's venv (``BENCH_VENV`` may be a base install, without matrix-nio).
BOT_PY = str(ROOT / ".venv" / "bin" / "python")
#: What makes the bot stop at its first login: a homeserver on a port nothing listens on (discard).
REFUSED = "http://127.0.0.1:9"
#: The project's packages (the modules of a path listed as ours).
OURS = {
    "petstore_cli",
    "petstore_bot",
    "bot_commands",
    "petstore_api",
    "petstore_state",
    "petstore_server",
    "petstore_os",
    "tui",
}


def importtime(argv: list[str], *, env: dict[str, str], timeout: float | None = None) -> list[tuple[int, int, str]]:
    """(depth, cumulative µs, module) of every import ``argv`` made, in the order ``-X importtime`` printed them
    (a module after what it imported). ``timeout``: stop the program then (SIGTERM) and take what it imported."""
    command = [argv[0], "-X", "importtime", *argv[1:]]
    proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        _, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    rows = []
    for line in err.splitlines():
        m = LINE.match(line)
        if m:
            rows.append(((len(m[3]) - 1) // 2, int(m[2]), m[4]))
    return rows


def least(runs: list[list[tuple[int, int, str]]]) -> tuple[float, list[tuple[int, float, str]]]:
    """The smallest total (ms) over the runs, and each module's smallest cumulative time (ms), in tree order."""
    best: dict[str, float] = {}
    for rows in runs:
        for _, cumulative, name in rows:
            best[name] = min(best.get(name, float("inf")), cumulative / 1000)
    total = min(sum(c for d, c, _ in rows if d == 0) for rows in runs) / 1000
    order = list(reversed(runs[0]))
    return total, [(d, best[name], name) for d, _, name in order]


def replay(python: str, rows: list[tuple[int, int, str]]) -> list[str]:
    """A program importing what ``rows`` imported, in the same order: a path that runs until stopped (the bot),
    counted by :func:`instructions` without its waits. ``-P``: the working directory is not on its path (a
    ``--tree``'s modules come from its ``PYTHONPATH``, as the program's own do)."""
    names = [name for depth, _, name in rows if depth == 0]
    return [python, "-P", "-c", f"import importlib\nfor name in {names!r}:\n    importlib.import_module(name)"]


def ours(rows: list[tuple[int, int, str]]) -> str:
    """The project's modules among ``rows``, by package (``bot_commands (27): audit, errors, ...``)."""
    by_package: dict[str, list[str]] = {}
    for _, _, name in rows:
        package, _, rest = name.partition(".")
        if package in OURS:
            by_package.setdefault(package, []).append(rest or "__init__")
    listed = "\n".join(f"    {p} ({len(m)}): {', '.join(sorted(m))}" for p, m in sorted(by_package.items()))
    return f"  our modules ({sum(len(m) for m in by_package.values())}):\n{listed}"


def instructions(argv: list[str], *, env: dict[str, str]) -> int | None:
    """Instructions one run of ``argv`` executes, by callgrind (None: valgrind missing or the run failed)."""
    try:
        done = subprocess.run(
            ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *argv],
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = re.search(r"Collected : (\d+)", done.stderr)
    return int(found[1]) if found else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=5, help="runs of each path (default 5)")
    parser.add_argument("--top", type=int, default=15, help="modules to list a path (default 15)")
    parser.add_argument("--callgrind", action="store_true", help="count instructions too (valgrind)")
    parser.add_argument("--budget", type=float, default=1800, help="hard time limit in seconds")
    parser.add_argument("--tree", action="append", default=[], metavar="LABEL=DIR", help="another source tree too")
    args = parser.parse_args()
    rows: list[dict[str, object]] = []
    with deadline(args.budget), scratch() as tmp:
        env = clean_env(tmp, PETSTORE_API_KEY=API_KEY)
        bot_env = clean_env(
            tmp / "bot",
            PETSTORE_BOT__MATRIX__HOMESERVER=REFUSED,
            PETSTORE_BOT__MATRIX__USER_ID="@petbot:localhost",
            PETSTORE_BOT__MATRIX__PASSWORD="not-a-password",
            PETSTORE_BASE_URL="http://127.0.0.1:9/v1",  # a service, so that no sandbox is opened
            PETSTORE_API_KEY=API_KEY,
        )
        with petstore_server(tmp / "pets.db") as url:
            floor = (
                f"import httpx; r = httpx.get({url + '/pets'!r}, headers={{'Authorization': 'Bearer {API_KEY}'}});"
                " r.raise_for_status()"
            )
            paths = {
                "petstore --version": ([PY, PETSTORE, "--version"], env, None),
                "python -c pass": ([PY, "-c", "pass"], env, None),
                "petstore run -c /list": ([PY, PETSTORE, "run", "-c", "/list", "--base-url", url], env, None),
                "python -c 'import httpx; httpx.get(...)'": ([PY, "-c", floor], env, None),
                "petstore bot matrix (to its first login)": ([BOT_PY, SERVER_PETSTORE, "bot", "matrix"], bot_env, 6.0),
                "python -c 'import nio'": ([BOT_PY, "-c", "import nio"], env, None),
            }
            for label, tree in trees(args.tree).items():
                for name in ("petstore --version", "petstore run -c /list", "petstore bot matrix (to its first login)"):
                    argv, base, timeout = paths[name]
                    paths[f"{name} [{label}]"] = (argv, tree_env(base, tree), timeout)
            for name, (argv, path_env, timeout) in paths.items():
                runs = [importtime(argv, env=path_env, timeout=timeout) for _ in range(args.reps)]
                total, tree_rows = least(runs)
                print(f"\n{name}: {total:.1f} ms of imports ({len(runs[0])} modules), least of {args.reps} runs")
                for depth, ms, module in sorted((r for r in tree_rows if r[0] <= 1), key=lambda r: -r[1])[: args.top]:
                    print(f"  {ms:7.1f} ms  {'  ' * depth}{module}")
                row: dict[str, object] = {"what": name, "imports_ms": round(total, 1), "modules": len(runs[0])}
                if timeout is not None:
                    print(ours(runs[0]))
                if args.callgrind:
                    counted = argv if timeout is None else replay(argv[0], runs[0])
                    row["instructions"] = instructions(counted, env=path_env)
                    print(f"  instructions (callgrind): {row['instructions']:,}" if row["instructions"] else "")
                rows.append(row)
    report("bench_startup", rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())

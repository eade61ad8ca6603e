"""The TUI's start-up in instructions (callgrind), which the machine's load does not move.

    .venv/bin/python bench/tui_instructions.py [--tree LABEL=DIR ...]

Each case runs once under ``valgrind --tool=callgrind``, headless (bench/tui_hook, as bench_tui.py):
- the floor (bench/tui_floor_app.py) to its first frame (its rows are in it);
- ``petstore`` (bare: the TUI) on the sandbox to its first frame, ``[tui] preview = false`` (one process);
``--tree LABEL=DIR`` (repeatable) adds the ``petstore`` case from another source tree (``git archive``).
Prints millions of instructions and the ratio to the floor's first frame.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import BENCH, PETSTORE, PY, clean_env, scratch, tree_env, trees

HEADLESS = "textual.drivers.headless_driver:HeadlessDriver"


def instructions(argv: list[str], env: dict[str, str], out: Path) -> tuple[int, int]:
    """Instructions of ``argv`` under callgrind to its first frame, and of the child it forked (0: none)."""
    out.mkdir(parents=True, exist_ok=True)
    path = ":".join(filter(None, [str(BENCH / "tui_hook"), env.get("PYTHONPATH", "")]))
    env = {
        **env,
        "PYTHONPATH": path,
        "BENCH_TUI_FRAME_FILE": str(out / "frame"),
        "BENCH_TUI_FRAME_ONLY": "1",
        "TEXTUAL_DRIVER": HEADLESS,
    }
    files = out / "callgrind.%p"
    command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={files}", *argv]
    process = subprocess.Popen(
        command, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    process.wait(timeout=600)
    counts: dict[int, int] = {}
    for _ in range(600):  # a child ends on its own (its preview written or refused): wait for its totals
        files = list(out.glob("callgrind.*"))
        counts = {int(file.suffix[1:]): total for file in files if (total := _total(file)) is not None}
        if len(counts) == len(files):
            break
        time.sleep(0.5)
    parent = counts.pop(process.pid)
    return parent, sum(counts.values())


def _total(file: Path) -> int | None:
    for line in file.read_text(errors="replace").splitlines():
        if line.startswith(("summary:", "totals:")):
            return int(line.split()[1])
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", action="append", default=[], metavar="LABEL=DIR")
    args = parser.parse_args()
    with scratch() as tmp:
        env = clean_env(tmp / "home")
        subprocess.run([PETSTORE, "run", "-c", "/list"], env=env, check=True, capture_output=True, timeout=120)
        floor = instructions([PY, str(BENCH / "tui_floor_app.py")], env, tmp / "floor")[0]
        print(f"floor, first frame: {floor / 1e6:,.1f}M")
        for label, tree in {"this tree": None, **trees(args.tree)}.items():
            source = tree_env(env, tree)
            first = instructions([PETSTORE], {**source, "PETSTORE_TUI__PREVIEW": "false"}, tmp / f"{label}-one")[0]
            print(f"petstore [{label}], first frame: {first / 1e6:,.1f}M ({first / floor:.2f}x the floor's)")


if __name__ == "__main__":
    main()

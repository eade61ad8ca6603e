"""Two builds of ``petstore tui`` side by side against the minimal Textual app: first frame, pets on screen.

    .venv/bin/python bench/tui_side_by_side.py --before /path/to/other/.venv/bin/petstore [--reps 10]
    .venv/bin/python bench/tui_side_by_side.py --before-env PETSTORE_TUI__PREVIEW=false   # this build, a setting off

For a change to start-up: the other build (another checkout's venv) and this one, headless, round-robin
with the floor app (bench/tui_floor_app.py), each on its own fresh sandbox (12 pets), bytecode
cached outside both checkouts (PYTHONPYCACHEPREFIX). Probes: bench/tui_hook/sitecustomize.py.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import BENCH, PETSTORE, PY, clean_env, scratch
from bench_tui import HEADLESS


def one(argv: list[str], env: dict[str, str], tmp: Path, rows: int) -> tuple[float, float]:
    frame, paint = tmp / "frame", tmp / "paint"
    frame.unlink(missing_ok=True)
    paint.unlink(missing_ok=True)
    env = {
        **env,
        "PYTHONPATH": str(BENCH / "tui_hook"),
        "TEXTUAL_DRIVER": HEADLESS,
        "BENCH_TUI_FRAME_FILE": str(frame),
        "BENCH_TUI_PAINT_FILE": str(paint),
        "BENCH_TUI_MIN_ROWS": str(rows),
    }
    started = time.monotonic()
    subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
    return (float(frame.read_text()) - started) * 1000, (float(paint.read_text()) - started) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", default=PETSTORE, help="the other build's petstore executable (default: this one)")
    parser.add_argument(
        "--before-env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="an environment variable for the 'before' runs only (repeatable)",
    )
    parser.add_argument("--reps", type=int, default=10)
    args = parser.parse_args()
    with scratch() as tmp:
        cases = {
            "floor": ([PY, str(BENCH / "tui_floor_app.py")], 100, "floor"),
            "before": ([args.before, "tui"], 12, "before"),
            "after": ([PETSTORE, "tui"], 12, "after"),
        }
        envs = {name: clean_env(tmp / name, PYTHONPYCACHEPREFIX=str(tmp / "pyc")) for name in cases}
        envs["before"].update(item.split("=", 1) for item in args.before_env)
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in cases}
        for _ in range(2):  # warm-up: bytecode, the sandboxes
            for name, (argv, rows, _) in cases.items():
                one(argv, envs[name], tmp, rows)
        for _ in range(args.reps):
            for name, (argv, rows, _) in cases.items():
                times[name].append(one(argv, envs[name], tmp, rows))
    floor = statistics.median(p for _, p in times["floor"])
    for name, runs in times.items():
        frames, pets = [f for f, _ in runs], [p for _, p in runs]
        print(
            f"{name:7s} first frame {statistics.median(frames):4.0f} ms ({min(frames):.0f}..{max(frames):.0f}) "
            f"{statistics.median(frames) / floor:.2f}x   pets on screen {statistics.median(pets):4.0f} ms "
            f"({min(pets):.0f}..{max(pets):.0f}) {statistics.median(pets) / floor:.2f}x"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

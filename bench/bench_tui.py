"""TUI start-up and TUI at scale.

    .venv/bin/python bench/bench_tui.py [--reps 12] [--pages 100] [--page-size 100] [--no-posting] [--tree LABEL=DIR]

Start-up (issue 20): two moments per run, from process start (just before spawning), each run
a fresh process, headless (TEXTUAL_DRIVER=HeadlessDriver: the app composes and renders every
frame, nothing is written to a terminal); bench/tui_hook/sitecustomize.py records them:
- the first frame: the first screen update with widgets on it (``App._display``);
- pets on screen: the first paint of a table line below the header with the rows present (the
  floor's DataTable; the product's pets list, ``PetsTable``); the process then ends.
Round-robin, median, against the same floor in the same run:
- floor: a minimal Textual app showing a 100-row DataTable (bench/tui_floor_app.py): its
  first frame holds its rows;
- ``petstore tui`` on the sandbox (20+ pets, the first page of 20);
- ``petstore tui --base-url URL`` against ``petstore serve`` (30 pets, the first page of 20);
- reference: ``petstore tui`` on the sandbox in one process (``PETSTORE_TUI__PREVIEW=false``: no first
  page fetched by a child process), to show what the preview is worth in the same run;
- reference peer: posting's first frame (``pip install posting`` in its own venv under /tmp,
  not a project dependency; skipped with the reason when it cannot be installed);
- ``--tree LABEL=DIR`` (repeatable): ``petstore tui`` on the sandbox from another source tree of the project
  (an earlier commit's ``git archive``) in the same rounds, to say what a change was worth.
Targets: first frame <= 1.15x the floor's; pets on screen <= 1.6x (stretch 1.5x).

At scale: 10,000 pets paged into the list pane, 100 per page (bench/tui_scale.py, in-process
``App.run_test``), vs a bare DataTable getting the same 100-row appends. Target: append+paint
median <= 20 ms. Memory: RSS after the first page and after the last.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
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
    tree_env,
    trees,
    verdict,
)

HEADLESS = "textual.drivers.headless_driver:HeadlessDriver"


def seed(db: Path, count: int) -> None:
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute(
        "CREATE TABLE IF NOT EXISTS pets (id INTEGER PRIMARY KEY, name TEXT NOT NULL, "
        "category_id INTEGER NOT NULL, status TEXT NULL)"
    )
    rows = [(i, f"Pet {i}", i % 4 + 1, ("available", "pending", "sold")[i % 3]) for i in range(1, count + 1)]
    conn.executemany("INSERT INTO pets VALUES (?, ?, ?, ?)", rows)
    conn.commit()
    conn.close()


def paint_time(argv: list[str], env: dict[str, str], out: Path, min_rows: int) -> tuple[float, float]:
    """Seconds from spawning ``argv`` to its first frame and to its first painted table rows
    (``min_rows`` 0: the first frame only, for an app without a pets table)."""
    frame = out.with_suffix(".frame")
    out.unlink(missing_ok=True)
    frame.unlink(missing_ok=True)
    path = os.pathsep.join(filter(None, [str(BENCH / "tui_hook"), env.get("PYTHONPATH", "")]))
    env = {**env, "PYTHONPATH": path, "BENCH_TUI_FRAME_FILE": str(frame), "TEXTUAL_DRIVER": HEADLESS}
    if min_rows:
        env |= {"BENCH_TUI_PAINT_FILE": str(out), "BENCH_TUI_MIN_ROWS": str(min_rows)}
    else:
        env |= {"BENCH_TUI_FRAME_ONLY": "1"}
    started = time.monotonic()
    done = subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
    wanted = out if min_rows else frame
    if not wanted.exists() or not frame.exists():
        raise RuntimeError(
            f"{argv!r} exited {done.returncode} without painting: {done.stderr.decode(errors='replace')[-1500:]}"
        )
    first = float(frame.read_text()) - started
    return first, (float(out.read_text()) - started) if min_rows else first


#: posting (a Textual HTTP client) as a reference peer: its own venv, never the project's.
POSTING_VENV = Path("/tmp/petstore-bench-posting")
#: tree-sitter 0.26 segfaults under posting 2.11's Textual 6.1 (its TextArea's highlight queries).
POSTING_PACKAGES = ["posting", "tree-sitter<0.26"]


def posting_argv() -> tuple[list[str] | None, str]:
    """posting's command, installed on first use; (None, why) when it cannot be."""
    exe = POSTING_VENV / "bin" / "posting"
    if not exe.exists():
        made = subprocess.run([sys.executable, "-m", "venv", str(POSTING_VENV)], capture_output=True)
        pip = [str(POSTING_VENV / "bin" / "pip"), "install", "-q", *POSTING_PACKAGES]
        done = subprocess.run(pip, capture_output=True, timeout=600) if made.returncode == 0 else made
        if done.returncode != 0 or not exe.exists():
            return None, f"pip install posting failed: {done.stderr.decode(errors='replace')[-300:]}"
    return [str(exe)], ""


#: A reference floor (not the issue's): the floor app after importing the libraries petstore
#: needs before its first request (pydantic-settings, pydantic, httpx, starlette, sqlite3).
DEPS_FLOOR = "reference: the same app after importing petstore's required libraries"


POSTING = "reference peer: posting, first frame"


def tree_case(label: str) -> str:
    return f"petstore tui (sandbox, 20 pets) [{label}]"


ONE_PROCESS = "reference: petstore tui (sandbox, 20 pets) in one process, [tui] preview = false"


def startup(
    tmp: Path, url: str, reps: int, *, posting: bool, others: dict[str, Path]
) -> tuple[dict[str, list[tuple[float, float]]], str]:
    home = tmp / "home"
    env = clean_env(home, PETSTORE_API_KEY=API_KEY)
    # The sandbox: created by a first run, then 8 more pets so its first page holds 20.
    adds = [f"/add Extra{i} --category 1" for i in range(8)]
    sandbox_env = {k: v for k, v in env.items() if k != "PETSTORE_API_KEY"}
    subprocess.run(
        [PETSTORE, "run", *sum((["-c", a] for a in adds), [])],
        env=sandbox_env,
        check=True,
        capture_output=True,
        timeout=60,
    )
    cases = {
        "floor: minimal Textual app, 100-row DataTable": ([PY, str(BENCH / "tui_floor_app.py")], env, 100),
        DEPS_FLOOR: ([PY, str(BENCH / "tui_floor_app.py"), "--with-deps"], env, 100),
        "petstore tui (sandbox, 20 pets)": ([PETSTORE, "tui"], sandbox_env, 20),
        "petstore tui --base-url (petstore serve, 20 pets)": ([PETSTORE, "tui", "--base-url", url], env, 20),
        ONE_PROCESS: ([PETSTORE, "tui"], {**sandbox_env, "PETSTORE_TUI__PREVIEW": "false"}, 20),
        **{tree_case(label): ([PETSTORE, "tui"], tree_env(sandbox_env, tree), 20) for label, tree in others.items()},
    }
    skipped = "not asked (--no-posting)"
    if posting:
        argv, skipped = posting_argv()
        if argv is not None:
            cases[POSTING] = (argv, {**env, "HOME": str(tmp / "posting-home")}, 0)
    probe = tmp / "painted"
    for argv, case_env, rows in cases.values():  # warm-up: bytecode, page cache
        paint_time(argv, case_env, probe, rows)
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in cases}
    for _ in range(reps):
        for name, (argv, case_env, rows) in cases.items():
            times[name].append(paint_time(argv, case_env, probe, rows))
    return times, skipped


def scale(url: str, env: dict[str, str], pages: int, page_size: int) -> dict[str, dict[str, float]]:
    results = {}
    for mode, extra in (("product", ["--url", url, "--key", API_KEY]), ("floor", [])):
        argv = [PY, str(BENCH / "tui_scale.py"), mode, "--pages", str(pages), "--page-size", str(page_size), *extra]
        done = subprocess.run(argv, env=env, capture_output=True, timeout=600)
        if done.returncode != 0:
            raise RuntimeError(f"tui_scale {mode} failed: {done.stderr.decode(errors='replace')[-2000:]}")
        results[mode] = json.loads(done.stdout.decode().strip().splitlines()[-1])
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=12)
    parser.add_argument("--pages", type=int, default=100)
    parser.add_argument("--page-size", type=int, default=100)
    parser.add_argument("--budget", type=float, default=900, help="hard time limit in seconds")
    parser.add_argument("--no-posting", action="store_true", help="skip the posting reference peer")
    parser.add_argument("--no-scale", action="store_true", help="start-up only (skip the 10,000-pet run)")
    parser.add_argument("--tree", action="append", default=[], metavar="LABEL=DIR", help="another source tree to time")
    args = parser.parse_args()
    others = trees(args.tree)
    with deadline(args.budget), scratch() as tmp:
        seed(tmp / "pets.db", 30)
        seed(tmp / "many.db", args.pages * args.page_size)
        with petstore_server(tmp / "pets.db", seed=False) as url:
            times, skipped = startup(tmp, url, args.reps, posting=not args.no_posting, others=others)
        big = None
        if not args.no_scale:
            with petstore_server(tmp / "many.db", seed=False) as url:
                big = scale(url, clean_env(tmp), args.pages, args.page_size)
    return _report(times, skipped, big, args)


def _ms(values: list[float]) -> str:
    """Median and spread (min..max) in ms."""
    return f"{statistics.median(values) * 1000:.0f} ms ({min(values) * 1000:.0f}..{max(values) * 1000:.0f})"


def _report(
    times: dict[str, list[tuple[float, float]]],
    skipped: str,
    big: dict[str, dict[str, float]] | None,
    args: argparse.Namespace,
) -> int:
    floor_name = next(iter(times))
    frames = {name: [f for f, _ in runs] for name, runs in times.items()}
    pets = {name: [p for _, p in runs] for name, runs in times.items()}
    floor = statistics.median(frames[floor_name]) * 1000
    deps = statistics.median(pets[DEPS_FLOOR]) * 1000
    rows: list[dict[str, object]] = []
    lines = [
        f"floor (minimal Textual app, 100-row DataTable): first frame with its rows {_ms(frames[floor_name])}",
        f"{DEPS_FLOOR}: {_ms(pets[DEPS_FLOOR])} = {deps / floor:.2f}x the floor (the libraries alone)",
    ]
    for name in [n for n in times if n not in (floor_name, DEPS_FLOOR, POSTING, ONE_PROCESS)]:
        for what, values, target in (("first frame", frames[name], 1.15), ("pets on screen", pets[name], 1.6)):
            ms = statistics.median(values) * 1000
            ok = verdict(ms / floor <= target)
            rows.append(
                {
                    "what": f"start-up to {what}, {name}",
                    "median_ms": round(ms),
                    "min_ms": round(min(values) * 1000),
                    "max_ms": round(max(values) * 1000),
                    "floor": floor_name,
                    "floor_ms": round(floor),
                    "ratio": round(ms / floor, 2),
                    "target": f"<= {target}x",
                    "verdict": ok,
                    "deps_floor_ms": round(deps),
                }
            )
            lines.append(f"{name}: {what} {_ms(values)} = {ms / floor:.2f}x the floor   target <= {target}x   {ok}")
    for what, values in (("first frame", frames[ONE_PROCESS]), ("pets on screen", pets[ONE_PROCESS])):
        ms = statistics.median(values) * 1000
        rows.append(
            {
                "what": f"{what}, {ONE_PROCESS}",
                "median_ms": round(ms),
                "floor_ms": round(floor),
                "ratio": round(ms / floor, 2),
            }
        )
        lines.append(f"{ONE_PROCESS}: {what} {_ms(values)} = {ms / floor:.2f}x the floor")
    if POSTING in times:
        ms = statistics.median(frames[POSTING]) * 1000
        rows.append({"what": POSTING, "median_ms": round(ms), "floor_ms": round(floor), "ratio": round(ms / floor, 2)})
        lines.append(f"{POSTING}: {_ms(frames[POSTING])} = {ms / floor:.2f}x the floor")
    else:
        lines.append(f"{POSTING}: skipped: {skipped}")
    if big is None:
        report("tui", rows)
        print("\n" + "\n".join(lines))
        return 0
    p, f = big["product"], big["floor"]
    total = args.pages * args.page_size
    for key, label in (
        ("work_median_ms", "work (append + deferred update + frame render)"),
        ("latency_median_ms", "latency to the frame (60 fps pacing)"),
    ):
        ok = verdict(p[key] <= 20)
        rows.append(
            {
                "what": f"{total} pets, {args.page_size}/page: per-page {label}, median",
                "product_ms": round(p[key], 1),
                "p90_ms": round(p[key.replace("median", "p90")], 1),
                "floor": "bare DataTable, same appends",
                "floor_ms": round(f[key], 1),
                "ratio": round(p[key] / f[key], 2),
                "target": "<= 20 ms",
                "verdict": ok,
            }
        )
        lines.append(
            f"per page {label}: {p[key]:.1f} ms median (p90 {p[key.replace('median', 'p90')]:.1f}); "
            f"bare DataTable {f[key]:.1f} ms   target <= 20 ms   {ok}"
        )
    parts = ", ".join(f"{part} {p[f'{part}_median_ms']:.1f}" for part in ("append", "idle", "frame"))
    lines.append(f"  product work by part (median ms): {parts}; by page: {p['work_by_page_ms']}")
    mem = (p["rss_last_kib"] - p["rss_first_kib"]) / 1024
    fmem = (f["rss_last_kib"] - f["rss_first_kib"]) / 1024
    rows.append(
        {
            "what": f"memory, {total} pets in the list pane",
            "rss_first_page_mib": round(p["rss_first_kib"] / 1024),
            "rss_last_page_mib": round(p["rss_last_kib"] / 1024),
            "growth_mib": round(mem, 1),
            "floor_growth_mib": round(fmem, 1),
            "per_pet_kib": round(mem * 1024 / total, 1),
        }
    )
    lines.append(
        f"memory: RSS {p['rss_first_kib'] / 1024:.0f} MiB after the first page, "
        f"{p['rss_last_kib'] / 1024:.0f} MiB after {total} pets (+{mem:.0f} MiB, "
        f"{mem * 1024 / total:.1f} KiB/pet); bare DataTable +{fmem:.0f} MiB"
    )
    report("tui", rows)
    print("\n" + "\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""TUI start-up and TUI at scale.

    .venv/bin/python bench/bench_tui.py [--reps 12] [--pages 100] [--page-size 100]

Start-up: time from process start (just before spawning) to the first paint of a table holding
its rows (the floor's DataTable; the product's pets list, ``PetsTable``), each run a fresh
process, headless (TEXTUAL_DRIVER=HeadlessDriver: the app renders every frame, nothing is
written to a terminal). bench/tui_hook/sitecustomize.py records the moment and ends the
process. Round-robin, median:
- floor: a minimal Textual app showing a 100-row DataTable (bench/tui_floor_app.py);
- ``petstore tui`` on the sandbox (20+ pets, the first page of 20);
- ``petstore tui --base-url URL`` against ``petstore serve`` (30 pets, the first page of 20).
Target: each <= 1.5x the floor.

At scale: 10,000 pets paged into the list pane, 100 per page (bench/tui_scale.py, in-process
``App.run_test``), vs a bare DataTable getting the same 100-row appends. Target: append+paint
median <= 20 ms. Memory: RSS after the first page and after the last.
"""

from __future__ import annotations

import argparse
import json
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
    verdict,
)

HEADLESS = "textual.drivers.headless_driver:HeadlessDriver"


def seed(db: Path, count: int) -> None:
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("CREATE TABLE IF NOT EXISTS pets (id INTEGER PRIMARY KEY, name TEXT NOT NULL, "
                 "category_id INTEGER NOT NULL, status TEXT NULL)")
    rows = [(i, f"Pet {i}", i % 4 + 1, ("available", "pending", "sold")[i % 3]) for i in range(1, count + 1)]
    conn.executemany("INSERT INTO pets VALUES (?, ?, ?, ?)", rows)
    conn.commit()
    conn.close()


def paint_time(argv: list[str], env: dict[str, str], out: Path, min_rows: int) -> float:
    """Seconds from spawning ``argv`` to its first painted table rows."""
    out.unlink(missing_ok=True)
    env = {**env, "PYTHONPATH": str(BENCH / "tui_hook"), "BENCH_TUI_PAINT_FILE": str(out),
           "BENCH_TUI_MIN_ROWS": str(min_rows), "TEXTUAL_DRIVER": HEADLESS}
    started = time.monotonic()
    done = subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
    if not out.exists():
        raise RuntimeError(f"{argv!r} exited {done.returncode} without painting rows: "
                           f"{done.stderr.decode(errors='replace')[-1500:]}")
    return float(out.read_text()) - started


#: A reference floor (not the issue's): the floor app after importing the libraries petstore
#: needs before its first request (pydantic-settings, pydantic, httpx, starlette, sqlite3).
DEPS_FLOOR = "reference: the same app after importing petstore's required libraries"


def startup(tmp: Path, url: str, reps: int) -> dict[str, list[float]]:
    home = tmp / "home"
    env = clean_env(home, PETSTORE_API_KEY=API_KEY)
    # The sandbox: created by a first run, then 8 more pets so its first page holds 20.
    adds = [f"/add Extra{i} --category 1" for i in range(8)]
    sandbox_env = {k: v for k, v in env.items() if k != "PETSTORE_API_KEY"}
    subprocess.run([PETSTORE, "run", *sum((["-c", a] for a in adds), [])], env=sandbox_env, check=True,
                   capture_output=True, timeout=60)
    cases = {
        "floor: minimal Textual app, 100-row DataTable": ([PY, str(BENCH / "tui_floor_app.py")], env, 100),
        DEPS_FLOOR: ([PY, str(BENCH / "tui_floor_app.py"), "--with-deps"], env, 100),
        "petstore tui (sandbox, 20 pets)": ([PETSTORE, "tui"], sandbox_env, 20),
        "petstore tui --base-url (petstore serve, 20 pets)": ([PETSTORE, "tui", "--base-url", url], env, 20),
    }
    probe = tmp / "painted"
    for argv, case_env, rows in cases.values():  # warm-up: bytecode, page cache
        paint_time(argv, case_env, probe, rows)
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(reps):
        for name, (argv, case_env, rows) in cases.items():
            times[name].append(paint_time(argv, case_env, probe, rows))
    return times


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
    args = parser.parse_args()
    with deadline(args.budget), scratch() as tmp:
        seed(tmp / "pets.db", 30)
        seed(tmp / "many.db", args.pages * args.page_size)
        with petstore_server(tmp / "pets.db", seed=False) as url:
            times = startup(tmp, url, args.reps)
        with petstore_server(tmp / "many.db", seed=False) as url:
            big = scale(url, clean_env(tmp), args.pages, args.page_size)
    return _report(times, big, args)


def _report(times: dict[str, list[float]], big: dict[str, dict[str, float]], args: argparse.Namespace) -> int:
    names = [name for name in times if name != DEPS_FLOOR]
    floor = statistics.median(times[names[0]]) * 1000
    deps = statistics.median(times[DEPS_FLOOR]) * 1000
    rows: list[dict[str, object]] = []
    lines = [f"floor (minimal Textual app, 100-row DataTable): {floor:.0f} ms to first painted rows",
             f"{DEPS_FLOOR}: {deps:.0f} ms = {deps / floor:.2f}x the floor (the libraries alone)"]
    for name in names[1:]:
        ms = statistics.median(times[name]) * 1000
        ok = verdict(ms / floor <= 1.5)
        rows.append({"what": f"start-up to first painted pets list, {name}", "median_ms": round(ms),
                     "min_ms": round(min(times[name]) * 1000), "floor": names[0], "floor_ms": round(floor),
                     "ratio": round(ms / floor, 2), "target": "<= 1.5x", "verdict": ok,
                     "deps_floor_ms": round(deps), "ratio_to_deps_floor": round(ms / deps, 2)})
        lines.append(f"{name}: {ms:.0f} ms = {ms / floor:.2f}x the floor   target <= 1.5x   {ok}   "
                     f"({ms / deps:.2f}x the floor with petstore's libraries)")
    p, f = big["product"], big["floor"]
    total = args.pages * args.page_size
    for key, label in (("work_median_ms", "work (append + deferred update + frame render)"),
                       ("latency_median_ms", "latency to the frame (60 fps pacing)")):
        ok = verdict(p[key] <= 20)
        rows.append({"what": f"{total} pets, {args.page_size}/page: per-page {label}, median",
                     "product_ms": round(p[key], 1), "p90_ms": round(p[key.replace("median", "p90")], 1),
                     "floor": "bare DataTable, same appends", "floor_ms": round(f[key], 1),
                     "ratio": round(p[key] / f[key], 2), "target": "<= 20 ms", "verdict": ok})
        lines.append(f"per page {label}: {p[key]:.1f} ms median (p90 {p[key.replace('median', 'p90')]:.1f}); "
                     f"bare DataTable {f[key]:.1f} ms   target <= 20 ms   {ok}")
    parts = ", ".join(f"{part} {p[f'{part}_median_ms']:.1f}" for part in ("append", "idle", "frame"))
    lines.append(f"  product work by part (median ms): {parts}; by page: {p['work_by_page_ms']}")
    mem = (p["rss_last_kib"] - p["rss_first_kib"]) / 1024
    fmem = (f["rss_last_kib"] - f["rss_first_kib"]) / 1024
    rows.append({"what": f"memory, {total} pets in the list pane", "rss_first_page_mib": round(p["rss_first_kib"] / 1024),
                 "rss_last_page_mib": round(p["rss_last_kib"] / 1024), "growth_mib": round(mem, 1),
                 "floor_growth_mib": round(fmem, 1), "per_pet_kib": round(mem * 1024 / total, 1)})
    lines.append(f"memory: RSS {p['rss_first_kib'] / 1024:.0f} MiB after the first page, "
                 f"{p['rss_last_kib'] / 1024:.0f} MiB after {total} pets (+{mem:.0f} MiB, "
                 f"{mem * 1024 / total:.1f} KiB/pet); bare DataTable +{fmem:.0f} MiB")
    report("tui", rows)
    print("\n" + "\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())

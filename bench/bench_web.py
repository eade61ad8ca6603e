"""``petstore web``: time from opening the URL to the pets painted in the browser.

    flock /work/cpu.lock .venv/bin/python bench/bench_web.py [--reps 10]

Each run is a fresh headless Chromium page (Debian's /usr/bin/chromium, driven by Playwright): the
clock starts just before ``page.goto(URL)`` and stops at the first animation frame whose terminal
(xterm.js's own buffer, read through tests/web/web_support.XTERM_HOOK) shows the first rows. Round-robin,
median, against a floor taken in the same run:
- floor: ``textual serve`` of the minimal Textual app (bench/tui_floor_app.py: a 100-row DataTable),
  i.e. textual-serve's own Server running ``python bench/tui_floor_app.py``; waits for "Pet 1";
- ``petstore web`` on the sandbox, opened with the address it prints (the login page posting the token
  after ``#``, the 303 to ``/`` with the cookie: the path a user takes); waits for the first pets ("Rex", "Goldie").
Requests to other hosts (textual-serve's page asks Google Fonts for a font; there is no internet here)
are aborted for both, so neither waits on the network. Target: petstore <= 1.5x the floor.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "web"))
from _common import BENCH, PETSTORE, PY, clean_env, deadline, free_port, report, scratch, server, spread, verdict
from web_support import SHOWS, XTERM_HOOK

CHROMIUM = "/usr/bin/chromium"
WEB_URL = re.compile(rb"petstore web: open (http://127\.0\.0\.1:\d+/#token=\S+)")
TARGET = 1.5


def open_and_wait(browser: object, url: str, needles: list[str]) -> float:
    """Seconds from page.goto(url) to the first frame whose terminal shows every needle."""
    context = browser.new_context(viewport={"width": 1280, "height": 760})  # type: ignore[attr-defined]
    context.route(re.compile(r"^https?://(?!127\.0\.0\.1)"), lambda route: route.abort())
    page = context.new_page()
    page.add_init_script(XTERM_HOOK)
    started = time.perf_counter()
    page.goto(url, wait_until="commit")
    page.wait_for_function(SHOWS, arg=needles, polling="raf", timeout=30_000)
    elapsed = time.perf_counter() - started
    context.close()  # the websocket closes: the server ends that app
    time.sleep(0.5)  # let the ended app's exit pass before the next run
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=2)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with deadline(600), scratch() as tmp, sync_playwright() as playwright:
        env = clean_env(tmp / "home")
        port = free_port()
        floor_cmd = f"{PY} {BENCH / 'tui_floor_app.py'}"
        floor_argv = [
            PY,
            "-c",
            "import sys; from textual_serve.server import Server; "
            f"Server(sys.argv[1], host='127.0.0.1', port={port}).serve()",
            floor_cmd,
        ]
        with (
            server(floor_argv, env=env, port=port) as floor_origin,
            server([PETSTORE, "web", "--port", "0"], env=env, ready=WEB_URL) as web_url,
        ):
            browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
            cases = {
                "floor: textual serve, minimal app": (floor_origin + "/", ["Pet 1", "Pet 2"]),
                "petstore web (sandbox)": (web_url, ["Rex", "Goldie"]),
            }
            times: dict[str, list[float]] = {name: [] for name in cases}
            for rep in range(args.warmup + args.reps):
                for name, (url, needles) in cases.items():
                    elapsed = open_and_wait(browser, url, needles)
                    if rep >= args.warmup:
                        times[name].append(elapsed)
            browser.close()
    floor = statistics.median(times["floor: textual serve, minimal app"])
    rows: list[dict[str, object]] = []
    for name, values in times.items():
        ratio = statistics.median(values) / floor
        rows.append(
            {
                "case": name,
                "median_ms": round(statistics.median(values) * 1000, 1),
                "min..p90_ms": spread(values),
                "ratio": round(ratio, 2),
                **(
                    {"target": f"<= {TARGET}x", "verdict": verdict(ratio <= TARGET)}
                    if name.startswith("petstore")
                    else {}
                ),
            }
        )
    report("bench_web", rows)


if __name__ == "__main__":
    main()

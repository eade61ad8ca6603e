"""TUI at scale, one process (bench_tui.py runs it): N pets paged into the list pane, P per page.

    python bench/tui_scale.py product --url URL --key KEY [--pages 100] [--page-size 100]
    python bench/tui_scale.py floor [--pages 100] [--page-size 100]

product: the real PetStoreApp (headless, ``App.run_test``) on a session composed for a running
service; the first page is the app's own ``/list --limit P``, each next one is the ``n`` key
(load more), i.e. ``/more`` -> ``PetsPane.show_page(append=True)``.
floor: a bare Textual DataTable, ``add_rows`` of P rows per page.

Per page, from the moment the page is handed to the table:
- work: CPU time of the append, of the table's deferred work (the DataTable's idle-time dimension
  update; the product's ``PetsTable`` has none: its append sets the virtual size at once) and of
  the frame render (``Screen._on_timer_update``, layout pass included), up to the frame that
  shows the new table size;
- latency: wall time to the end of that frame (includes Textual's frame pacing, 60 fps).
Prints one JSON line with medians, p90, and RSS before and after; with BENCH_TUI_PARTS=1 also
each page's parts on stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from typing import Any

from textual.app import App
from textual.screen import Screen
from textual.widgets import DataTable


def rss_kib() -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


class Probe:
    """Wraps the append, the table's deferred work and frame renders; one record per page."""

    def __init__(self) -> None:
        self.start: float | None = None
        self.work: dict[str, float] = {}
        self.table: Any = None  # a DataTable (floor) or the product's PetsTable
        self.rows_expected = 0
        self.pages: list[tuple[dict[str, float], float]] = []  # (work by part, latency)
        self.done = asyncio.Event()

    def begin(self, table: Any, rows_expected: int) -> None:
        self.table, self.rows_expected = table, rows_expected
        self.start, self.work = time.perf_counter(), {"append": 0.0, "idle": 0.0, "frame": 0.0}
        self.done.clear()

    def add_work(self, part: str, seconds: float) -> None:
        if self.start is not None:
            self.work[part] += seconds

    def frame_done(self) -> None:
        table = self.table
        if self.start is None or table is None:
            return
        header = 1 if getattr(table, "show_header", True) else 0  # PetsTable: always a header
        if table.row_count >= self.rows_expected and table.virtual_size.height >= table.row_count + header:
            self.pages.append((self.work, time.perf_counter() - self.start))
            self.start = None
            self.done.set()


PROBE = Probe()


def install() -> None:
    timer_update = Screen._on_timer_update
    idle = DataTable._on_idle

    def on_timer_update(self: Screen[Any]) -> None:
        started = time.perf_counter()
        timer_update(self)
        PROBE.add_work("frame", time.perf_counter() - started)
        PROBE.frame_done()

    async def on_idle(self: DataTable, event: Any) -> None:
        started = time.perf_counter()
        await idle(self, event)
        PROBE.add_work("idle", time.perf_counter() - started)

    Screen._on_timer_update = on_timer_update  # type: ignore[method-assign]
    DataTable._on_idle = on_idle  # type: ignore[method-assign]


async def wait_page(timeout: float = 30.0) -> None:
    await asyncio.wait_for(PROBE.done.wait(), timeout)


async def run_product(args: argparse.Namespace) -> dict[str, Any]:
    os.environ["PETSTORE_API_KEY"] = args.key
    from petstore_cli.compose import compose
    from petstore_cli.settings.load import load_settings
    from tui.app import PetStoreApp
    from tui.widgets.pets_pane import PetsPane

    show_page = PetsPane.show_page

    def timed_show_page(self: PetsPane, pets: list[Any], **kwargs: Any) -> None:
        PROBE.begin(self.table, len(self.pets) + len(pets) if kwargs.get("append") else len(pets))
        started = time.perf_counter()
        show_page(self, pets, **kwargs)
        PROBE.add_work("append", time.perf_counter() - started)

    PetsPane.show_page = timed_show_page  # type: ignore[method-assign]
    composition = compose(load_settings(overrides={"base_url": args.url}).settings)
    app = PetStoreApp(composition.session(), page_size=args.page_size)
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_page()
            rss_first = rss_kib()
            pane = app.main_screen.pane
            for _ in range(args.pages - 1):
                await pilot.press("n")
                await wait_page()
            rows = pane.table.row_count
            rss_last = rss_kib()
    finally:
        await composition.aclose()
    return {"rows": rows, "rss_first_kib": rss_first, "rss_last_kib": rss_last}


class FloorApp(App[None]):
    def compose(self) -> Any:
        yield DataTable()

    def on_mount(self) -> None:
        self.query_one(DataTable).add_columns("ID", "Name", "Category", "Status")


async def run_floor(args: argparse.Namespace) -> dict[str, Any]:
    app = FloorApp()
    async with app.run_test(size=(120, 40)) as pilot:
        table = app.query_one(DataTable)
        await pilot.pause()
        rss_first = 0
        for page in range(args.pages):
            base = page * args.page_size
            rows = [(i, f"Pet {i}", i % 4 + 1, "available") for i in range(base + 1, base + args.page_size + 1)]
            PROBE.begin(table, base + args.page_size)
            started = time.perf_counter()
            table.add_rows(rows)
            PROBE.add_work("append", time.perf_counter() - started)
            await wait_page()
            if page == 0:
                rss_first = rss_kib()
        return {"rows": table.row_count, "rss_first_kib": rss_first, "rss_last_kib": rss_kib()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["product", "floor"])
    parser.add_argument("--url")
    parser.add_argument("--key")
    parser.add_argument("--pages", type=int, default=100)
    parser.add_argument("--page-size", type=int, default=100)
    args = parser.parse_args()
    install()
    out = asyncio.run(run_product(args) if args.mode == "product" else run_floor(args))
    appended = PROBE.pages[1:]  # the first page replaces an empty table; the rest are appends
    work = sorted(sum(w.values()) * 1000 for w, _ in appended)
    latency = sorted(lat * 1000 for _, lat in appended)

    def p90(values: list[float]) -> float:
        return values[min(len(values) - 1, int(len(values) * 0.9))]

    out.update(
        pages=len(PROBE.pages),
        work_median_ms=statistics.median(work),
        work_p90_ms=p90(work),
        latency_median_ms=statistics.median(latency),
        latency_p90_ms=p90(latency),
    )
    if os.environ.get("BENCH_TUI_PARTS"):
        for i, (w, lat) in enumerate(PROBE.pages):
            print(i, {k: round(v * 1000, 1) for k, v in w.items()}, round(lat * 1000, 1), file=sys.stderr)
    out["work_by_page_ms"] = [
        round(sum(w.values()) * 1000, 1) for w, _ in PROBE.pages[:: max(1, len(PROBE.pages) // 10)]
    ]
    for part in ("append", "idle", "frame"):
        out[f"{part}_median_ms"] = statistics.median(w[part] * 1000 for w, _ in appended)
    print(json.dumps(out))
    sys.stdout.flush()


if __name__ == "__main__":
    main()

"""Snapshot tests (pytest-textual-snapshot) of the main screens at a fixed size.

Update after a deliberate change, having looked at the report:
``pytest tests/tui/test_tui_snapshots.py --snapshot-update``.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from typing import Any

import pytest
from textual.widgets import Input
from tui_support import SIZE, no_sleep, settle, wait_until

from petstore_api import RetryPolicy

#: The sizes a new user tried (issue 16): narrow, middling, wide.
SIZES = [(60, 20), (100, 30), (200, 50)]


def steps(*keys: str, then: Callable[[Any], Any] | None = None):
    """A run_before that settles, presses ``keys`` (settling after each), then runs ``then``; the cursor of the
    screen's fields stops blinking."""

    async def run_before(pilot) -> None:
        await settle(pilot)
        for key in keys:
            await pilot.press(key)
            await settle(pilot)
        if then is not None:
            await then(pilot)
            await settle(pilot)
        # A focused field's cursor shown steadily: a run slower than the blink (0.5 s) caught it off.
        for field in pilot.app.screen.query(Input):
            field.cursor_blink = False
        await pilot.pause()

    return run_before


def test_main_screen(snap_compare, app_factory) -> None:
    assert snap_compare(app_factory(), terminal_size=SIZE, run_before=steps())


@pytest.mark.parametrize("key", ["2", "3", "4"])
def test_status_tab(snap_compare, app_factory, key: str) -> None:
    assert snap_compare(app_factory(), terminal_size=SIZE, run_before=steps(key))


def test_add_form_with_validation_errors(snap_compare, app_factory) -> None:
    async def fill(pilot) -> None:
        form = pilot.app.screen
        form.query_one("#name", Input).value = "   "
        form.query_one("#category", Input).value = "12x"
        await pilot.pause()

    assert snap_compare(app_factory(), terminal_size=SIZE, run_before=steps("a", then=fill))


def test_detail_view(snap_compare, app_factory) -> None:
    assert snap_compare(app_factory(), terminal_size=SIZE, run_before=steps("down", "down", "enter"))


def test_not_found_detail(snap_compare, app_factory) -> None:
    async def get_missing(pilot) -> None:
        await pilot.app.main_screen.run_line("/get 999")

    assert snap_compare(app_factory(), terminal_size=SIZE, run_before=steps(then=get_missing))


def test_unreachable_service_error_state(snap_compare, app_factory) -> None:
    def down(tap) -> None:
        tap.down = True

    assert snap_compare(app_factory(setup=down), terminal_size=SIZE, run_before=steps())


def test_production_header(snap_compare, app_factory) -> None:
    assert snap_compare(app_factory(env="production"), terminal_size=SIZE, run_before=steps())


def test_help_screen(snap_compare, app_factory) -> None:
    assert snap_compare(app_factory(), terminal_size=SIZE, run_before=steps("question_mark"))


def int64_pets(sandbox) -> None:
    """Ids of 1, 2 and 19 digits (the sandbox's 1..12, and an int64 one as another server may hold)."""
    with sqlite3.connect(sandbox.db_path) as db:
        db.execute(
            "INSERT INTO pets (id, name, category_id, status) VALUES (?, ?, ?, ?)",
            (
                1234567890123456789,
                "Largo the Labrador, a pet with a long name to clip",
                987654321098765432,
                "available",
            ),
        )


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_main_screen_at_size(snap_compare, app_factory, size: tuple[int, int]) -> None:
    assert snap_compare(app_factory(seed=int64_pets), terminal_size=size, run_before=steps("G"))


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_add_form_at_size(snap_compare, app_factory, size: tuple[int, int]) -> None:
    assert snap_compare(app_factory(seed=int64_pets), terminal_size=size, run_before=steps("a"))


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_detail_view_at_size(snap_compare, app_factory, size: tuple[int, int]) -> None:
    assert snap_compare(app_factory(seed=int64_pets), terminal_size=size, run_before=steps("G", "enter"))


# ------------------------------------------------------------------ issue 30: daily use beside k9s and posting


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_log_rewrapped_after_resize_at_size(snap_compare, app_factory, size: tuple[int, int]) -> None:
    """Written at 120 columns, then the terminal took ``size``: the log is wrapped to it (no cut lines,
    no horizontal scrollbar)."""

    async def write_wide_then_resize(pilot) -> None:
        await pilot.resize_terminal(120, size[1])
        await pilot.app.main_screen.run_line("/add " + "Averyveryverylongname " * 6 + "--category 2")
        await settle(pilot)
        await pilot.resize_terminal(*size)

    assert snap_compare(app_factory(), terminal_size=size, run_before=steps(then=write_wide_then_resize))


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_sold_tab_at_size(snap_compare, app_factory, size: tuple[int, int]) -> None:
    """The columns sit where they sit on the All tab (test_main_screen_at_size)."""
    assert snap_compare(app_factory(seed=int64_pets), terminal_size=size, run_before=steps("G", "4"))


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_add_form_empty_category_at_size(snap_compare, app_factory, size: tuple[int, int]) -> None:
    async def send_without_category(pilot) -> None:
        await pilot.press(*"Rex", "ctrl+s")

    assert snap_compare(app_factory(), terminal_size=size, run_before=steps("a", then=send_without_category))


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_waiting_for_a_slow_service_at_size(snap_compare, app_factory, size: tuple[int, int]) -> None:
    """The first attempt timed out, the second waits: the info line says which retry it is."""
    gate = asyncio.Event()

    def slow(tap) -> None:
        tap.read_timeouts = 1
        tap.gates["limit"] = gate  # the retry hangs until the test ends

    async def wait_for_the_retry(pilot) -> None:
        pilot.app.animation_level = "none"  # the loading indicator, still
        main = pilot.app.main_screen
        await wait_until(pilot, lambda: any("retry 2 of 3" in str(info.render()) for info in main.query("#pets-info")))

    retry = RetryPolicy(attempts=3, backoff=0.0, jitter=False, sleep=no_sleep)
    app = app_factory(setup=slow, retry=retry)
    assert snap_compare(app, terminal_size=size, run_before=wait_for_the_retry)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_last_call_at_size(snap_compare, app_factory, size: tuple[int, int]) -> None:
    """The /add's request and response, the key masked (run under a request id: its Idempotency-Key is fixed)."""

    async def add_then_inspect(pilot) -> None:
        await pilot.app.session.run("/add Downy --category 2", request_id="snapshot")
        await settle(pilot)
        await pilot.press("i")
        await settle(pilot)

    app = app_factory(sandbox_key="sk-sandbox-snapshot-key-0000")
    assert snap_compare(app, terminal_size=size, run_before=steps(then=add_then_inspect))


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_filter_and_sort_at_size(snap_compare, app_factory, size: tuple[int, int]) -> None:
    """ctrl+f "e" (the rows whose cells hold an e), sorted by name the other way round (N N)."""
    assert snap_compare(app_factory(), terminal_size=size, run_before=steps("ctrl+f", "e", "enter", "N", "N"))

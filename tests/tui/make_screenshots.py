"""Regenerate the TUI screenshots in docs/images/ (not a test): the README and docs/tui.md show them.

Run: ``.venv/bin/python tests/tui/make_screenshots.py`` from the repository root.
Uses a fresh sandbox in a temporary directory, so the pictures are the same each time.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

from textual.widgets import Input, Select

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(Path(__file__).parent), str(Path(__file__).parents[1])]  # tui_support, pilot_support

from tui_support import SIZE, Harness, settle  # noqa: E402

from petstore_server.sandbox import Sandbox  # noqa: E402

DOCS = ROOT / "docs" / "images"


async def shoot(name: str, steps, *, size: tuple[int, int] = SIZE, theme: str = "textual-dark") -> None:
    with tempfile.TemporaryDirectory() as tmp:
        key = Path(tmp) / "api-key"  # a fixed key: the last-call view shows it masked
        key.write_text("sk-sandbox-docs-screenshots-0000\n", encoding="ascii")
        key.chmod(0o600)
        sandbox = Sandbox.open(Path(tmp), reset=True)
        harness = Harness(sandbox=sandbox, clients=[])
        app = harness.app(theme=theme)
        async with app.run_test(size=size) as pilot:
            await settle(pilot)
            await steps(pilot)
            await settle(pilot)
            app.save_screenshot(filename=f"{name}.svg", path=str(DOCS))
        for client in harness.clients:
            await client.aclose()
        sandbox.close()


async def main_screen(pilot) -> None:
    screen = pilot.app.main_screen
    await screen.run_line("/list sold")
    await screen.run_line('/add "Biscuit" --category 2 --status sold')
    await pilot.press("slash", *"get ")


async def add_form(pilot) -> None:
    await pilot.press("a")
    await pilot.pause()
    form = pilot.app.screen
    form.query_one("#name", Input).value = "Biscuit the Beagle"
    form.query_one("#category", Input).value = "2x"
    form.query_one("#status", Select).value = "available"
    form.query_one("#category", Input).focus()


async def detail_view(pilot) -> None:
    await pilot.press("down", "down", "enter")


async def filter_and_sort(pilot) -> None:
    await pilot.press("ctrl+f", "e", "enter", "N", "N", "down")


async def last_call(pilot) -> None:
    await pilot.app.session.run('/add "Biscuit" --category 2 --status sold', request_id="docs")
    await settle(pilot)
    await pilot.press("i")


async def main() -> None:
    await shoot("tui-main", main_screen, size=(120, 35))
    await shoot("tui-main-narrow", main_screen, size=(60, 20))
    await shoot("tui-main-light", main_screen, size=(100, 30), theme="textual-light")
    await shoot("tui-add-form", add_form)
    await shoot("tui-detail", detail_view)
    await shoot("tui-filter", filter_and_sort, size=(100, 30))
    await shoot("tui-last-call", last_call, size=(100, 40))


if __name__ == "__main__":
    asyncio.run(main())

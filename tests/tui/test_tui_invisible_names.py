"""A name with a zero-width space and a right-to-left override is seen as it is in the TUI: the pets table, the
detail of a pet and the chat log (at 60x20 and 200x50), never a ``ZeroWidth`` that is not what it looks like."""

from __future__ import annotations

import pytest
from pilot_support import settle
from textual.widgets import RichLog
from tui_support import screen_text

SHOWN = "Zero<U+200B>Width <U+202E>evil"


@pytest.mark.parametrize("size", [(60, 20), (200, 50)])
async def test_the_table_the_detail_and_the_log_show_them(harness, size: tuple[int, int]) -> None:
    pet = harness.sandbox.store.create_pet(name="Zero\u200bWidth \u202eevil", category_id=1, status="available")
    app = harness.app()
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        table = app.main_screen.pane.table
        assert table.get_row(str(pet["id"]))[1].plain == SHOWN
        await app.main_screen.run_line(f"/get {pet['id']}")
        await settle(pilot)
        logged = "\n".join(strip.text for strip in app.main_screen.query_one(RichLog).lines)
        frame = screen_text(app)
        assert "Zero<U+200B>" in logged.replace("\n", "") and "\u200b" not in logged and "\u202e" not in logged
        assert "\u200b" not in frame and "\u202e" not in frame
        if size == (200, 50):
            assert SHOWN in frame

"""The pets list's own table widget (tui/widgets/pets_table.py), alone in a small app."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import App, ComposeResult

from tui.render import literal
from tui.widgets.pets_pane import COLUMNS
from tui.widgets.pets_table import PetsTable

SIZE = (90, 12)  # the table shows a header and 11 rows


def rows(start: int, stop: int, name: str = "Pet") -> list[tuple[str, list[Text]]]:
    return [
        (str(i), [Text(str(i), justify="right"), literal(f"{name} {i}", width=40), Text("1"), Text("ok")])
        for i in range(start, stop)
    ]


class TableApp(App[None]):
    """A PetsTable filling the screen; records the messages it posts."""

    def __init__(self, initial: int = 0) -> None:
        super().__init__()
        self.initial = initial
        self.seen: list[tuple[str, int, str]] = []

    def compose(self) -> ComposeResult:
        yield PetsTable(COLUMNS, id="t")

    def on_mount(self) -> None:
        self.table.put_rows(rows(1, self.initial + 1))
        self.table.focus()

    @property
    def table(self) -> PetsTable:
        return self.query_one(PetsTable)

    def on_pets_table_row_highlighted(self, event: PetsTable.RowHighlighted) -> None:
        self.seen.append(("highlighted", event.cursor_row, event.row_key))

    def on_pets_table_row_selected(self, event: PetsTable.RowSelected) -> None:
        self.seen.append(("selected", event.cursor_row, event.row_key))


def line(table: PetsTable, y: int) -> str:
    """The text of view line ``y`` (0 is the header)."""
    return table.render_line(y).text


def cursor_visible(table: PetsTable) -> bool:
    top, shown = round(table.scroll_y), table.scrollable_content_region.height - 1
    return top <= table.cursor_row < top + shown


async def test_header_columns_and_first_row_highlighted() -> None:
    app = TableApp(initial=3)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        table = app.table
        assert line(table, 0).split() == ["ID", "Name", "Category", "Status"]
        assert line(table, 1).startswith("  1  Pet 1 ")  # the id right-justified under "ID" (+1 padding)
        assert table.shown_columns == ["id", "name", "category", "status"]
        assert len(line(table, 1)) == table.size.width  # the name takes the rest of the width
        assert app.seen == [("highlighted", 0, "1")] and table.cursor_key == "1"


async def test_cursor_keys_move_and_keep_the_cursor_visible() -> None:
    app = TableApp(initial=50)
    async with app.run_test(size=SIZE) as pilot:
        table = app.table
        await pilot.press("down", "down", "up")
        assert table.cursor_row == 1 and app.seen[-1] == ("highlighted", 1, "2")
        await pilot.press("pagedown")
        assert table.cursor_row == 12 and cursor_visible(table) and table.scroll_y > 0
        await pilot.press("pageup")
        assert table.cursor_row == 1 and cursor_visible(table)
        await pilot.press("end")
        assert table.cursor_row == 49 and cursor_visible(table) and app.seen[-1] == ("highlighted", 49, "50")
        assert line(table, table.scrollable_content_region.height - 1).split()[:3] == ["50", "Pet", "50"]
        await pilot.press("home")
        assert table.cursor_row == 0 and table.scroll_y == 0
        await pilot.press("up")  # clamped at the top: no new message
        assert app.seen[-1] == ("highlighted", 0, "1")


async def test_enter_and_click_on_the_highlighted_row_select_it() -> None:
    app = TableApp(initial=20)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("down", "enter")
        assert app.seen[-1] == ("selected", 1, "2")
        await pilot.click("#t", offset=(12, 4))  # line 4: the header, then rows 0..2, so row 3
        assert app.table.cursor_row == 3 and app.seen[-1] == ("highlighted", 3, "4")
        await pilot.click("#t", offset=(12, 4))
        assert app.seen[-1] == ("selected", 3, "4")
        await pilot.click("#t", offset=(12, 0))  # the header: nothing happens
        assert app.table.cursor_row == 3 and app.seen[-1] == ("selected", 3, "4")


async def test_append_keeps_cursor_scroll_and_rendered_rows() -> None:
    app = TableApp(initial=100)
    async with app.run_test(size=SIZE) as pilot:
        table = app.table
        table.move_cursor(row=40)
        await pilot.pause()
        scroll_y, shown = table.scroll_y, [line(table, y) for y in range(12)]
        misses = table._strips.misses  # rows rendered so far
        table.put_rows(rows(101, 201))
        await pilot.pause()
        assert table.row_count == 200 and table.virtual_size.height == 201
        assert table.cursor_row == 40 and table.scroll_y == scroll_y
        assert [line(table, y) for y in range(12)] == shown
        assert table._strips.misses == misses  # no row on screen was rendered again
        table.put_row("201", rows(201, 202)[0][1])  # as the pane does for a new pet: add, then select
        table.move_cursor(row=table.get_row_index("201"))
        await pilot.pause()
        assert table.cursor_key == "201" and cursor_visible(table) and "Pet 201" in line(table, 11)


async def test_update_of_an_existing_row_replaces_it_in_place() -> None:
    app = TableApp(initial=5)
    async with app.run_test(size=SIZE) as pilot:
        table = app.table
        table.put_row("3", rows(3, 4, name="Renamed")[0][1])
        await pilot.pause()
        assert table.row_count == 5 and table.get_row_index("3") == 2
        assert table.get_row("3")[1].plain == "Renamed 3" and "Renamed 3" in line(table, 3)
        assert "Pet 2" in line(table, 2) and "Pet 4" in line(table, 4)


async def test_cells_are_shown_literally() -> None:
    app = TableApp()
    async with app.run_test(size=SIZE) as pilot:
        hostile = ["[b]x[/b]", "evil\x1b[31mred\x07", "[link=http://x]y[/link]"]
        cells: list[Any] = [[Text("1"), literal(name, width=40), Text("1"), Text("ok")] for name in hostile]
        app.table.put_rows((str(i), c) for i, c in enumerate(cells))
        await pilot.pause()
        texts = [line(app.table, y) for y in (1, 2, 3)]
        assert "[b]x[/b]" in texts[0] and "[link=http://x]y[/link]" in texts[2]
        assert "\x1b" not in texts[1] and "␛[31mred" in texts[1]
        assert "\x1b" not in app.export_screenshot()


async def test_clear_empties_the_table_and_resets_cursor_and_scroll() -> None:
    app = TableApp(initial=60)
    async with app.run_test(size=SIZE) as pilot:
        table = app.table
        await pilot.press("end")
        table.clear()
        await pilot.pause()
        assert table.row_count == 0 and table.cursor_key is None and table.cursor_row == 0
        assert table.scroll_y == 0 and table.virtual_size.height == 1 and line(table, 1).strip() == ""
        await pilot.press("down", "enter")  # nothing to move to or select
        assert app.seen[-1] == ("highlighted", 59, "60")
        table.put_rows(rows(7, 9))
        await pilot.pause()
        assert app.seen[-1] == ("highlighted", 0, "7") and "Pet 7" in line(table, 1)


async def test_cursor_and_stripes_are_styled() -> None:
    app = TableApp(initial=4)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        table = app.table
        backgrounds = [next(iter(table.render_line(y))).style.bgcolor for y in range(4)]  # header, rows 0..2
        cursor = table.get_component_rich_style("pets-table--cursor").bgcolor
        assert backgrounds[1] == cursor and len({backgrounds[0], backgrounds[2], backgrounds[3], cursor}) == 4
        table.loading = True
        await pilot.pause()
        assert table.loading

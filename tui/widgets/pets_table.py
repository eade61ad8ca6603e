"""A virtualised table (Line API): a fixed header, one-line rows, a row cursor.

Its columns fit its width (:mod:`tui.columns`): id and category as wide as the widest value
loaded, right-aligned under right-aligned headers, the name takes the rest, and the least
important columns give way on narrow terminals. Rows stay in the order of their keys' ids
when inserted with :meth:`PetsTable.insert_row`.

Appending extends a list and grows ``virtual_size``; nothing already rendered is
invalidated. Each row's rendered ``Strip`` is kept in an LRU cache keyed by the row's
key and version, the line width and its styles (zebra, cursor, hover, focus and theme
show up as different styles), so a frame re-renders only rows never drawn in that state.
Cells are rich ``Text`` objects, rendered as they are (never parsed as markup).

Not Textual's ``DataTable``: every append there re-measures the columns and re-renders every row, so a list grows
slower the longer it is (bench/README.md, "TUI at scale"); here an append costs what the new rows cost.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Sequence
from typing import Any, ClassVar

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.cache import LRUCache
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from ..columns import ColumnSpec, Placed, layout

Row = tuple[str, Sequence[Text]]


class PetsTable(ScrollView, can_focus=True):
    """Rows of ``Text`` cells under a header that stays put; row keys are strings."""

    ALLOW_SELECT = False
    PADDING = 1  # blank cells each side of a column, as DataTable's cell_padding
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "select_cursor", "Select", show=False),
        Binding("up,k", "cursor(-1)", "Cursor up", show=False),
        Binding("down,j", "cursor(1)", "Cursor down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home,ctrl+home,g", "jump(0)", "First row", show=False),
        Binding("end,ctrl+end,G", "jump(-1)", "Last row", show=False),
    ]
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "pets-table--header",
        "pets-table--cursor",
        "pets-table--hover",
        "pets-table--even-row",
        "pets-table--odd-row",
    }
    DEFAULT_CSS = """
    PetsTable {
        background: $surface; color: $foreground; height: auto; max-height: 100%;
        & > .pets-table--header { text-style: bold; background: $panel; color: $foreground; }
        &:ansi > .pets-table--header { background: ansi_bright_blue; color: ansi_default; }
        & > .pets-table--even-row { background: $surface-lighten-1 50%; }
        &:dark > .pets-table--even-row { background: $surface-darken-1 40%; }
        & > .pets-table--hover { background: $block-hover-background; }
        & > .pets-table--cursor {
            background: $block-cursor-blurred-background; color: $block-cursor-blurred-foreground;
            text-style: $block-cursor-blurred-text-style;
        }
        &:focus {
            background-tint: $foreground 5%;
            & > .pets-table--header { background-tint: $foreground 5%; }
            & > .pets-table--cursor {
                background: $block-cursor-background; color: $block-cursor-foreground;
                text-style: $block-cursor-text-style;
            }
        }
    }
    """  # DataTable's look: header, zebra stripes, row cursor (blurred / focused), hover

    class RowMessage(Message):
        """About the row under the cursor: its index and key."""

        def __init__(self, table: PetsTable, cursor_row: int, row_key: str) -> None:
            super().__init__()
            self.table, self.cursor_row, self.row_key = table, cursor_row, row_key

        @property
        def control(self) -> PetsTable:
            return self.table

    class RowHighlighted(RowMessage):
        """The cursor moved to a row (or the first row appeared under it)."""

    class RowSelected(RowMessage):
        """Enter on the cursor row, or a click on the row already highlighted."""

    class EndReached(RowMessage):
        """The user moved down onto (or past) the last row: a list may load more."""

    def __init__(self, columns: Sequence[ColumnSpec], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.specs = tuple(columns)
        self.cursor_row = 0
        self.hover_row = -1
        self._keys: list[str] = []
        self._rows: dict[str, tuple[int, int, Sequence[Text]]] = {}  # key -> (index, version, cells)
        self._strips: LRUCache[tuple[Any, ...], Strip] = LRUCache(1024)
        self._header = [Text(c.label, justify=c.justify) for c in self.specs]
        self._widest: dict[str, int] = {}
        self.placed: tuple[Placed, ...] = ()
        self.virtual_size = Size(0, 1)

    # ------------------------------------------------------------------ columns

    @property
    def shown_columns(self) -> list[str]:
        """The keys of the columns shown at the current width, in order."""
        return [self.specs[p.spec].key for p in self.placed]

    def column_width(self, key: str) -> int | None:
        """The width of a shown column (None when it gave way)."""
        return next((p.width for p in self.placed if self.specs[p.spec].key == key), None)

    def _relayout(self) -> None:
        """Fit the columns to the width; repaint when that changed anything."""
        placed = tuple(layout(self.specs, self._widest, self.scrollable_content_region.width, padding=self.PADDING))
        if placed != self.placed:
            self.placed = placed
            self.refresh()

    def _measure(self, cells: Sequence[Text]) -> bool:
        """Grow the widest values seen; True when one grew."""
        grew = False
        for spec, cell in zip(self.specs, cells, strict=False):
            if spec.fill:
                continue
            width = cell_len(cell.plain)
            if width > self._widest.get(spec.key, 0):
                self._widest[spec.key] = width
                grew = True
        return grew

    def on_resize(self, event: events.Resize) -> None:
        self._relayout()
        self.scroll_to_row(self.cursor_row)

    # ------------------------------------------------------------------ data

    @property
    def row_count(self) -> int:
        """How many rows the table holds."""
        return len(self._keys)

    @property
    def keys(self) -> list[str]:
        """The keys of the rows, in the order shown."""
        return list(self._keys)

    @property
    def cursor_key(self) -> str | None:
        """The key of the row under the cursor (None when the table is empty)."""
        return self._keys[self.cursor_row] if self._keys else None

    def get_row_index(self, key: str) -> int:
        """Index of the row with ``key`` (KeyError when there is none)."""
        return self._rows[key][0]

    def get_row(self, key: str) -> Sequence[Text]:
        """The cells of the row with ``key`` (KeyError when there is none)."""
        return self._rows[key][2]

    def put_rows(self, rows: Iterable[Row]) -> None:
        """Append new rows and update existing ones (by key); O(len(rows))."""
        was_empty, grew = not self._keys, False
        for key, cells in rows:
            grew = self._measure(cells) or grew
            if key in self._rows:
                index, version, _ = self._rows[key]
                self._rows[key] = (index, version + 1, tuple(cells))
                self._refresh_row(index)
            else:
                self._rows[key] = (len(self._keys), 0, tuple(cells))
                self._keys.append(key)
        self.virtual_size = Size(0, len(self._keys) + 1)
        if grew:
            self._relayout()
        if was_empty and self._keys:
            self._post(self.RowHighlighted)

    def insert_row(self, key: str, cells: Sequence[Text], *, order: int) -> int:
        """Put a row at its place among rows whose keys are ascending ints (``order`` is its key's);
        returns its index. The cursor stays on the row it was on."""
        if key in self._rows:
            self.put_row(key, cells)
            return self.get_row_index(key)
        index = bisect_left([int(k) for k in self._keys], order)
        if index == len(self._keys):
            self.put_row(key, cells)
            return index
        self._keys.insert(index, key)
        self._rows[key] = (index, 0, tuple(cells))
        for i in range(index + 1, len(self._keys)):  # the rows after it move down one
            _, version, row = self._rows[self._keys[i]]
            self._rows[self._keys[i]] = (i, version, row)
        self.hover_row = -1
        if self.cursor_row >= index:
            self.cursor_row += 1
        if self._measure(cells):
            self._relayout()
        self.virtual_size = Size(0, len(self._keys) + 1)
        self.refresh()
        return index

    def put_row(self, key: str, cells: Sequence[Text]) -> None:
        """Append a row, or update the row with that key in place."""
        self.put_rows([(key, cells)])

    def clear(self) -> None:
        """Remove every row; the cursor goes back to the top. The columns keep their widths (the widest
        values seen stay measured), so another tab or a refresh does not move them."""
        self._keys.clear()
        self._rows.clear()
        self._strips.clear()
        self.cursor_row, self.hover_row = 0, -1
        self.virtual_size = Size(0, 1)
        self._relayout()
        self.scroll_to(0, 0, animate=False, force=True)
        self.refresh()

    # ------------------------------------------------------------------ cursor

    def move_cursor(self, *, row: int, scroll: bool = True) -> None:
        """Put the cursor on ``row`` (clamped); posts RowHighlighted when it moves."""
        row = max(0, min(row, len(self._keys) - 1))
        old, self.cursor_row = self.cursor_row, row
        if row != old:
            self._refresh_row(old)
            self._refresh_row(row)
            self._post(self.RowHighlighted)
        if scroll:
            self.scroll_to_row(row)

    def scroll_to_row(self, row: int) -> None:
        """Scroll the least needed to show ``row`` below the header."""
        shown = max(self.scrollable_content_region.height - 1, 1)
        top = round(self.scroll_y)
        if row < top:
            self.scroll_to(y=row, animate=False, force=True)
        elif row >= top + shown:
            self.scroll_to(y=row - shown + 1, animate=False, force=True)

    def action_cursor(self, delta: int) -> None:
        self._set_hover(-1)
        self.move_cursor(row=self.cursor_row + delta)
        self._check_end(delta)

    def action_page(self, direction: int) -> None:
        """Scroll a page and move the cursor a page, as DataTable does."""
        self._set_hover(-1)
        page = max(self.scrollable_content_region.height - 1, 1)
        self.scroll_to(y=self.scroll_y + direction * page, animate=False, force=True)
        self.move_cursor(row=self.cursor_row + direction * page)
        self._check_end(direction)

    def action_jump(self, row: int) -> None:
        self._set_hover(-1)
        self.move_cursor(row=row if row >= 0 else len(self._keys) - 1)
        self._check_end(1 if row < 0 else -1)  # end / G reach the end; home / g never do

    def _check_end(self, direction: int) -> None:
        if direction < 0 or self.cursor_row != len(self._keys) - 1:
            return
        self._post(self.EndReached)

    def action_select_cursor(self) -> None:
        self._post(self.RowSelected)

    def _post(self, message: type[RowMessage]) -> None:
        """Post a RowHighlighted/RowSelected for the cursor row (none when empty)."""
        if self._keys:
            self.post_message(message(self, self.cursor_row, self._keys[self.cursor_row]))

    # ------------------------------------------------------------------ mouse

    def _row_at(self, event: events.MouseEvent) -> int:
        """The row index under the mouse, or -1 (header, blank space, outside)."""
        offset = event.get_content_offset(self)
        if offset is None or offset.y < 1:
            return -1
        row = offset.y - 1 + round(self.scroll_y)
        return row if row < len(self._keys) else -1

    def on_click(self, event: events.Click) -> None:
        """Click moves the cursor; a click on the highlighted row selects it."""
        row = self._row_at(event)
        if row < 0:
            return
        event.stop()
        again = row == self.cursor_row
        self.move_cursor(row=row)
        if again:
            self._post(self.RowSelected)

    def on_mouse_move(self, event: events.MouseMove) -> None:
        self._set_hover(self._row_at(event))

    def on_leave(self, event: events.Leave) -> None:
        self._set_hover(-1)

    def _set_hover(self, row: int) -> None:
        if row != self.hover_row:
            old, self.hover_row = self.hover_row, row
            self._refresh_row(old)
            self._refresh_row(row)

    # ------------------------------------------------------------------ rendering

    def _refresh_row(self, index: int) -> None:
        """Repaint one row's line, when it is on screen."""
        y = index + 1 - round(self.scroll_y)
        if index >= 0 and 1 <= y < self.size.height:
            self.refresh(Region(0, y, self.size.width, 1))

    def render_line(self, y: int) -> Strip:
        """Line ``y`` of the view: the header, a row, or blank."""
        width, scroll_y = self.size.width, self.scroll_offset.y
        index = y - 1 + scroll_y
        if y == 0:
            strip = self._strip(None, 0, self._header, self.get_component_rich_style("pets-table--header"), None)
        elif index < len(self._keys):
            key = self._keys[index]
            _, version, cells = self._rows[key]
            strip = self._strip(key, version, cells, *self._row_styles(index))
        else:
            return Strip.blank(width, self.rich_style)
        return strip.crop(0, width)

    def _row_styles(self, index: int) -> tuple[Style, Style | None]:
        """The row's style and, under the cursor or mouse, the colour that wins over the cells'."""
        style = self.get_component_rich_style("pets-table--odd-row" if index % 2 else "pets-table--even-row")
        over = Style()
        if index == self.hover_row:
            over += self.get_component_rich_style("pets-table--hover")
        if index == self.cursor_row:
            over += self.get_component_rich_style("pets-table--cursor")
        return (style + over, Style.from_color(over.color) if over else None)

    def _strip(self, key: str | None, version: int, cells: Sequence[Text], style: Style, post: Style | None) -> Strip:
        """The whole rendered line of a row (cached)."""
        width = self.size.width
        cache_key = (key, version, width, self.placed, style, post)
        strip = self._strips.get(cache_key)
        if strip is None:
            line = Text(no_wrap=True, end="")
            pad = " " * self.PADDING
            for column in self.placed:
                text = cells[column.spec].copy() if column.spec < len(cells) else Text()
                text.truncate(column.width, overflow="ellipsis")
                text.align(column.justify, column.width)
                line.append(pad).append_text(text).append(pad)
            segments = Segment.apply_style(line.render(self.app.console), style, post)
            strip = Strip(list(segments)).adjust_cell_length(width, style)
            self._strips[cache_key] = strip
        return strip

"""The pets list pane: a table of id, name, category, status, with paging state.

The first frame shows this pane (loading) before the libraries are imported, so the
pets' cells and the page-size steps (which need the command layer's models) are imported
when first used.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.timer import Timer
from textual.widgets import Input, Static

from ..columns import ColumnSpec
from ..text import CellLike, literal, pet_row_texts
from ..view import RowView, row_tsv, shown_keys
from .pets_table import PetsTable, Row
from .text_input import TextInput

if TYPE_CHECKING:  # pragma: no cover
    from bot_commands.errors import Failure

#: Seconds after the last +/- press before the list is asked for at the new size (one /list per burst).
PAGE_SIZE_DELAY = 0.4

#: The longest status the spec defines ("available").
STATUS_WIDTH = 9

#: The list's columns: id and category as wide as their widest value (int64: up to 20 with a sign),
#: the name takes the rest; on narrow terminals category gives way first, then id. Status is as wide as
#: its longest value whatever the tab shows, so no column moves between tabs.
COLUMNS = (
    ColumnSpec("ID", "id", "right", max_width=20, give_way=2),
    ColumnSpec("Name", "name", fill=True),
    ColumnSpec("Category", "category", "right", max_width=20, give_way=1),
    ColumnSpec("Status", "status", max_width=12, min_width=STATUS_WIDTH),
)


#: Going to a new pet (f) loads at most this many pages (the same guard as /list --all).
FIND_PAGES = 100


class FilterInput(TextInput):
    """The filter over the loaded rows: enter keeps it and goes back to the table, escape clears it."""

    BINDINGS = [Binding("escape", "clear", "Clear filter")]

    class Closed(Message):
        """Escape: the filter is cleared and put away."""

    def action_clear(self) -> None:
        self.post_message(self.Closed())


class PetsPane(Vertical):
    """Shows one status's pets; asks (by message) for details, more, other sizes."""

    BINDINGS = [
        Binding("escape", "clear_filter", "Clear filter"),  # shown only while a filter is kept (check_action)
        Binding("n", "load_more", "More"),
        Binding("f", "find_added", "Go to new pet", show=False),
        Binding("+", "page_size(1)", "Page +", show=False),
        Binding("-", "page_size(-1)", "Page -", show=False),
        Binding("ctrl+f", "filter", "Filter", show=False),
        Binding("I", "sort('id')", "Sort by id", show=False),
        Binding("N", "sort('name')", "Sort by name", show=False),
        Binding("C", "sort('category')", "Sort by category", show=False),
        Binding("S", "sort('status')", "Sort by status", show=False),
        Binding("y", "copy('id')", "Copy id", show=False),
        Binding("Y", "copy('row')", "Copy row", show=False),
    ]

    class OpenDetail(Message):
        def __init__(self, pet_id: int) -> None:
            super().__init__()
            self.pet_id = pet_id

    class LoadMore(Message):
        """The user reached the end of the table (or pressed n) and there is more."""

    class PageSizeChanged(Message):
        def __init__(self, size: int) -> None:
            super().__init__()
            self.size = size

    def __init__(self, *, page_size: int = 20, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.status: str | None = None
        self.page_size = page_size
        self.next_url: str | None = None
        self.pets: dict[int, Any] = {}
        self.more_pending = False
        self.beyond: Any = None  # a pet added after the loaded pages: selected when its page comes
        self.finding = 0  # pages still to load while going to ``beyond`` (f); 0: not going there
        self.page_size_delay = PAGE_SIZE_DELAY
        self._size_timer: Timer | None = None
        #: Rows of a preview are shown (no pets behind them yet): the first list keeps them in view.
        self.previewing = False
        #: The filter and sort over the loaded rows (k9s-like); the table shows what it keeps.
        self.view = RowView()
        #: A word for the info line about live refresh ("" when off).
        self.live_note = ""
        #: What the info line says while a call is retried ("" when none is).
        self.waiting = ""

    def compose(self) -> ComposeResult:
        yield Static(id="pets-banner")
        yield FilterInput(id="pets-filter", placeholder="filter the loaded rows · enter: keep · esc: clear")
        yield PetsTable(COLUMNS, id="pets-table")
        yield Static(id="pets-info")

    @property
    def table(self) -> PetsTable:
        return self.query_one(PetsTable)

    # ------------------------------------------------------------------ state

    def begin_loading(self, status: str | None, *, more: bool = False) -> None:
        """A list is on its way: the table is covered; for more of it, the info line says so."""
        self.status = status
        if more or self.previewing:  # the rows shown stay readable (and in place) while the page comes
            self._update_info(loading=True)
        else:
            self.table.loading = True

    def show_preview(self, rows: Sequence[tuple[str, Sequence[CellLike]]]) -> None:
        """Pets fetched while the session loads (key, cells), shown as they will be until its first page comes."""
        table = self.table
        table.clear()
        table.put_rows([(key, pet_row_texts(cells)) for key, cells in rows])
        table.loading = False
        self.previewing = True
        self._update_info(loading=True)

    def show_live(self, note: str) -> None:
        """Live refresh is on (``note`` says how often) or off (``""``): the info line says so."""
        self.live_note = note
        self._update_info()

    def show_waiting(self, text: str) -> None:
        """A call is slow (retried): the info line says so until the answer or the failure comes."""
        self.waiting = text
        self._update_info()

    def end_waiting(self) -> None:
        """The slow call ended (answered or failed): the info line stops saying it waits."""
        if self.waiting:
            self.show_waiting("")

    def stop_loading(self) -> None:
        """The list request ended without a page (refused, failed, or cancelled)."""
        self.table.loading = False
        self.more_pending = False
        self._update_info()

    def show_page(self, pets: list[Any], *, status: str | None, next_url: str | None, append: bool) -> None:
        """Show a page: replace the rows, or append them (load more)."""
        table = self.table
        keep = table.cursor_key if self.previewing else None  # where the user moved in the preview
        self.previewing = False
        if not append:
            table.clear()
            self.pets.clear()
            self.beyond = None
        from ..render import pet_row  # after the first frame (see the module's doc)

        self.pets.update((pet.id, pet) for pet in pets)
        if self.view.active:
            self._show_view()
        else:
            table.put_rows([(str(pet.id), pet_row(pet)) for pet in pets])
        if keep is not None:
            self.select_pet(int(keep))
        if self.beyond is not None and self.beyond.id in self.pets:
            self.beyond = None if self.select_pet(self.beyond.id) else self.beyond
        had_more = self.next_url is not None
        self.status, self.next_url, self.more_pending = status, next_url, False
        self._keep_finding()
        if (next_url is not None) != had_more:  # check_action("load_more") changed: the footer recomposes
            self.refresh_bindings()
        table.loading = False
        self.clear_problem()
        self._update_info()

    def add_pet(self, pet: Any) -> bool:
        """Put a pet at its place in the id-ordered list; False when that place is not loaded yet
        (then the info line says so, and the pet is selected when its page comes)."""
        loaded_to = max(self.pets, default=None)
        if pet.id not in self.pets and self.next_url is not None and (loaded_to is None or pet.id > loaded_to):
            self.beyond = pet
            self._update_info()
            return False
        from ..render import pet_row

        self.pets[pet.id] = pet
        if self.view.active:
            self._show_view()
        else:
            self.table.insert_row(str(pet.id), pet_row(pet), order=pet.id)
        self._update_info()
        return True

    def merge(self, pets: list[Any]) -> None:
        """Pets listed again (live refresh): rows updated in place, new pets at their place; the cursor
        stays on its pet."""
        from ..render import pet_row

        known = [pet for pet in pets if pet.id in self.pets]
        self.pets.update((pet.id, pet) for pet in known)
        if not self.view.active:
            self.table.put_rows([(str(pet.id), pet_row(pet)) for pet in known])
        for pet in pets:
            if pet.id not in self.pets:
                self.add_pet(pet)
        if self.view.active:
            self._show_view()
        self._update_info()

    # ------------------------------------------------------------------ filter and sort

    def _rows(self) -> list[Row]:
        from ..render import pet_row

        return [(str(pet_id), pet_row(self.pets[pet_id])) for pet_id in sorted(self.pets)]

    def _show_view(self) -> None:
        """Put the rows the view keeps in the table, in its order; the cursor stays on its pet if kept."""
        rows = self._rows()
        order = shown_keys([(key, [cell.plain for cell in cells]) for key, cells in rows], self.view)
        by_key = dict(rows)
        table, keep = self.table, self.table.cursor_key
        table.clear()
        table.put_rows([(key, by_key[key]) for key in order])
        if keep is not None and keep in set(order):
            table.move_cursor(row=table.get_row_index(keep))
        self._update_info()

    def use_view(self, view: RowView) -> None:
        """Filter and sort the loaded rows (an inactive view shows them all, as loaded)."""
        filtered = bool(self.view.text.strip())
        self.view = view
        self._show_view()
        if bool(view.text.strip()) != filtered:  # check_action("clear_filter") changed: the footer says esc or not
            self.refresh_bindings()

    def action_filter(self) -> None:
        self.add_class("-filtering")
        self.query_one(FilterInput).focus()

    def action_sort(self, column: str) -> None:
        self.use_view(self.view.sorted_by(column))

    def on_input_changed(self, event: Input.Changed) -> None:
        if isinstance(event.input, FilterInput):
            event.stop()
            self.use_view(RowView(text=event.value, sort=self.view.sort, reverse=self.view.reverse))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if isinstance(event.input, FilterInput):
            event.stop()
            if not event.value.strip():
                self.remove_class("-filtering")
            self.table.focus()

    def on_filter_input_closed(self, event: FilterInput.Closed) -> None:
        event.stop()
        self._clear_filter()

    def _clear_filter(self) -> None:
        self.query_one(FilterInput).value = ""  # its Changed shows every row again
        self.remove_class("-filtering")
        self.table.focus()

    # ------------------------------------------------------------------ copy

    def action_copy(self, what: str) -> None:
        """The cursor row's id, or the whole row tab-separated, to the clipboard (OSC 52, as Textual does)."""
        key = self.table.cursor_key
        if key is None:
            self.app.bell()
            return
        cells = [cell.plain for cell in self.table.get_row(key)]
        text = key if what == "id" else row_tsv(cells)
        self.app.copy_to_clipboard(text)
        self.notify(f"Copied #{key}" if what == "id" else f"Copied the row of #{key}", title="Clipboard")

    def select_pet(self, pet_id: int) -> bool:
        """Move the cursor to a pet's row; False when it is not shown."""
        if pet_id not in self.pets:
            return False
        try:
            row = self.table.get_row_index(str(pet_id))
        except KeyError:  # loaded, but the filter hides it
            return False
        self.table.move_cursor(row=row)
        return True

    def selected_pet_id(self) -> int | None:
        key = self.table.cursor_key
        return int(key) if key else None

    def show_problem(self, failure: Failure, *, hint: str = "") -> None:
        """A visible state above the table (unreachable, unauthorised, ...)."""
        self.stop_loading()
        banner = self.query_one("#pets-banner", Static)
        banner.update(Text.assemble((f"{failure.title}: ", "bold"), literal(failure.message), hint))
        self.add_class("-problem")
        if not self.pets:
            self.query_one("#pets-info", Static).update(Text("Nothing loaded · r retries"))

    def clear_problem(self) -> None:
        if not self.has_class("-problem"):  # the banner is only filled with the class set
            return
        self.remove_class("-problem")
        self.query_one("#pets-banner", Static).update("")

    def _update_info(self, *, loading: bool = False) -> None:
        shown = self.table.row_count
        if self.view.active:
            parts = [f"{shown} of {len(self.pets)} pets shown", self.view.describe()]
        else:
            parts = [f"{shown} pet{'s' if shown != 1 else ''} shown"]
        parts.append(f"page size {self.page_size} (+/-)")
        if self.live_note:
            parts.append(self.live_note)
        if self.waiting:
            parts = [self.waiting, *parts]
        elif loading:
            parts.append("loading…" if self.previewing else "loading more…")
        else:
            parts.append("more: n" if self.next_url else "end of list")
        if self.beyond is not None:
            parts.insert(0, f"#{self.beyond.id} added after the loaded pages (f goes there)")
        # one line, fixed height (main.tcss): a new text never changes its size
        self.query_one("#pets-info", Static).update(Text(" · ".join(parts)), layout=False)

    # ------------------------------------------------------------------ events and actions

    def on_pets_table_row_selected(self, event: PetsTable.RowSelected) -> None:
        event.stop()
        if event.row_key:
            self.post_message(self.OpenDetail(int(event.row_key)))

    def on_pets_table_row_highlighted(self, event: PetsTable.RowHighlighted) -> None:
        event.stop()

    def on_pets_table_end_reached(self, event: PetsTable.EndReached) -> None:
        """Only a move by the user loads more (a first page of one row does not)."""
        event.stop()
        self.action_load_more()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "load_more":
            return self.next_url is not None
        if action == "clear_filter":
            return bool(self.view.text.strip())
        return True

    def action_clear_filter(self) -> None:
        """Escape on the list: the kept filter cleared, every loaded row shown again (the sort stays)."""
        self._clear_filter()

    def action_load_more(self) -> None:
        if self.next_url and not self.more_pending:
            self.more_pending = True
            self.post_message(self.LoadMore())

    def action_find_added(self) -> None:
        """Go to the pet added after the loaded pages: load pages until its own comes (at most FIND_PAGES)."""
        if self.beyond is None:
            return
        self.finding = FIND_PAGES
        self._keep_finding()

    def _keep_finding(self) -> None:
        if not self.finding:
            return
        if self.beyond is None or self.next_url is None:  # found (and selected), or no more pages
            self.finding = 0
            return
        self.finding -= 1
        self.table.move_cursor(row=self.table.row_count - 1)  # where the next rows come
        self.action_load_more()

    def action_page_size(self, direction: int) -> None:
        """Step the page size; presses in a row make one list, ``page_size_delay`` after the last."""
        from ..controller import step_page_size

        self.page_size = step_page_size(self.page_size, direction)
        self._update_info()
        if self._size_timer is not None:
            self._size_timer.stop()
        if self.page_size_delay > 0:
            self._size_timer = self.set_timer(self.page_size_delay, self.flush_page_size)
        else:
            self.post_message(self.PageSizeChanged(self.page_size))

    def flush_page_size(self) -> None:
        """Ask for the list at the new page size now (the pending press's timer, if any, is dropped)."""
        if self._size_timer is not None:
            self._size_timer.stop()
            self._size_timer = None
            self.post_message(self.PageSizeChanged(self.page_size))

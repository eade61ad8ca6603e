"""Store > Orders: the unspecified payload, shown as its neutral view (a table, or JSON)."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Label, Static

from bot_commands.render import cell_text, to_rich
from bot_commands.results import OrdersListing
from bot_commands.views import Cell, NoticeView, TableView, present

from ..widgets.footer import KeysFooter


class OrdersScreen(Screen[None]):
    """A table for a list of flat objects; pretty JSON for anything else."""

    BINDINGS = [Binding("escape,q", "close", "Back")]

    def __init__(self, orders: OrdersListing, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.view = present(orders).view

    def compose(self) -> ComposeResult:
        with Vertical(id="orders"):
            yield Label("Store › Orders", classes="screen-title")
            if isinstance(self.view, TableView):
                yield DataTable(id="orders-table", cursor_type="row", zebra_stripes=True)
            elif isinstance(self.view, NoticeView):
                yield Static(Text("No orders.", style="dim"), id="orders-empty")
            else:
                with VerticalScroll(id="orders-json"):
                    yield Static(to_rich(self.view))
        yield KeysFooter()

    def on_mount(self) -> None:
        if isinstance(self.view, TableView):
            self._fill(self.query_one(DataTable), self.view)

    @staticmethod
    def _fill(table: DataTable[Text], view: TableView) -> None:
        for column in view.columns:
            table.add_column(cell_text(Cell(column.title), column.width), key=column.title)
        for row in view.rows:
            table.add_row(*(cell_text(cell, column.width) for cell, column in zip(row, view.columns, strict=True)))
        table.focus()

    def action_close(self) -> None:
        self.dismiss(None)

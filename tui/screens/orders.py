"""Store > Orders: the unspecified payload rendered generically."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Label, Static

from ..render import is_flat_records, literal, pretty_json, record_columns

CELL_WIDTH = 40


class OrdersScreen(Screen[None]):
    """A table for a list of flat objects; pretty JSON for anything else."""

    BINDINGS = [Binding("escape,q", "close", "Back")]

    def __init__(self, data: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.data = data

    def compose(self) -> ComposeResult:
        with Vertical(id="orders"):
            yield Label("Store › Orders", classes="screen-title")
            if is_flat_records(self.data):
                yield DataTable(id="orders-table", cursor_type="row", zebra_stripes=True)
            elif self.data in (None, [], {}):
                yield Static(Text("No orders.", style="dim"), id="orders-empty")
            else:
                with VerticalScroll(id="orders-json"):
                    yield Static(pretty_json(self.data))
        yield Footer()

    def on_mount(self) -> None:
        if is_flat_records(self.data):
            self._fill(self.query_one(DataTable))

    def _fill(self, table: DataTable) -> None:
        columns = record_columns(self.data)
        for column in columns:
            table.add_column(literal(column, width=CELL_WIDTH), key=column)
        for record in self.data:
            table.add_row(*(self._cell(record.get(c)) for c in columns))
        table.focus()

    @staticmethod
    def _cell(value: Any) -> Text:
        return Text("") if value is None else literal(value, width=CELL_WIDTH)

    def action_close(self) -> None:
        self.dismiss(None)

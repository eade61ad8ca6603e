"""The help screen: every key binding, and where the commands are."""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Label, Static

from ..widgets.footer import KeysFooter


def keys_table(rows: list[tuple[str, str, str]]) -> Table:
    table = Table.grid(padding=(0, 2))
    table.add_column(style="dim", no_wrap=True)
    table.add_column(style="bold cyan", no_wrap=True)
    table.add_column()
    for where, key, description in rows:
        table.add_row(Text(where), Text(key), Text(description))
    return table


class HelpScreen(ModalScreen[None]):
    """Rows are (where, key, what) triples; see ``tui.keys.help_rows``."""

    BINDINGS = [Binding("escape,q,question_mark,f1", "close", "Close")]

    def __init__(self, rows: list[tuple[str, str, str]], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.rows = rows

    def compose(self) -> ComposeResult:
        with Vertical(id="help-dialog", classes="dialog"):
            yield Label("Keys", classes="dialog-title")
            with VerticalScroll():
                yield Static(keys_table(self.rows))
                yield Static(
                    Text(
                        "Every key runs a slash command; the log shows which. Type /help in the prompt "
                        "for the commands, or press ctrl+p for the command palette.",
                        style="dim",
                    ),
                    id="help-footnote",
                )
        yield KeysFooter()

    def action_close(self) -> None:
        self.dismiss(None)

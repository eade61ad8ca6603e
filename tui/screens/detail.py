"""The detail view of one pet: every field, getPet's deprecation, 404s and fallbacks."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Label, Static

from bot_commands.sanitize import clip

from ..controller import DetailView
from ..render import literal
from ..widgets.footer import KeysFooter

#: Longest field value shown in full; longer ones are cut (their length is said).
VALUE_WIDTH = 400


def fields_table(fields: Sequence[tuple[str, str]]) -> Table:
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold", no_wrap=True)
    table.add_column(overflow="fold")
    for key, value in fields:
        shown = literal(clip(value, VALUE_WIDTH))
        if len(value) > VALUE_WIDTH:
            shown.append(f"  ({len(value)} characters)", style="dim")
        table.add_row(literal(key, width=30), shown)
    return table


class DetailScreen(ModalScreen[None]):
    """Shows a :class:`DetailView`; escape closes."""

    BINDINGS = [Binding("escape,q", "close", "Close")]

    def __init__(self, view: DetailView, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.view = view

    def compose(self) -> ComposeResult:
        view = self.view
        with Vertical(id="detail-dialog", classes="dialog"):
            yield Label(f"Pet #{view.pet_id}", classes="dialog-title")
            with VerticalScroll(id="detail-body"):
                if view.failure:
                    yield Static(self._failure_text(), id="detail-error")
                else:
                    yield Static(fields_table(view.fields), id="detail-fields")
                if view.fallback:
                    yield Static(Text(view.fallback), id="detail-fallback")
            yield Static(Text(f"⚠ {view.notice}"), id="detail-deprecation")
        yield KeysFooter()

    def _failure_text(self) -> Text:
        failure = self.view.failure
        assert failure is not None
        if failure.kind == "not_found":
            head = f"No pet with id {self.view.pet_id} (404 Not Found)."
        else:
            head = f"{failure.title}."
        return Text.assemble((head, "bold"), "\nThe service said: ", literal(failure.message))

    def action_close(self) -> None:
        self.dismiss(None)

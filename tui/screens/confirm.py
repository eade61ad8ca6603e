"""A yes/no question (writes on production)."""

from __future__ import annotations

from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Static

from ..text import literal
from ..widgets.footer import KeysFooter


class ConfirmScreen(ModalScreen[bool]):
    """Dismissed with True (y / Yes) or False (n / escape / No)."""

    BINDINGS = [
        Binding("y", "answer(True)", "Yes"),
        Binding("n,escape", "answer(False)", "No"),
    ]

    def __init__(self, question: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-dialog", classes="dialog"):
            yield Label("Confirm", classes="dialog-title")
            yield Static(literal(self.question))
            with Horizontal(classes="dialog-buttons"):
                yield Button("No", id="no")
                yield Button("Yes", id="yes", variant="error")
        yield KeysFooter()

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)

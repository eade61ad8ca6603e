"""Ask for an API key after a 401; the key is used for this session only."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static

from ..render import literal
from ..widgets.footer import KeysFooter
from ..widgets.text_input import TextInput


class ApiKeyScreen(ModalScreen[str | None]):
    """Dismissed with the key typed, or None."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, message: str, *, has_key: bool = True, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.message = message
        self.has_key = has_key

    def compose(self) -> ComposeResult:
        with Vertical(id="key-dialog", classes="dialog"):
            yield Label("API key needed", classes="dialog-title")
            lead = "The service refused the key: " if self.has_key else "No API key is configured; the service said: "
            yield Static(Text.assemble(lead, literal(self.message)))
            yield Static(Text("Enter a key for this session (it is not saved):", style="dim"))
            yield TextInput(id="api-key", password=True, placeholder="API key")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Cancel", id="cancel")
                yield Button("Use key", id="use", variant="primary")
        yield KeysFooter()

    @on(Input.Submitted)
    @on(Button.Pressed, "#use")
    def _use(self) -> None:
        key = self.query_one("#api-key", Input).value.strip()
        self.dismiss(key or None)

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)

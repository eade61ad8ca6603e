"""The add-pet form (modal): validated as you type; the service's refusals shown beside it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid, Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Select, Static

from bot_commands.outcome import Outcome
from bot_commands.results import PetCreated
from bot_commands.validation import NAME_MAX_LENGTH, STATUSES

from ..render import literal
from ..validation import Check, FormValues, category_error, form_errors, name_error, parse_form
from ..widgets.footer import KeysFooter
from ..widgets.text_input import TextInput

Submit = Callable[[FormValues], Awaitable[Outcome]]


class AddPetScreen(ModalScreen[Any]):
    """Dismissed with the created pet, or None when cancelled."""

    BINDINGS = [
        Binding("escape", "cancel", "Cancel"),
        Binding("ctrl+s", "submit", "Add"),
        # priority: the focus moves as the key arrives, so "Downy<tab>2" typed in one burst fills two fields
        Binding("tab", "next_field", "Next field", show=False, priority=True),
        Binding("shift+tab", "previous_field", "Previous field", show=False, priority=True),
    ]

    def __init__(self, *, submit: Submit, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._submit = submit

    def compose(self) -> ComposeResult:
        with Vertical(id="add-dialog", classes="dialog"):
            yield Label("Add a pet", classes="dialog-title")
            with Grid(id="add-grid"):
                yield Label("Name", classes="field-label")
                yield TextInput(
                    id="name",
                    placeholder=f"required, 1..{NAME_MAX_LENGTH} characters",
                    validators=[Check(name_error)],
                    validate_on=["changed", "submitted"],
                )
                yield Static("", id="name-error", classes="field-error")
                yield Label("Category id", classes="field-label")
                yield TextInput(
                    id="category",
                    placeholder="required, a whole number (int64)",
                    validators=[Check(category_error)],
                    validate_on=["changed", "submitted"],
                )
                yield Static("", id="category-error", classes="field-error")
                yield Label("Status", classes="field-label")
                yield Select([(s, s) for s in STATUSES], id="status", prompt="(not set)")
                yield Static("", id="status-error", classes="field-error")
            yield Static("", id="form-error")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Cancel", id="cancel")
                yield Button("Add", id="add", variant="primary")
        yield KeysFooter()

    def on_mount(self) -> None:
        self.query_one("#name", Input).focus()

    @on(Input.Changed)
    def _show_field_error(self, event: Input.Changed) -> None:
        result = event.validation_result
        message = "" if result is None or result.is_valid else " ".join(result.failure_descriptions)
        self._field_error(str(event.input.id), message)

    def _field_error(self, field: str, message: str) -> None:
        label = self.query_one(f"#{field}-error", Static)
        label.update(message)
        label.set_class(bool(message), "-shown")

    @on(Input.Submitted)
    @on(Button.Pressed, "#add")
    def action_submit(self) -> None:
        values = self._values()
        errors = form_errors(**values)
        for field in ("name", "category", "status"):
            self._field_error(field, errors.get(field, ""))
        if errors:
            self.query_one(f"#{next(iter(errors))}").focus()
            return
        self._send(parse_form(**values))

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)

    def action_next_field(self) -> None:
        self.focus_next()

    def action_previous_field(self) -> None:
        self.focus_previous()

    def _values(self) -> dict[str, Any]:
        status = self.query_one("#status", Select).value
        return {
            "name": self.query_one("#name", Input).value,
            "category": self.query_one("#category", Input).value,
            "status": status if isinstance(status, str) else None,
        }

    @work(exclusive=True, group="add-form")
    async def _send(self, values: FormValues) -> None:
        button = self.query_one("#add", Button)
        button.disabled = True
        self._form_error(Text("Adding…", style="dim"))
        try:
            outcome = await self._submit(values)
        finally:
            button.disabled = False
        if isinstance(outcome.result, PetCreated):
            self.dismiss(outcome.result)
        else:
            self.show_failure(outcome)

    def show_failure(self, outcome: Outcome) -> None:
        """The service's (or command layer's) answer, beside the form; fields kept."""
        failure = outcome.failure
        if failure is None:  # e.g. a declined confirmation: the session's notice
            text = Text(getattr(outcome.result, "text", "Not added."))
        else:
            text = Text.assemble((f"{failure.title}: ", "bold"), literal(failure.problem or failure.message))
        self._form_error(text)
        self.add_class("-failed")

    def _form_error(self, text: Text) -> None:
        label = self.query_one("#form-error", Static)
        label.update(text)
        label.set_class(bool(text.plain), "-shown")

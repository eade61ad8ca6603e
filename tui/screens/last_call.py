"""The last call's request and response, as posting shows them: method, URL, status, headers (the key
masked by the client), bodies. Text from the service is shown literally."""

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

from bot_commands.ports import Exchange

from ..calls import body_text, shown_headers, shown_url
from ..render import literal
from ..widgets.footer import KeysFooter


def headers_table(headers: Sequence[tuple[str, str]]) -> Table:
    table = Table.grid(padding=(0, 1))
    table.add_column(style="bold", no_wrap=True)
    table.add_column(overflow="fold")
    for name, value in headers:
        table.add_row(literal(name, width=40), literal(value))
    return table


class LastCallScreen(ModalScreen[None]):
    """Shows one :class:`~bot_commands.ports.Exchange`, or says there was none yet; escape closes."""

    BINDINGS = [Binding("escape,q,i", "close", "Close")]

    def __init__(self, exchange: Exchange | None, *, sandbox: str | None = None, **kwargs: Any) -> None:
        """``sandbox``: the sandbox's label when the session runs on it (its made-up host is not shown)."""
        super().__init__(**kwargs)
        self.exchange = exchange
        self.sandbox = sandbox

    def compose(self) -> ComposeResult:
        call = self.exchange
        with Vertical(id="call-dialog", classes="dialog"):
            yield Label("Last call", classes="dialog-title")
            with VerticalScroll(id="call-body"):
                if call is None:
                    yield Static("No call has had an answer yet.", id="call-none")
                else:
                    yield from self._parts(call)
        yield KeysFooter()

    def _parts(self, call: Exchange) -> ComposeResult:
        request_line = Text.assemble((call.method, "bold"), " ", literal(shown_url(call.url, sandbox=self.sandbox)))
        status = Text.assemble(
            (f"{call.status}", "bold green" if call.status < 400 else "bold red"),
            f"  · attempt {call.attempt}",
        )
        yield Static(request_line, id="call-request-line")
        yield Static(status, id="call-status")
        yield Label("Request headers", classes="call-heading")
        sent = shown_headers(call.request_headers, sandbox=self.sandbox)
        yield Static(headers_table(sent), id="call-request-headers")
        if call.request_body:
            yield Label("Request body", classes="call-heading")
            yield Static(literal(body_text(call.request_body), keep_newlines=True), id="call-request-body")
        yield Label("Response headers", classes="call-heading")
        received = shown_headers(call.response_headers, sandbox=self.sandbox)
        yield Static(headers_table(received), id="call-response-headers")
        yield Label("Response body", classes="call-heading")
        yield Static(literal(body_text(call.response_body), keep_newlines=True), id="call-response-body")

    def action_close(self) -> None:
        self.dismiss(None)

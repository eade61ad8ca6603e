"""The top bar: environment, base URL and (masked) key; production stands out."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Label

from ..render import literal


class EnvBar(Horizontal):
    """Shows where the session points. ``env`` is the session's EnvInfo."""

    def __init__(self, env: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.env = env
        self.add_class(f"-env-{env.env}" if env else "-env-unknown")

    def compose(self) -> ComposeResult:
        env = self.env
        yield Label("petstore", id="app-name")
        yield Label(literal(env.env.upper()), id="env-name")
        yield Label(literal(env.base_url), id="base-url")
        yield Label(literal(f"key {env.masked_key}"), id="masked-key")
        if env.read_only:
            yield Label("READ-ONLY", id="read-only")

    def show(self, env: Any) -> None:
        """Show a changed env (a new key: its masked form)."""
        self.env = env
        self.query_one("#masked-key", Label).update(literal(f"key {env.masked_key}"))

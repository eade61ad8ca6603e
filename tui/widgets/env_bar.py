"""The top bar: environment, base URL and (masked) key; production stands out.

Before the settings are loaded (the first frame) it has no env: it says "loading…" where the
environment, the address and the key go, never a guess.
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Label

from ..text import literal

#: What the bar shows for the environment and the key until they are known.
LOADING = "loading…"


class EnvBar(Horizontal):
    """Shows where the session points. ``env`` is the session's EnvInfo (None: not known yet)."""

    def __init__(self, env: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.env = env
        self.add_class(f"-env-{env.env}" if env else "-env-unknown")

    def compose(self) -> ComposeResult:
        env = self.env
        yield Label("petstore", id="app-name")
        if env is None:
            yield Label(LOADING, id="env-name")
            yield Label("", id="base-url")
            yield Label(f"key {LOADING}", id="masked-key")
            return
        yield Label(literal(env.env.upper()), id="env-name")
        yield Label(literal(env.base_url), id="base-url")
        yield Label(literal(f"key {env.masked_key}"), id="masked-key")
        if env.read_only:
            yield Label("READ-ONLY", id="read-only")

    async def load(self, env: Any) -> None:
        """Show the session's env in place of "loading…" (the first frame's bar, once it is known)."""
        self.remove_class(f"-env-{self.env.env}" if self.env else "-env-unknown")
        self.env = env
        self.add_class(f"-env-{env.env}")
        # In place: recomposing removes and mounts every label again (a layout pass more).
        self.query_one("#env-name", Label).update(literal(env.env.upper()))
        self.query_one("#base-url", Label).update(literal(env.base_url))
        self.query_one("#masked-key", Label).update(literal(f"key {env.masked_key}"))
        if env.read_only and not self.query("#read-only"):
            await self.mount(Label("READ-ONLY", id="read-only"))

    def show(self, env: Any) -> None:
        """Show a changed env (a new key: its masked form)."""
        self.env = env
        self.query_one("#masked-key", Label).update(literal(f"key {env.masked_key}"))

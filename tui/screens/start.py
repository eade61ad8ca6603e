"""The first frame: the main screen's chrome while the libraries and the session load.

Imports Textual and the light widgets only. The env bar says "loading…" for the
environment and the key (never a guess), the table is covered by its loading state, the
prompt takes typing (carried over to the main screen). :class:`tui.app.PetStoreApp` swaps
in the main screen when its start-up worker reports the session.
"""

from __future__ import annotations

from pathlib import Path

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer

from bot_commands.history import PromptHistory

from ..widgets.chat_pane import ChatPane
from ..widgets.env_bar import EnvBar
from ..widgets.pets_pane import PetsPane
from ..widgets.status_tabs import StatusTabs


def _no_completion(line: str) -> tuple[str, ...]:
    return ()


class StartScreen(Screen[None]):
    """Same widgets, ids and layout as the main screen; nothing in it comes from the service."""

    AUTO_FOCUS = "#prompt"

    def __init__(self, *, history_path: Path | None = None) -> None:
        super().__init__()
        self.history_path = history_path

    def compose(self) -> ComposeResult:
        history = PromptHistory(self.history_path) if self.history_path is not None else None
        yield EnvBar(None, id="env-bar")
        yield StatusTabs(id="status-tabs")
        yield PetsPane(id="pets-pane")
        yield ChatPane(complete=_no_completion, history=history, id="chat-pane")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(PetsPane).begin_loading(None)

    @property
    def typed(self) -> str:
        """What the user typed in the prompt while loading."""
        return self.query_one(ChatPane).prompt.value

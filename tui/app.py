"""The Textual app: takes its command session in the constructor; screens do the rest."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

from textual.app import App
from textual.binding import Binding

from bot_commands.history import PromptHistory
from bot_commands.session import CommandSession

from .confirm import TuiConfirm
from .keys import help_rows
from .palette import SlashCommands
from .player import Player
from .screens.help import HelpScreen
from .screens.main import MainScreen
from .themes import ThemeMemory


class PetStoreApp(App[int]):
    """``PetStoreApp(session=CommandSession(...))``; see :func:`tui.run.run_tui`."""

    TITLE = "petstore"
    CSS_PATH = ["styles/app.tcss", "styles/main.tcss", "styles/dialogs.tcss"]
    COMMANDS = App.COMMANDS | {SlashCommands}
    #: Screens under 30 rows get the class -short: forms go compact (dialogs.tcss).
    VERTICAL_BREAKPOINTS = [(0, "-short"), (30, "-tall")]
    BINDINGS = [
        Binding("ctrl+q", "quit", "Quit", priority=True),
        Binding("question_mark,f1", "help", "Help"),
        Binding("p", "pause_play", "Pause/resume"),
        Binding("s", "skip_play", "Skip to end"),
    ]

    def __init__(self, session: CommandSession, *, page_size: int = 20, theme: str | None = None,
                 confirm: TuiConfirm | None = None, today: Callable[[], date] = date.today,
                 player: Player | None = None, history_path: Path | None = None,
                 theme_memory: ThemeMemory | None = None, **kwargs: Any) -> None:
        """``confirm``: the session's confirmation dialog (the app shows it); see :func:`tui.run.run_tui`.

        ``history_path``: the prompt history shared with ``petstore chat``; ``theme_memory``: where
        the theme chosen in the TUI is remembered (``theme`` wins over the remembered one)."""
        super().__init__(**kwargs)
        self.session = session
        self.player = player
        self._page_size = page_size
        self._today = today
        self._history = PromptHistory(history_path) if history_path is not None else None
        self._theme_memory = theme_memory
        confirm = confirm or (session.confirm if isinstance(session.confirm, TuiConfirm) else None)
        if confirm is not None:
            confirm.attach(self)
        theme = theme or (theme_memory.load() if theme_memory is not None else None)
        if theme and theme in self.available_themes:
            self.theme = theme

    def on_mount(self) -> None:
        self.theme_changed_signal.subscribe(self, self._remember_theme)

    def _remember_theme(self, theme: Any) -> None:
        if self._theme_memory is not None:
            self._theme_memory.save(theme.name)

    def get_default_screen(self) -> MainScreen:
        return MainScreen(self.session, page_size=self._page_size, today=self._today, history=self._history)

    @property
    def main_screen(self) -> MainScreen:
        """The main screen (always at the bottom of the stack)."""
        screen = self.screen_stack[0]
        assert isinstance(screen, MainScreen)
        return screen

    def slash_command(self, line: str, *, run: bool) -> None:
        """Run ``line`` on the main screen, or put it in the prompt to complete."""
        main = self.main_screen
        if run:
            main.submit(line)
        else:
            main.chat.prompt.focus()
            main.chat.type_into(line + " ")

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(help_rows()))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in {"pause_play", "skip_play"}:
            return self.player is not None and self.player.report is None
        return True

    def action_pause_play(self) -> None:
        if self.player is not None:
            paused = self.player.toggle_pause()
            self.notify("Paused: p resumes." if paused else "Resumed.", title="Script")

    def action_skip_play(self) -> None:
        if self.player is not None:
            self.player.skip()

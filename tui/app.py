"""The Textual app: a command session from the constructor, or built behind the first frame.

``PetStoreApp(session)`` shows the main screen at once (tests, embedding). ``PetStoreApp(start=f)``
first paints the main screen without a session (its loading state; Textual and light modules only),
then runs ``f`` in a thread worker (settings, client, pydantic models, httpx, the sandbox) and gives
the same screen the session when it reports (:class:`PetStoreApp.SessionReady`, then
:meth:`~tui.screens.main.MainScreen.attach`): nothing is mounted twice. A
:class:`~tui.startup.StartupError` ends the app with exit code 2 and its line in
:attr:`PetStoreApp.start_error`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import events, work
from textual.app import App
from textual.binding import Binding
from textual.message import Message
from textual.screen import Screen

from bot_commands.history import PromptHistory

from .live import DEFAULT_INTERVAL
from .palette import SlashCommands
from .screens.main import MainScreen
from .startup import PreviewSource, Start, Started, StartupError
from .themes import ThemeMemory

if TYPE_CHECKING:  # pragma: no cover
    from bot_commands.session import CommandSession

    from .confirm import TuiConfirm
    from .player import Player


#: Seconds the start-up thread waits for a preview's rows to be on screen (then it starts anyway): the thread's
#: imports would hold the GIL against the few steps that show them.
PREVIEW_HEAD_START = 0.15


class PetStoreApp(App[int]):
    """``PetStoreApp(session=CommandSession(...))`` or ``PetStoreApp(start=...)``; see :func:`tui.run.run_tui`."""

    TITLE = "petstore"
    #: The main screen's styles, then every other screen's (dialogs, forms, views; ModalScreen, which Textual's
    #: command palette is too).
    CSS_PATH = ["styles/main.tcss", "styles/app.tcss", "styles/dialogs.tcss"]
    COMMANDS = App.COMMANDS | {SlashCommands}
    #: Screens under 30 rows get the class -short: forms go compact (dialogs.tcss).
    VERTICAL_BREAKPOINTS = [(0, "-short"), (30, "-tall")]
    BINDINGS = [
        Binding("ctrl+q", "quit", "Quit", priority=True),
        Binding("question_mark,f1", "help", "Help"),
        Binding("p", "pause_play", "Pause/resume"),
        Binding("s", "skip_play", "Skip to end"),
    ]

    class SessionReady(Message):
        """The start-up worker built the session."""

        def __init__(self, started: Started) -> None:
            super().__init__()
            self.started = started

    class StartFailed(Message):
        """The start-up worker could not build the session: ``line`` says why."""

        def __init__(self, line: str) -> None:
            super().__init__()
            self.line = line

    def __init__(
        self,
        session: CommandSession | None = None,
        *,
        start: Start | None = None,
        page_size: int = 20,
        theme: str | None = None,
        confirm: TuiConfirm | None = None,
        today: Callable[[], date] = date.today,
        player: Player | None = None,
        history_path: Path | None = None,
        theme_memory: ThemeMemory | None = None,
        preview: PreviewSource | None = None,
        refresh_interval: float = DEFAULT_INTERVAL,
        **kwargs: Any,
    ) -> None:
        """``confirm``: the session's confirmation dialog (the app shows it); see :func:`tui.run.run_tui`.

        ``history_path``: the prompt history shared with ``petstore chat``; ``theme_memory``: where
        the theme chosen in the TUI is remembered (``theme`` wins over the remembered one);
        ``preview``: the first page, fetched elsewhere while the session loads (shown until it comes);
        ``refresh_interval``: seconds between live refreshes (``w``)."""
        super().__init__(**kwargs)
        self.session = session
        self.player = player
        self.start_error: str | None = None
        #: Awaited when the app ends (set by a start-up worker's result).
        self.aclose: Callable[[], Awaitable[object]] | None = None
        self._start = start
        self._preview = preview
        self._loading = False
        self._page_size = page_size
        self._today = today
        self._history_path = history_path
        self._theme_memory = theme_memory
        self._refresh_interval = refresh_interval
        if session is not None:
            from .confirm import TuiConfirm  # a session given at once (tests, --play): not the first frame's

            self._attach_confirm(confirm or (session.confirm if isinstance(session.confirm, TuiConfirm) else None))
        self._use_theme(theme or (theme_memory.load() if theme_memory is not None else None))

    def _attach_confirm(self, confirm: TuiConfirm | None) -> None:
        if confirm is not None:
            confirm.attach(self)

    def _use_theme(self, theme: str | None) -> None:
        if theme and theme in self.available_themes:
            self.theme = theme

    def on_mount(self) -> None:
        self.theme_changed_signal.subscribe(self, self._remember_theme)

    def on_ready(self) -> None:
        """The first frame is composed (Textual's Ready): now the preview, if one is coming, then the
        libraries in a thread. The preview goes first (at most :data:`PREVIEW_HEAD_START` seconds): the
        thread's imports hold the GIL, and would slow the few steps that put its rows on screen."""
        if self.session is not None or self._start is None:
            return
        if self._preview is None:
            self._load_once()
            return
        self.run_worker(self._show_preview(self._preview), group="preview", exit_on_error=False)
        self.set_timer(PREVIEW_HEAD_START, self._load_once)

    async def _show_preview(self, source: PreviewSource) -> None:
        """The preview's rows on the main screen, if they come before the session; then the session's load."""
        try:
            preview = await source.wait()
            if preview is not None and self.session is None:
                await self.main_screen.show_preview(preview)
        finally:
            self.call_after_refresh(self._load_once)  # once the rows are painted

    def _load_once(self) -> None:
        if not self._loading:
            self._loading = True
            self.load_session()

    def _remember_theme(self, theme: Any) -> None:
        if self._theme_memory is not None:
            self._theme_memory.save(theme.name)

    def get_default_screen(self) -> Screen[Any]:
        history = PromptHistory(self._history_path) if self._history_path is not None else None
        return MainScreen(
            self.session,
            page_size=self._page_size,
            today=self._today,
            history=history,
            refresh_interval=self._refresh_interval,
        )

    # ------------------------------------------------------------------ start-up behind the first frame

    @work(thread=True, group="start", exit_on_error=True)
    def load_session(self) -> None:
        """Run the face's start-up function off the event loop; report by message."""
        assert self._start is not None
        try:
            started = self._start()
            from .screens.main import preload

            preload()  # what the main screen imports on first use, off the event loop
        except StartupError as exc:
            self.post_message(self.StartFailed(str(exc)))
            return
        self.post_message(self.SessionReady(started))

    def on_pet_store_app_start_failed(self, message: StartFailed) -> None:
        self.start_error = message.line
        self.exit(return_code=2)

    async def on_pet_store_app_session_ready(self, message: SessionReady) -> None:
        started = message.started
        self.session, self.player, self.aclose = started.session, started.player, started.aclose
        self._page_size = started.page_size
        self.main_screen.refresh_interval = started.refresh_interval
        self._attach_confirm(started.confirm)
        self._use_theme(started.theme)
        await self.main_screen.attach(started.session, page_size=started.page_size)
        for line in started.warnings:
            self.notify(line, title="Warning", severity="warning", markup=False)

    # ------------------------------------------------------------------ the rest

    @property
    def main_screen(self) -> MainScreen:
        """The main screen (at the bottom of the stack)."""
        return next(screen for screen in self.screen_stack if isinstance(screen, MainScreen))

    def slash_command(self, line: str, *, run: bool) -> None:
        """Run ``line`` on the main screen, or put it in the prompt to complete."""
        main = self.main_screen
        if run:
            main.submit(line)
        else:
            main.chat.prompt.focus()
            main.chat.type_into(line + " ")

    def on_delivery_failed(self, event: events.DeliveryFailed) -> None:
        """A script offered to the browser (``/history save`` in ``petstore web``) that did not reach it."""
        if event.name == "history":
            self.notify("The script could not be sent to the browser.", title="Not saved", severity="error")

    def action_help(self) -> None:
        from .keys import help_rows  # gathers every screen's keys: the main screen's modules
        from .screens.help import HelpScreen

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

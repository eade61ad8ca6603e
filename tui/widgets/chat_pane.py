"""The chat prompt pane: a log of commands and results, and a prompt with completion and history.

The log (:class:`~tui.widgets.chat_log.ChatLog`, a ``RichLog``: it imports ``rich.pretty`` and attrs) is not
part of the first frame: an empty :class:`LogPlace` holds its place, styled as the log, until its first entry.

The prompt's history is the one ``petstore chat`` keeps (:class:`bot_commands.history.PromptHistory`):
the lines typed in earlier runs, then this run's; each line typed is appended to the file.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from rich.console import RenderableType
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.suggester import Suggester
from textual.widget import Widget
from textual.widgets import Input

from bot_commands.history import PromptHistory, is_secret

from .text_input import TextInput

if TYPE_CHECKING:  # pragma: no cover
    from .chat_log import ChatLog


def complete_line(value: str, candidates: Iterable[str]) -> str | None:
    """The first candidate that extends ``value``: whole lines, or a last word."""
    head, _, last = value.rpartition(" ")
    for candidate in candidates:
        if candidate.startswith(value) and len(candidate) > len(value):
            return candidate
        if last and candidate.startswith(last) and len(candidate) > len(last):
            return f"{head} {candidate}" if head else candidate
    return None


class SessionSuggester(Suggester):
    """Suggests completions from the command session (commands, statuses, ids)."""

    def __init__(self, complete: Callable[[str], Sequence[str]]) -> None:
        super().__init__(use_cache=False, case_sensitive=True)
        #: The session's completion (replaced when the session comes after the first frame).
        self.complete = complete

    async def get_suggestion(self, value: str) -> str | None:
        if not value.strip():
            return None
        try:
            candidates = list(self.complete(value))
            if len(candidates) == 1:  # a finished word: a space after it, as the chat does
                candidates = [candidates[0] + " "]
            return complete_line(value, candidates)
        except Exception:  # noqa: BLE001 - completion must never break typing
            return None


class PromptInput(TextInput):
    """The prompt: tab accepts the suggestion, up/down walk the history."""

    BINDINGS = [
        Binding("tab", "cursor_right", "Complete", show=False),
        Binding("up", "history(-1)", "Previous", show=False),
        Binding("down", "history(1)", "Next", show=False),
    ]

    def __init__(self, *, history: PromptHistory | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._file = history
        self.lines: list[str] = history.load() if history is not None else []
        self._position: int | None = None

    def remember(self, line: str) -> None:
        """Keep a typed line (in the file too; never a secret, never twice in a row)."""
        if is_secret(line) or (self.lines and self.lines[-1] == line):
            return
        self.lines.append(line)
        if self._file is not None:
            self._file.append(line)

    def action_history(self, step: int) -> None:
        lines = self.lines
        if not lines:
            return
        position = len(lines) if self._position is None else self._position
        position = max(0, min(len(lines), position + step))
        self._position = position
        self.value = lines[position] if position < len(lines) else ""
        self.cursor_position = len(self.value)

    def forget_position(self) -> None:
        self._position = None


class LogPlace(Widget):
    """The empty log's place on the first frame (main.tcss styles it as the log); the log replaces it."""


class ChatPane(Vertical):
    """Log above, prompt below. Posts :class:`ChatPane.Submitted` for each line."""

    BINDINGS = [Binding("escape", "leave", "To list")]

    class Submitted(Message):
        def __init__(self, line: str) -> None:
            super().__init__()
            self.line = line

    class Leave(Message):
        """The user left the prompt (escape)."""

    def __init__(
        self, *, complete: Callable[[str], Sequence[str]], history: PromptHistory | None = None, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self._complete = complete
        self._history = history

    def compose(self) -> ComposeResult:
        yield LogPlace(id="chat-log-place")
        yield PromptInput(
            id="prompt",
            placeholder="/help · type a command, tab completes, ↑ history",
            suggester=SessionSuggester(self._complete),
            history=self._history,
            select_on_focus=False,
        )

    def use_completion(self, complete: Callable[[str], Sequence[str]]) -> None:
        """Complete from ``complete`` from now on (the session, once it is loaded)."""
        self._complete = complete
        suggester = self.prompt.suggester
        if isinstance(suggester, SessionSuggester):
            suggester.complete = complete

    @property
    def prompt(self) -> PromptInput:
        return self.query_one(PromptInput)

    @property
    def log_view(self) -> ChatLog:
        """The log, put in its place the first time it is needed."""
        from .chat_log import ChatLog

        log = next(iter(self.query(ChatLog)), None)
        if log is None:
            log = ChatLog(id="chat-log")
            place = self.query(LogPlace)
            self.mount(log, before=place.first() if place else None)
            place.remove()
        return log

    def scroll_log_end(self) -> None:
        """Show the newest line (after the layout has settled); nothing before the log has an entry."""
        if not self.query(LogPlace):
            self.call_after_refresh(self.log_view.scroll_end, animate=False, immediate=True)

    def on_resize(self) -> None:
        self.scroll_log_end()

    def echo(self, line: str) -> None:
        from ..summaries import echo_text  # the first frame shows this pane before the libraries

        self.write(echo_text(line))

    def write(self, renderable: RenderableType) -> None:
        """Add to the log and show the newest line now (even under a dialog, whose screen
        would otherwise scroll only at its next refresh)."""
        log = self.log_view
        log.add(renderable)
        log.scroll_end(animate=False, immediate=True, x_axis=False)

    def type_into(self, text: str) -> None:
        """Set the prompt's text (used when playing scripts and by the palette)."""
        self.prompt.value = text
        self.prompt.cursor_position = len(text)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        line = event.value.strip()
        self.prompt.value = ""
        self.prompt.forget_position()
        if line:
            self.prompt.remember(line)
            self.post_message(self.Submitted(line))

    def action_leave(self) -> None:
        self.post_message(self.Leave())

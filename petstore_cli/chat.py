"""``petstore chat``: a prompt for slash commands, with history and tab completion.

The loop runs in the main thread and drives one ``asyncio.Runner``: each
command runs as a task in it, so Ctrl-C during a command cancels that command
(the Runner turns SIGINT into a task cancel) and the prompt comes back. Ctrl-C
at the prompt clears the line; Ctrl-D (end of input) exits. When stdin is not a
terminal, lines are read without any prompt decoration, so it can be piped.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
import threading
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import IO, Any

from rich.console import Console
from rich.text import Text

from bot_commands.outcome import Outcome
from bot_commands.ports import Confirm
from bot_commands.render import render_failure, to_rich
from bot_commands.results import Quit
from bot_commands.sanitize import visible
from bot_commands.session import CommandSession
from bot_commands.views import BlankView, present
from petstore_api.settings import Settings

__all__ = ["run_chat", "chat_main", "ChatLoop", "LineEditor"]

HISTORY_FILE = "chat_history"


class LineEditor:
    """``input()`` with GNU readline/libedit: arrow-key history (persisted) and Tab completion."""

    def __init__(self, session: CommandSession, history_path: Path | None) -> None:
        self.session = session
        self.history_path = history_path
        self.matches: list[str] = []
        try:
            import readline
        except ImportError:  # pragma: no cover - e.g. Windows without pyreadline
            self.readline = None
            return
        self.readline = readline
        self._configure(readline)

    def _configure(self, readline: Any) -> None:
        readline.set_completer_delims(" \t\n")
        readline.set_completer(self.complete)
        if "libedit" in (readline.__doc__ or ""):
            readline.parse_and_bind("bind ^I rl_complete")
        else:
            readline.parse_and_bind("tab: complete")
        readline.set_history_length(1000)
        if self.history_path is not None and self.history_path.exists():
            with contextlib.suppress(OSError):
                readline.read_history_file(str(self.history_path))

    def complete(self, text: str, state: int) -> str | None:
        """readline completer: candidates for the word before the cursor."""
        if state == 0:
            buffer = self.readline.get_line_buffer()[: self.readline.get_endidx()] if self.readline else text
            words = self.session.complete_words(buffer)[1]
            # Python's readline appends nothing itself: add the space after a unique match.
            self.matches = [f"{words[0]} "] if len(words) == 1 else words
        return self.matches[state] if state < len(self.matches) else None

    def read(self, prompt: str) -> str:
        return input(prompt)

    @staticmethod
    def ask(prompt: str) -> str:
        """A question whose answer is kept out of the history."""
        answer = input(prompt)
        try:
            import readline

            if answer and readline.get_current_history_length():
                readline.remove_history_item(readline.get_current_history_length() - 1)
        except (ImportError, ValueError):  # pragma: no cover
            pass
        return answer

    def save(self) -> None:
        if self.readline is None or self.history_path is None:
            return
        try:
            self.history_path.parent.mkdir(parents=True, exist_ok=True)
            self.readline.write_history_file(str(self.history_path))
            self.history_path.chmod(0o600)
        except OSError:
            pass


class ChatLoop:
    """Read a line, run it, show the result; repeat until /quit or end of input."""

    def __init__(self, session: CommandSession, *, console: Console, runner: asyncio.Runner,
                 read: Callable[[str], str], interactive: bool) -> None:
        self.session = session
        self.console = console
        self.runner = runner
        self.read = read
        self.interactive = interactive

    @property
    def prompt(self) -> str:
        return f"{self.session.env.env}> " if self.interactive else ""

    def run(self) -> int:
        if self.interactive:
            self._greet()
        while True:
            try:
                line = self.read(self.prompt)
            except KeyboardInterrupt:
                if not self.interactive:
                    raise
                self.console.print()  # Ctrl-C at the prompt: drop the line
                continue
            except EOFError:
                if self.interactive:
                    self.console.print()
                return 0
            if self.handle(line):
                return 0

    def handle(self, line: str) -> bool:
        """Run one line; True when the session should end."""
        text = line.strip()
        if not text or text.startswith("#"):
            return False
        try:
            outcome = self.runner.run(self.session.run(text))
        except KeyboardInterrupt:
            self.console.print(Text("cancelled", style="yellow"))
            return False
        self.show(outcome)
        return isinstance(outcome.result, Quit)

    def show(self, outcome: Outcome) -> None:
        if outcome.failure is not None:
            self.console.print(render_failure(outcome.failure), soft_wrap=True)
            return
        assert outcome.result is not None
        shown = present(outcome.result)
        for note in shown.notes:
            self.console.print(Text(visible(note), style="yellow"), soft_wrap=True)
        if not isinstance(shown.view, BlankView):
            self.console.print(to_rich(shown.view))

    def _greet(self) -> None:
        env = self.session.env
        style = "bold red" if env.env == "production" else "bold green"
        self.console.print(Text.assemble(
            ("petstore chat", "bold"), " on ", (env.env, style), " ", (visible(env.base_url), "dim"),
            ("  /help lists the commands, Tab completes, Ctrl-D quits", "dim"),
        ))


def _line_reader(stream: IO[str]) -> Callable[[str], str]:
    def read(_prompt: str) -> str:
        line = stream.readline()
        if not line:
            raise EOFError
        return line

    return read


def run_chat(
    session: CommandSession,
    *,
    console: Console,
    history_path: Path | None = None,
    interactive: bool = False,
    stdin: IO[str] | None = None,
    aclose: Callable[[], Coroutine[object, object, None]] | None = None,
) -> int:
    """Run the chat loop on ``session`` (owns an asyncio.Runner); returns the exit code."""
    editor = LineEditor(session, history_path) if interactive else None
    read = editor.read if editor else _line_reader(stdin or sys.stdin)
    with asyncio.Runner() as runner:
        try:
            return ChatLoop(session, console=console, runner=runner, read=read, interactive=interactive).run()
        finally:
            if editor:
                editor.save()
            if aclose is not None:
                runner.run(aclose())


def _make_confirm(console: Console) -> Confirm:
    """Ask y/N at the terminal; Ctrl-C or end of input means no."""

    async def confirm(prompt: str) -> bool:
        restore = None
        if threading.current_thread() is threading.main_thread():
            restore = signal.signal(signal.SIGINT, signal.default_int_handler)
        try:
            answer = LineEditor.ask(f"{prompt} [y/N] ")
        except (KeyboardInterrupt, EOFError):
            console.print()
            return False
        finally:
            if restore is not None:
                signal.signal(signal.SIGINT, restore)
        return answer.strip().lower() in ("y", "yes")

    return confirm


def chat_main(settings: Settings, *, sandbox_reset: bool = False) -> int:
    """Entry point of ``petstore chat`` (called by petstore_cli.faces)."""
    from petstore_api.settings import default_data_dir

    from .compose import compose

    interactive = sys.stdin.isatty()
    console = Console(highlight=False)
    composition = compose(settings, sandbox_reset=sandbox_reset)
    session = composition.session(confirm=_make_confirm(console) if interactive else None)
    history_path = default_data_dir() / HISTORY_FILE if interactive else None
    return run_chat(session, console=console, history_path=history_path,
                    interactive=interactive, aclose=composition.aclose)

"""``petstore chat``: a prompt for slash commands (prompt_toolkit: menu, suggestions, Ctrl-R, toolbar).

The loop runs in the main thread and drives one ``asyncio.Runner``: the prompt
(:mod:`petstore_cli.prompt`, imported only at a terminal) and each command run
as tasks in it, so Ctrl-C during a command cancels that command (the Runner
turns SIGINT into a task cancel) and the prompt comes back. Ctrl-C at the
prompt clears the line; Ctrl-D (end of input) exits. When stdin is not a
terminal, lines are read without any prompt decoration, so it can be piped.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import threading
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import IO

from rich.console import Console
from rich.text import Text

from bot_commands.history import HISTORY_FILE
from bot_commands.outcome import Outcome
from bot_commands.ports import Confirm
from bot_commands.render import render_failure, to_rich
from bot_commands.results import Quit
from bot_commands.sanitize import visible
from bot_commands.session import CommandSession
from bot_commands.views import BlankView, present
from petstore_cli.settings.model import Settings

from .consoles import PipeConsole

__all__ = ["HISTORY_FILE", "ChatLoop", "ask", "chat_main", "make_confirm", "run_chat"]


def ask(prompt: str) -> str:
    """A plain question (y/N) whose answer never enters the command history."""
    return input(prompt)


class ChatLoop:
    """Read a line, run it, show the result; repeat until /quit or end of input."""

    def __init__(
        self,
        session: CommandSession,
        *,
        console: Console,
        runner: asyncio.Runner,
        read: Callable[[str], str],
        interactive: bool,
        greet: bool = True,
    ) -> None:
        self.session = session
        self.greet = greet
        self.console = console
        self.runner = runner
        self.read = read
        self.interactive = interactive

    @property
    def prompt(self) -> str:
        return f"{self.session.env.env}> " if self.interactive else ""

    def run(self) -> int:
        if self.interactive and self.greet:
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
        self.console.print(
            Text.assemble(
                ("petstore chat", "bold"),
                " on ",
                (env.env, style),
                " ",
                (visible(env.base_url), "dim"),
                (
                    "  /help lists the commands, Tab completes, → takes a suggestion, Ctrl-R searches, Ctrl-D quits",
                    "dim",
                ),
            )
        )


def _dumb_terminal() -> bool:
    """TERM=dumb (an editor's shell buffer, a test's pty): nothing to draw a menu or toolbar with."""
    return os.environ.get("TERM", "").lower() in ("dumb", "unknown")


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
    with asyncio.Runner() as runner:
        read = _line_reader(stdin or sys.stdin)
        if interactive and _dumb_terminal():
            read = input  # no menu, colours or toolbar to draw: the plain line editor
        elif interactive:
            from .prompt import PromptEditor

            read = PromptEditor(session, history_path=history_path, runner=runner).read
        try:
            return ChatLoop(session, console=console, runner=runner, read=read, interactive=interactive).run()
        finally:
            if aclose is not None:
                runner.run(aclose())


def make_confirm(console: Console) -> Confirm:
    """Ask y/N at the terminal; Ctrl-C or end of input means no."""

    async def confirm(prompt: str) -> bool:
        restore = None
        if threading.current_thread() is threading.main_thread():
            restore = signal.signal(signal.SIGINT, signal.default_int_handler)
        try:
            answer = ask(f"{prompt} [y/N] ")
        except (KeyboardInterrupt, EOFError):
            console.print()
            return False
        finally:
            if restore is not None:
                signal.signal(signal.SIGINT, restore)
        return answer.strip().lower() in ("y", "yes")

    return confirm


_make_confirm = make_confirm  # the name tests knew


def chat_main(settings: Settings, *, sandbox_reset: bool = False) -> int:
    """Entry point of ``petstore chat`` (called by petstore_cli.dispatch)."""
    from petstore_cli.settings.paths import default_data_dir

    from .compose import compose

    interactive = sys.stdin.isatty()
    console = PipeConsole(highlight=False)
    composition = compose(settings, sandbox_reset=sandbox_reset)
    session = composition.session(confirm=make_confirm(console) if interactive else None)
    history_path = default_data_dir() / HISTORY_FILE if interactive else None
    return run_chat(
        session, console=console, history_path=history_path, interactive=interactive, aclose=composition.aclose
    )

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

from rich.console import Console, RenderableType
from rich.text import Text

from bot_commands.errors import CommandError
from bot_commands.formats import OutputError, data_view, record
from bot_commands.history import HISTORY_FILE
from bot_commands.outcome import Outcome
from bot_commands.output import MachineWriter, OutputSpec, records_of, split_output_options
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


#: Asked after a 401 (the answer is masked, never echoed, kept out of the history).
KEY_QUESTION = "API key for this session (not shown; Enter keeps the current one): "


class ChatLoop:
    """Read a line, run it, show the result; repeat until /quit or end of input.

    Text is wrapped at word boundaries to the terminal's width. ``ask_secret`` (at a terminal): after a 401 the
    loop asks for a key with it and runs the line again with that key. ``pager`` (a terminal): output taller than
    the terminal goes through it (:mod:`petstore_cli.pager`). A line may carry the output options of the one-shot
    faces (``/list sold --format csv``, ``--fields``, ``--jq``, ``--template``, ``--json``).
    """

    def __init__(
        self,
        session: CommandSession,
        *,
        console: Console,
        runner: asyncio.Runner,
        read: Callable[[str], str],
        interactive: bool,
        greet: bool = True,
        ask_secret: Callable[[str], str] | None = None,
        pager: str | None = None,
    ) -> None:
        self.session = session
        self.greet = greet
        self.console = console
        self.runner = runner
        self.read = read
        self.interactive = interactive
        self.ask_secret = ask_secret
        self.pager = pager

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
            text, output = split_output_options(text)
        except OutputError as exc:
            self.say(Text(f"Error: {visible(str(exc))}", style="bold red"))
            return False
        outcome = self._run(text)
        if outcome is not None and self._unauthorised(outcome):
            outcome = self._with_new_key(text, outcome)
        if outcome is None:
            return False
        try:
            self.show(outcome, output)
        except OutputError as exc:
            self.say(Text(f"Error: {visible(str(exc))}", style="bold red"))
        return isinstance(outcome.result, Quit)

    def _run(self, text: str) -> Outcome | None:
        try:
            return self.runner.run(self.session.run(text))
        except KeyboardInterrupt:
            self.console.print(Text("cancelled", style="yellow"))
            return None

    def _unauthorised(self, outcome: Outcome) -> bool:
        return self.ask_secret is not None and outcome.failure is not None and outcome.failure.kind == "auth"

    def _with_new_key(self, text: str, outcome: Outcome) -> Outcome | None:
        """After a 401: say so, ask for a key (masked) and run ``text`` again with it; None when none was given."""
        assert self.ask_secret is not None and outcome.failure is not None
        self.say(render_failure(outcome.failure))
        try:
            key = self.ask_secret(KEY_QUESTION).strip()
        except (KeyboardInterrupt, EOFError):
            key = ""
        if not key:
            return None
        try:
            self.session.set_api_key(key)
        except CommandError as exc:
            self.say(Text(f"Key not changed: {visible(str(exc))}", style="bold red"))
            return None
        self.console.print(Text("Using the new key for this session.", style="dim"))
        return self._run(text)

    def show(self, outcome: Outcome, output: OutputSpec | None = None) -> None:
        if outcome.failure is not None:
            self.say(render_failure(outcome.failure))
            return
        assert outcome.result is not None
        if output is not None and output.machine:
            self._machine(outcome, output)
            return
        shown = present(outcome.result)
        for note in shown.notes:
            self._note(note)
        view = shown.view
        if output is not None and output.fields:
            data = records_of(outcome.result, output.fields)
            view = data_view(data) if data is not None else view
        if not isinstance(view, BlankView):
            self.emit(to_rich(view))

    def _note(self, text: str) -> None:
        self.say(Text(visible(text), style="yellow"))

    def say(self, text: Text) -> None:
        """A message: wrapped at word boundaries to a terminal's width; piped, one line as it is (never wrapped)."""
        self.console.print(text, soft_wrap=not self.console.is_terminal)

    def _machine(self, outcome: Outcome, output: OutputSpec) -> None:
        """csv, tsv, json or jsonl on the screen: the data whole (never wrapped by Rich), notes apart."""
        written: list[str] = []
        if output.fmt == "jsonl":
            import json

            written.append(json.dumps(record(outcome, fields=output.fields), ensure_ascii=True) + "\n")
        else:
            writer = MachineWriter(output, out=written.append, note=self._note)
            writer.result(outcome)
            writer.finish()
        if written:
            self.emit("".join(written))

    def emit(self, shown: RenderableType | str) -> None:
        """Print ``shown`` (a renderable, or data as it is: tabs kept, never wrapped); through the pager when it is
        taller than the terminal."""
        if self.pager is None and not isinstance(shown, str):
            self.console.print(shown)
            return
        if isinstance(shown, str):
            text = shown
        else:
            with self.console.capture() as captured:
                self.console.print(shown)
            text = captured.get()
        if self.pager is not None and text.count("\n") >= self.console.height - 1:
            from .pager import page

            if page(text, self.pager):
                return
        self.console.file.write(text)
        self.console.file.flush()

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
        ask_secret: Callable[[str], str] | None = None
        if interactive and _dumb_terminal():
            import getpass

            read = input  # no menu, colours or toolbar to draw: the plain line editor
            ask_secret = getpass.getpass
        elif interactive:
            from .prompt import PromptEditor

            editor = PromptEditor(session, history_path=history_path, runner=runner)
            read, ask_secret = editor.read, editor.read_secret
        loop = ChatLoop(
            session,
            console=console,
            runner=runner,
            read=read,
            interactive=interactive,
            ask_secret=ask_secret,
            pager=terminal_pager(console) if interactive else None,
        )
        try:
            return loop.run()
        finally:
            if aclose is not None:
                runner.run(aclose())


def terminal_pager(console: Console) -> str | None:
    """The pager for long output: none when stdout is not a terminal (piped, a file), else ``$PAGER`` (pgcli's
    rule, :func:`petstore_cli.pager.pager_command`)."""
    if not console.is_terminal:
        return None
    from .pager import pager_command

    return pager_command()


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

    from .approvals import terminal_approval
    from .compose import compose

    interactive = sys.stdin.isatty()
    console = PipeConsole(highlight=False)
    composition = compose(settings, sandbox_reset=sandbox_reset)
    session = composition.session(
        confirm=make_confirm(console) if interactive else None,
        ask_approval=terminal_approval(composition, settings),
    )
    history_path = default_data_dir() / HISTORY_FILE if interactive else None
    return run_chat(
        session, console=console, history_path=history_path, interactive=interactive, aclose=composition.aclose
    )

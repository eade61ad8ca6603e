"""``petstore chat`` at a terminal: the prompt first, the session built behind it.

Building a session imports most of petstore (pydantic settings, httpx, rich, the command
layer) and opens the sandbox: several times what a bare prompt_toolkit prompt costs. So at
a terminal the prompt comes up first (it imports prompt_toolkit and nothing heavy), and once
it has drawn, a thread loads the settings and composes the session; the prompt then gets its
completion, colours, toolbar and ``sandbox>`` (:meth:`PromptEditor.attach`). A line entered
before that runs as soon as the session is there. Errors (a bad config) end the chat with
the same one line as before. Piped input and TERM=dumb keep the plain path
(:func:`petstore_cli.chat.chat_main`).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bot_commands.history import HISTORY_FILE
from petstore_cli.settings.paths import default_data_dir

if TYPE_CHECKING:  # pragma: no cover
    from rich.console import Console

    from bot_commands.session import CommandSession

    from .compose import Composition
    from .prompt import PromptEditor

__all__ = ["HISTORY_FILE", "applies", "start_chat"]


GREETING = "petstore chat: /help lists the commands, Ctrl-D quits"


@dataclass
class _Built:
    composition: Composition
    session: CommandSession
    console: Console
    warnings: list[str]


class _Builder:
    """Builds the session in a thread; hands it to the prompt in the prompt's event loop."""

    def __init__(self, args: argparse.Namespace, editor: PromptEditor) -> None:
        self.args, self.editor = args, editor
        self.built: _Built | None = None
        self.error: BaseException | None = None
        self.thread: threading.Thread | None = None
        self.warned = False

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        if self.thread is None:
            self.thread = threading.Thread(target=self._build, args=(loop,), name="petstore-chat-start", daemon=True)
            self.thread.start()

    def wait(self) -> _Built:
        if self.thread is None:  # the prompt ended before it drew: build here
            self._build(None)
        else:
            self.thread.join()
        if self.error is not None:
            raise self.error
        assert self.built is not None
        return self.built

    def _build(self, loop: asyncio.AbstractEventLoop | None) -> None:
        try:
            self.built = _compose(self.args)
        except BaseException as exc:  # noqa: BLE001 - handed to the main thread, which reports it
            self.error = exc
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self._ready)

    def _ready(self) -> None:
        app = self.editor.prompt_session.app
        if self.error is not None:
            if app.is_running:
                app.exit(exception=self.error)
            return
        assert self.built is not None
        self.editor.attach(self.built.session)
        if self.built.warnings and app.is_running:
            from prompt_toolkit.application import run_in_terminal

            self.warned = True
            run_in_terminal(lambda: _print_warnings(self.built.warnings if self.built else []))


def _print_warnings(warnings: list[str]) -> None:
    for warning in warnings:
        print(f"petstore: warning: {warning}", file=sys.stderr)


def _compose(args: argparse.Namespace) -> _Built:
    from rich.console import Console

    from .chat import make_confirm
    from .compose import compose
    from .faces import configure_logging, load

    loaded = load(args)
    configure_logging(getattr(args, "verbose", None) or 0)
    console = Console(highlight=False)
    said: list[str] = []  # said once the prompt is done drawing, with the settings' warnings
    composition = compose(loaded.settings, sandbox_reset=bool(getattr(args, "sandbox_reset", False)), warn=said.append)
    from .approvals import terminal_approval
    from .progress import Spinner

    spinner = Spinner(sys.stderr) if sys.stderr.isatty() else None
    session = composition.session(
        confirm=make_confirm(console), ask_approval=terminal_approval(composition, loaded.settings, spinner=spinner)
    )
    return _Built(composition=composition, session=session, console=console, warnings=[*loaded.warnings, *said])


def applies() -> bool:
    """An interactive terminal that can draw the prompt (not piped, not TERM=dumb)."""
    return sys.stdin.isatty() and os.environ.get("TERM", "").lower() not in ("dumb", "unknown")


def start_chat(args: argparse.Namespace) -> int:
    """``petstore chat`` at a terminal (see the module docstring); returns the exit code."""
    from .prompt import PromptEditor

    print(GREETING)
    with asyncio.Runner() as runner:
        editor = PromptEditor(None, history_path=default_data_dir() / HISTORY_FILE, runner=runner)
        builder = _Builder(args, editor)
        editor.prompt_session.app.after_render.add_handler(lambda _app: builder.start(runner.get_loop()))
        first = _first_line(editor)
        try:
            built = builder.wait()
        except Exception as exc:  # noqa: BLE001 - a bad config: the one line petstore prints for it
            print(f"petstore: {exc}", file=sys.stderr)
            return 2
        _print_warnings([] if builder.warned else built.warnings)
        return _chat(built, editor, runner, first)


def _first_line(editor: PromptEditor) -> Callable[[], str]:
    """Read the first line while the session is being built; replay it (or its Ctrl-C/Ctrl-D) later."""

    def message() -> str:
        return f"{editor.session.env.env}> " if editor.session is not None else "petstore> "

    try:
        line = editor.read(message)
    except (KeyboardInterrupt, EOFError) as exc:
        caught: BaseException = exc

        def again() -> str:
            raise caught

        return again
    except Exception:  # noqa: BLE001 - the build failed: wait() reports it
        return lambda: ""
    return lambda: line


def _chat(built: _Built, editor: PromptEditor, runner: asyncio.Runner, first: Callable[[], str]) -> int:
    from .chat import ChatLoop, terminal_pager

    pending = [first]

    def read(prompt: str) -> str:
        return pending.pop()() if pending else editor.read(prompt)

    try:
        loop = ChatLoop(
            built.session,
            console=built.console,
            runner=runner,
            read=read,
            interactive=True,
            greet=False,
            ask_secret=editor.read_secret,
            pager=terminal_pager(built.console),
        )
        return loop.run()
    finally:
        runner.run(built.composition.aclose())

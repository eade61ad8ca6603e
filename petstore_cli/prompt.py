"""The chat's line editor on prompt_toolkit: completion menu, history suggestions, Ctrl-R, a toolbar.

Everything it offers comes from the session and its registry: completions are
:meth:`CommandSession.complete_words` (commands, flags, status values, pet ids seen), each
with its command's summary or its argument's help as the menu's description; the lexer
colours the command word, flags and strings and marks what cannot run (an unknown command
or flag, an unclosed quote) as you type. History is ``<data dir>/history`` in
prompt_toolkit's ``FileHistory`` format (shared with the TUI's prompt); a line that looks
like it holds a key is never written to it. Imported only by an interactive chat, so
``petstore --version`` and piped runs never load prompt_toolkit; and it imports nothing
heavy itself: the prompt can be up before the session exists (:meth:`PromptEditor.attach`
gives it the session once built, see :mod:`petstore_cli.chat_start`).
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from prompt_toolkit import PromptSession
from prompt_toolkit.auto_suggest import AutoSuggestFromHistory
from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.history import FileHistory, History, InMemoryHistory
from prompt_toolkit.input import Input
from prompt_toolkit.lexers import Lexer
from prompt_toolkit.output import Output
from prompt_toolkit.styles import Style

from bot_commands.history import is_secret
from bot_commands.sanitize import clip, visible
from petstore_os import open_private

if TYPE_CHECKING:  # pragma: no cover - the prompt is up before these are imported
    from bot_commands.registry import Command, Registry
    from bot_commands.session import CommandSession

__all__ = ["CommandCompleter", "CommandLexer", "PromptEditor", "SecretFreeFileHistory", "holds_secret"]

STYLE = Style.from_dict(
    {
        "command": "bold ansigreen",
        "flag": "ansicyan",
        "string": "ansiyellow",
        "error": "bold ansired underline",
        "bottom-toolbar": "noreverse bg:#303030 #d0d0d0",
        "bottom-toolbar.production": "bold bg:ansired #ffffff",
        "bottom-toolbar.dim": "#8a8a8a",
        "bottom-toolbar.failed": "bold #ff8787",
        "completion-menu.meta.completion": "bg:#444444 #bbbbbb",
    }
)

_TOKEN = re.compile(r"(?P<space>\s+)|(?P<string>\"[^\"]*\"?|'[^']*'?)|(?P<word>[^\s\"']+)")


def holds_secret(line: str) -> bool:
    """True for a line that looks like it carries a secret (kept out of the history file): the TUI's rule."""
    return is_secret(line)


class SecretFreeFileHistory(FileHistory):
    """prompt_toolkit's FileHistory, minus lines that look like they hold a key.

    The file is made (or tightened to) 0600 before prompt_toolkit first opens it, which keeps its mode.
    """

    def __init__(self, path: Path) -> None:
        os.close(open_private(path))
        super().__init__(str(path))
        self.path = path

    def store_string(self, string: str) -> None:
        if not holds_secret(string):
            super().store_string(string.rstrip())  # no completion's trailing space


class CommandCompleter(Completer):
    """The session's completions, with a description from the registry for the menu (none before it exists)."""

    def __init__(self, session: CommandSession | None = None) -> None:
        self.session = session

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterable[Completion]:
        if self.session is None:
            return
        text = document.text_before_cursor
        current, words = self.session.complete_words(text)
        command = _command_of(self.session.registry, text)
        for word in words:  # a space after it, as a shell does: the next word can follow at once
            yield Completion(
                f"{word} ",
                start_position=-len(current),
                display=word,
                display_meta=_describe(self.session, command, word),
            )


def _command_of(registry: Registry, text: str) -> Command | None:
    first = text.split(maxsplit=1)
    return registry.get(first[0]) if first and (len(first) > 1 or text.endswith(" ")) else None


def _describe(session: CommandSession, command: Command | None, word: str) -> str:
    if command is None:
        cmd = session.registry.get(word)
        return cmd.summary if cmd is not None else ""
    arg = command.flags.get(word.lower())
    if arg is not None:
        return arg.help or arg.metavar
    if word.isdigit():
        return "a pet id seen in this session"
    return ""


class CommandLexer(Lexer):
    """Colours a line as you type: the command, flags, strings; what cannot run in red."""

    def __init__(self, registry: Registry | None = None) -> None:
        self.registry = registry

    def lex_document(self, document: Document) -> Callable[[int], StyleAndTextTuples]:
        lines = document.lines

        def line(number: int) -> StyleAndTextTuples:
            return self.tokens(lines[number]) if number < len(lines) else []

        return line

    def tokens(self, text: str) -> StyleAndTextTuples:
        if self.registry is None:
            return [("", text)]
        out: StyleAndTextTuples = []
        command: Command | None = None
        first = True
        for match in _TOKEN.finditer(text):
            kind, value = match.lastgroup, match.group()
            style = ""
            if kind == "string":
                closed = len(value) > 1 and value[-1] == value[0]
                style = "class:string" if closed else "class:error"
            elif kind == "word" and first:
                command = self.registry.get(value)
                style = "class:command" if command is not None else "class:error"
            elif kind == "word" and value.startswith("--") and command is not None:
                known = value.split("=", 1)[0].lower() in command.flags
                style = "class:flag" if known else "class:error"
            if kind != "space":
                first = False
            out.append((style, value))
        return out


class PromptEditor:
    """The chat's ``read(prompt)`` on a prompt_toolkit session (``input``/``output`` for tests)."""

    def __init__(
        self,
        session: CommandSession | None,
        *,
        history_path: Path | None,
        runner: asyncio.Runner | None = None,
        input: Input | None = None,
        output: Output | None = None,
    ) -> None:
        self.session: CommandSession | None = None
        self.runner = runner
        self.input, self.output = input, output
        history: History = InMemoryHistory()
        if history_path is not None:
            history_path.parent.mkdir(parents=True, exist_ok=True)
            history = SecretFreeFileHistory(history_path)
        self.completer = CommandCompleter()
        self.lexer = CommandLexer()
        self.prompt_session: PromptSession[str] = PromptSession(
            history=history,
            completer=self.completer,
            complete_while_typing=True,
            auto_suggest=AutoSuggestFromHistory(),
            lexer=self.lexer,
            bottom_toolbar=self.toolbar,
            style=STYLE,
            input=input,
            output=output,
        )
        if session is not None:
            self.attach(session)

    def attach(self, session: CommandSession) -> None:
        """From now on complete, colour and report for ``session`` (redraws a prompt that is up)."""
        self.session = self.completer.session = session
        self.lexer.registry = session.registry
        self.prompt_session.app.invalidate()

    def read(self, prompt: str | Callable[[], str]) -> str:
        """One line (KeyboardInterrupt on Ctrl-C, EOFError on Ctrl-D), in the chat's event loop if given."""
        if self.runner is None:
            return self.prompt_session.prompt(prompt)
        return self.runner.run(self.prompt_session.prompt_async(prompt))

    def read_secret(self, prompt: str) -> str:
        """A secret (an API key): each character shown as ``*``, in a prompt of its own whose history is
        dropped, so it is never echoed nor written to the history file."""
        secret: PromptSession[str] = PromptSession(
            is_password=True, history=InMemoryHistory(), input=self.input, output=self.output
        )
        if self.runner is None:
            return secret.prompt(prompt)
        return self.runner.run(secret.prompt_async(prompt))

    def toolbar(self) -> StyleAndTextTuples:
        if self.session is None:
            return [("class:bottom-toolbar.dim", " starting… (type away: the line runs when ready)")]
        env = self.session.env
        env_style = "class:bottom-toolbar.production" if env.env == "production" else ""
        parts: StyleAndTextTuples = [
            (env_style, f" {env.env} "),
            ("", f" {clip(visible(env.base_url), 50)} "),
            ("class:bottom-toolbar.dim", f" key {env.masked_key} "),
        ]
        if self.session.read_only:
            parts.append(("class:bottom-toolbar.failed", " read-only "))
        parts += self._last()
        return parts

    def _last(self) -> StyleAndTextTuples:
        from bot_commands.views import present

        assert self.session is not None
        outcome = self.session.last_outcome
        if outcome is None:
            return [("class:bottom-toolbar.dim", "  Tab completes · → takes a suggestion · Ctrl-R searches")]
        if outcome.failure is not None:
            return [("class:bottom-toolbar.failed", f"  ✗ {clip(outcome.failure.text, 60)}")]
        assert outcome.result is not None
        return [("", f"  ✓ {clip(visible(present(outcome.result).summary), 60)}")]

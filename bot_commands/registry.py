"""The registry: every command declared once, errbot-style.

::

    @command("list", aliases=("ls",), summary="List pets", access=Access.READ, args=[
        Arg("status", "STATUS", convert=status, choices=STATUSES),
        Arg("limit", "N", flag="--limit", convert=limit),
    ])
    async def list_pets(session, args): ...

``@command`` only builds the :class:`Command`; nothing registers on import. A
:class:`Registry` is built explicitly from commands
(:func:`bot_commands.commands.default_registry`) and injected into sessions.
From each declaration come parsing (:meth:`Registry.parse`), the usage line,
``/help``, completion (:mod:`.completion`), "did you mean" and, through its
:class:`~bot_commands.policy.Access`, who may run it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from .errors import UsageError
from .parser import show, split_command
from .policy import Access
from .results import Help, HelpEntry, Result
from .validation import suggest

if TYPE_CHECKING:  # pragma: no cover
    from .session import CommandSession

__all__ = ["Arg", "Command", "CompletionContext", "Invocation", "Registry", "command"]

Values = dict[str, Any]
Handler = Callable[["CommandSession", Values], Awaitable[Result]]


@dataclass(frozen=True, slots=True)
class CompletionContext:
    """What a dynamic completion source may look at."""

    positional: Sequence[str]
    ids: Sequence[str]
    names: Sequence[str]


#: Completion source: static values, or a function of the :class:`CompletionContext`.
Choices = tuple[str, ...] | Callable[[CompletionContext], Iterable[str]]


def _text(word: str) -> str:
    return word


@dataclass(frozen=True)
class Arg:
    """One argument. ``flag=None`` makes it positional; several Args may share a ``dest``."""

    dest: str
    metavar: str = ""
    flag: str | None = None
    convert: Callable[[str], Any] = _text
    keys: tuple[str, ...] = ()
    required: bool = False
    greedy: bool = False
    switch: bool = False
    choices: Choices = ()
    help: str = ""

    @property
    def label(self) -> str:
        return self.flag or self.metavar

    def usage(self) -> str:
        text = self.flag if self.switch else (f"{self.flag} {self.metavar}" if self.flag else self.metavar)
        text = text or self.dest
        return text if self.required else f"[{text}]"


@dataclass(frozen=True)
class Command:
    """A declared command.

    ``outcome=False`` commands do not replace the last outcome (``/expect`` checks the one before);
    ``history=False`` ones are not saved by ``/history save``. ``group``: a newer answer of a command
    of the same group makes an older one stale (faces drop it). ``describe`` says what a write will
    do, for confirmations and refusals.
    """

    name: str
    handler: Handler
    summary: str
    access: Access = Access.LOCAL
    args: tuple[Arg, ...] = ()
    aliases: tuple[str, ...] = ()
    usage_text: str | None = None
    details: str = ""
    check: Callable[[Values], None] | None = None
    outcome: bool = True
    history: bool = True
    group: str | None = None
    describe: Callable[[Values], str] | None = None

    @property
    def writes(self) -> bool:
        return self.access is Access.WRITE

    def what(self, values: Values) -> str:
        """What running it with ``values`` does, in words (``add pet 'Rex' (category 3)``)."""
        return self.describe(values) if self.describe is not None else f"run /{self.name}"

    @property
    def usage(self) -> str:
        if self.usage_text:
            return self.usage_text
        return " ".join([f"/{self.name}", *(a.usage() for a in self.args)])

    # Derived once per command (parsing asks for them on every line).
    @cached_property
    def flags(self) -> dict[str, Arg]:
        return {a.flag: a for a in self.args if a.flag}

    @cached_property
    def positionals(self) -> tuple[Arg, ...]:
        return tuple(a for a in self.args if not a.flag)

    @cached_property
    def keys(self) -> dict[str, Arg]:
        """``key=value`` names (lower-cased) -> their argument."""
        return {k.lower(): a for a in self.args for k in a.keys}

    def fail(self, message: str) -> UsageError:
        return UsageError(message, usage=self.usage, command=self.name)

    def parse(self, words: Sequence[str]) -> Values:
        """Words after the command name -> values by ``dest``; raises UsageError."""
        values: dict[str, Any] = {}
        if words or self.args:  # else nothing to take, default or miss (/whoami, /help alone)
            positional = self._take_options(list(words), values)
            self._take_positionals(positional, values)
            for arg in self.args:
                values.setdefault(arg.dest, False if arg.switch else None)
            for arg in self.args:
                if arg.required and values.get(arg.dest) is None:
                    raise self.fail(f"missing {arg.label}" + (f": {arg.help}" if arg.help else ""))
        if self.check is not None:
            try:
                self.check(values)
            except ValueError as exc:
                raise self.fail(str(exc)) from None
        return values

    def _take_options(self, words: list[str], values: Values) -> list[str]:
        keys = self.keys
        positional: list[str] = []
        only_positional = False
        while words:
            word = words.pop(0)
            if only_positional:
                positional.append(word)
            elif word == "--":
                only_positional = True
            elif word.startswith("--"):
                self._take_flag(word, words, values)
            elif "=" in word and word.split("=", 1)[0].lower() in keys:
                key, raw = word.split("=", 1)
                self._assign(keys[key.lower()], raw, values)
            elif word.startswith("-") and len(word) > 1 and not word[1:2].isdigit():
                raise self.fail(f"unknown option {show(word)}")
            else:
                positional.append(word)
        return positional

    def _take_flag(self, word: str, words: list[str], values: Values) -> None:
        flag, eq, raw = word.partition("=")
        arg = self.flags.get(flag.lower())
        if arg is None:
            hint = suggest(flag, list(self.flags))
            maybe = f" (did you mean {hint}?)" if hint else ""
            raise self.fail(f"unknown option {show(flag)}{maybe}")
        if arg.switch:
            if eq:
                raise self.fail(f"{arg.flag} takes no value")
            values[arg.dest] = True
            return
        if not eq:
            if not words or (words[0].startswith("--") and len(words[0]) > 2):
                raise self.fail(f"{arg.flag} needs a value ({arg.metavar})")
            raw = words.pop(0)
        self._assign(arg, raw, values)

    def _take_positionals(self, words: list[str], values: Values) -> None:
        for arg in self.positionals:
            if not words:
                return
            if arg.greedy:
                raw, words = " ".join(words), []
            else:
                raw = words.pop(0)
            self._assign(arg, raw, values)
        if words:
            raise self.fail(f"unexpected argument '{show(words[0])}'")

    def _assign(self, arg: Arg, raw: str, values: Values) -> None:
        try:
            value = arg.convert(raw)
        except ValueError as exc:
            raise self.fail(str(exc)) from None
        if arg.dest in values and values[arg.dest] != value:
            previous = values[arg.dest]
            raise self.fail(f"{arg.dest} given twice ('{show(str(previous))}' and '{show(str(value))}')")
        values[arg.dest] = value

    def help_entry(self, *, detailed: bool = False) -> HelpEntry:
        details = self.details
        if detailed:
            lines = [f"{a.usage().strip('[]'):<16} {a.help}" for a in self.args if a.help]
            details = "\n".join(filter(None, [self.details, *lines]))
        return HelpEntry(
            name=f"/{self.name}",
            aliases=tuple(f"/{a}" for a in self.aliases),
            usage=self.usage,
            summary=self.summary,
            details=details,
        )


@dataclass(frozen=True)
class Invocation:
    """A parsed line: the command and its converted values."""

    command: Command
    values: Values
    line: str


class Registry:
    """Commands by name and alias, built from an explicit list of declared commands."""

    def __init__(self, commands: Iterable[Command]) -> None:
        self._commands: dict[str, Command] = {}
        self._lookup: dict[str, Command] = {}
        for cmd in commands:
            for key in (cmd.name, *cmd.aliases):
                if key in self._lookup:
                    raise ValueError(f"command name /{key} declared twice")
                self._lookup[key] = cmd
            self._commands[cmd.name] = cmd

    def commands(self) -> list[Command]:
        return list(self._commands.values())

    def names(self, *, aliases: bool = True) -> list[str]:
        return list(self._lookup) if aliases else list(self._commands)

    def get(self, name: str) -> Command | None:
        return self._lookup.get(name.lstrip("/").lower())

    def resolve(self, name: str) -> Command:
        """The command called ``name`` (with or without ``/``), else a did-you-mean UsageError."""
        cmd = self.get(name)
        if cmd is not None:
            return cmd
        bare = name.lstrip("/")
        hint = suggest(bare, self.names())
        maybe = f"did you mean /{hint}? " if hint else ""
        raise UsageError(f"unknown command /{show(bare)}; {maybe}/help lists the commands")

    def parse(self, line: str) -> Invocation:
        """Parse one line; raises only :class:`UsageError`."""
        try:
            name, words, _ = split_command(line)
        except UsageError as exc:  # e.g. an unclosed quote: still name the command's usage
            cmd = self.get(line.split()[0]) if line.split() else None
            if cmd is None:
                raise
            raise cmd.fail(exc.problem) from None
        cmd = self.resolve(name)
        return Invocation(command=cmd, values=cmd.parse(words), line=line.strip())

    def help(self, topic: Command | None = None, *, allowed: Callable[[Command], bool] = lambda _: True) -> Help:
        """Help on one command, or on every command ``allowed`` lets through."""
        if topic is not None:
            return Help(entries=(topic.help_entry(detailed=True),), topic=f"/{topic.name}")
        return Help(entries=tuple(c.help_entry() for c in self.commands() if allowed(c)))


def command(
    name: str,
    *,
    summary: str,
    access: Access = Access.LOCAL,
    args: Iterable[Arg] = (),
    aliases: Iterable[str] = (),
    usage: str | None = None,
    details: str = "",
    check: Callable[[Values], None] | None = None,
    outcome: bool = True,
    history: bool = True,
    group: str | None = None,
    describe: Callable[[Values], str] | None = None,
) -> Callable[[Handler], Command]:
    """Decorator declaring ``handler`` as the command ``/name`` (returns the :class:`Command`)."""

    def declare(handler: Handler) -> Command:
        return Command(
            name=name,
            handler=handler,
            summary=summary,
            access=access,
            args=tuple(args),
            aliases=tuple(aliases),
            usage_text=usage,
            details=details,
            check=check,
            outcome=outcome,
            history=history,
            group=group,
            describe=describe,
        )

    return declare

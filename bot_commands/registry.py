"""The registry: every command declared once, errbot-style, with typed parameters.

::

    @record(kw_only=True)
    class GetParams:
        id: int = positional("ID", conv.pet_id, required=True, help="pet id (int64)")

    @command("get", params=GetParams, summary="Show one pet", access=Access.READ)
    async def get_pet(context: CommandContext, params: GetParams) -> PetDetail: ...

``@command`` only builds the :class:`TypedCommand`; nothing registers on import. A
:class:`Registry` is built explicitly from commands
(:func:`bot_commands.commands.default_registry`) and injected into sessions.
From each declaration come parsing (:meth:`Registry.parse`, into the parameter type),
the usage line, ``/help``, completion (:mod:`.completion`), "did you mean" and, through its
:class:`~bot_commands.policy.Access`, who may run it. The registry and faces see a
:class:`Command` (the parameter type hidden); its :class:`Invocation` carries the parameters
to the handler that declared them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from functools import cached_property
from typing import Generic, TypeAlias, TypeVar

from petstore_os.records import record

from .arguments import Arg, declared_args
from .context import CommandContext
from .errors import UsageError
from .parser import show, split_command
from .policy import Access, Capability
from .results import Help, HelpEntry, Result
from .validation import suggest

__all__ = ["Command", "Handler", "Invocation", "Registry", "TypedCommand", "command"]

P = TypeVar("P")
Handler: TypeAlias = Callable[[CommandContext, P], Awaitable[Result]]
_Values = dict[str, object]


class Command(ABC):
    """A declared command as the registry, sessions and faces see it (its parameter type hidden).

    ``outcome=False`` commands do not replace the last outcome (``/expect`` checks the one before);
    ``history=False`` ones are not saved by ``/history save``. ``group``: a newer answer of a command
    of the same group makes an older one stale (faces drop it). ``one_shot=False`` ones make sense only
    within a session (``/more`` continues a list, ``/expect`` judges the command before): they are no
    subcommand (``petstore more``) and no completion of one.
    """

    name: str
    summary: str
    access: Access
    args: tuple[Arg, ...]
    aliases: tuple[str, ...]
    usage_text: str | None
    details: str
    outcome: bool
    history: bool
    group: str | None
    one_shot: bool
    #: The words after the name are the arguments as typed: no option is taken from them (``/every 10m /list
    #: --limit 5``: the ``--limit`` is the scheduled command's).
    raw: bool
    #: What a face must give it to work there (a chat bot's room): help lists it only where it can run.
    needs: frozenset[Capability]

    @abstractmethod
    def bind(self, values: _Values) -> object:
        """The parameters of the converted ``values`` (by field), checked; raises ValueError."""

    @abstractmethod
    def what(self, params: object) -> str:
        """What running it with ``params`` does, in words (``add pet 'Rex' (category 3)``)."""

    def fields(self, params: object) -> tuple[tuple[str, str], ...]:
        """Every field a write with ``params`` sends, by its name in the API, in full (none for other commands)."""
        return ()

    @abstractmethod
    def perform(self, context: CommandContext, params: object) -> Awaitable[Result]:
        """Run the handler with ``params`` (of this command's parameter type)."""

    @property
    def writes(self) -> bool:
        return self.access is Access.WRITE

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

    def parse(self, words: Sequence[str]) -> object:
        """Words after the command name -> its parameters; raises UsageError."""
        values: _Values = {}
        if words or self.args:  # else nothing to take, default or miss (/whoami, /help alone)
            positional = list(words) if self.raw else self._take_options(list(words), values)
            self._take_positionals(positional, values)
            for arg in self.args:
                if arg.required and values.get(arg.dest) is None:
                    raise self.fail(f"missing {arg.label}" + (f": {arg.help}" if arg.help else ""))
        try:
            return self.bind(values)
        except ValueError as exc:
            raise self.fail(str(exc)) from None

    def _take_options(self, words: list[str], values: _Values) -> list[str]:
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

    def _take_flag(self, word: str, words: list[str], values: _Values) -> None:
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

    def _take_positionals(self, words: list[str], values: _Values) -> None:
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

    def _assign(self, arg: Arg, raw: str, values: _Values) -> None:
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


@record(kw_only=True)
class TypedCommand(Command, Generic[P]):
    """A command's declaration: its handler takes the parameter type ``params``, whose fields declare the
    arguments. ``check`` validates (and may normalise) parameters across fields, raising ValueError;
    ``describe`` says what a write will do, for confirmations and refusals."""

    name: str
    handler: Handler[P]
    params: type[P]
    summary: str
    access: Access = Access.LOCAL
    aliases: tuple[str, ...] = ()
    usage_text: str | None = None
    details: str = ""
    check: Callable[[P], P] | None = None
    outcome: bool = True
    history: bool = True
    group: str | None = None
    describe: Callable[[P], str] | None = None
    sends: Callable[[P], Mapping[str, object]] | None = None
    one_shot: bool = True
    raw: bool = False
    needs: frozenset[Capability] = frozenset()

    def __post_init__(self) -> None:
        # From ``params``, checked when the command is declared; not a field (Command's instances have a dict).
        object.__setattr__(self, "args", declared_args(self.params))

    def bind(self, values: _Values) -> P:
        params = self.params(**values)
        return self.check(params) if self.check is not None else params

    def what(self, params: object) -> str:
        return self.describe(self._own(params)) if self.describe is not None else f"run /{self.name}"

    def fields(self, params: object) -> tuple[tuple[str, str], ...]:
        if self.sends is None:
            return ()
        sent = self.sends(self._own(params))
        return tuple((name, str(value)) for name, value in sent.items() if value is not None)

    def perform(self, context: CommandContext, params: object) -> Awaitable[Result]:
        return self.handler(context, self._own(params))

    def _own(self, params: object) -> P:
        if not isinstance(params, self.params):
            raise TypeError(f"/{self.name} takes {self.params.__name__}, not {type(params).__name__}")
        return params


@record
class Invocation:
    """A parsed line: the command and its parameters (an instance of the command's parameter type)."""

    command: Command
    params: object
    line: str

    def what(self) -> str:
        return self.command.what(self.params)

    def fields(self) -> tuple[tuple[str, str], ...]:
        return self.command.fields(self.params)

    def perform(self, context: CommandContext) -> Awaitable[Result]:
        return self.command.perform(context, self.params)


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
        return Invocation(command=cmd, params=cmd.parse(words), line=line.strip())

    def help(self, topic: Command | None = None, *, allowed: Callable[[Command], bool] = lambda _: True) -> Help:
        """Help on one command, or on every command ``allowed`` lets through."""
        if topic is not None:
            return Help(entries=(topic.help_entry(detailed=True),), topic=f"/{topic.name}")
        return Help(entries=tuple(c.help_entry() for c in self.commands() if allowed(c)))


def command(
    name: str,
    *,
    params: type[P],
    summary: str,
    access: Access = Access.LOCAL,
    aliases: Iterable[str] = (),
    usage: str | None = None,
    details: str = "",
    check: Callable[[P], P] | None = None,
    outcome: bool = True,
    history: bool = True,
    group: str | None = None,
    describe: Callable[[P], str] | None = None,
    sends: Callable[[P], Mapping[str, object]] | None = None,
    one_shot: bool = True,
    raw: bool = False,
    needs: frozenset[Capability] = frozenset(),
) -> Callable[[Handler[P]], TypedCommand[P]]:
    """Decorator declaring ``handler`` as the command ``/name`` taking ``params`` (returns the command).

    ``sends``: for a write, the fields it sends by their API names (None values are not sent), which a
    confirmation shows in full. ``needs``: what a face must give the command for it to work there (a chat bot's
    room); elsewhere help leaves it out and running it says where it works."""

    def declare(handler: Handler[P]) -> TypedCommand[P]:
        return TypedCommand(
            name=name,
            handler=handler,
            params=params,
            summary=summary,
            access=access,
            aliases=tuple(aliases),
            usage_text=usage,
            details=details,
            check=check,
            outcome=outcome,
            history=history,
            group=group,
            describe=describe,
            sends=sends,
            one_shot=one_shot,
            raw=raw,
            needs=needs,
        )

    return declare

"""A command's arguments, declared once as the fields of its parameter type.

::

    @record(kw_only=True)
    class GetParams:
        id: int = positional("ID", conv.pet_id, required=True, help="pet id (int64)")

Each field says how it is typed on a line (a positional word, a ``--flag VALUE``, a ``--switch``, ``key=value``),
the converter from the word to its value, its completion source and its help. The registry derives parsing, the
usage line, ``/help``, completion and the subcommands' options from these fields; the handler receives an instance.
The converter's return type is the field's type: ``limit: str | None = option("--limit", "N", conv.limit)`` is a
type error, since ``conv.limit`` gives an ``int``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Literal, TypeVar, cast, overload

from petstore_os.records import field, fields, is_record, record, replace

__all__ = [
    "Arg",
    "Choices",
    "CompletionContext",
    "NoParams",
    "declared_args",
    "option",
    "positional",
    "switch",
]

T = TypeVar("T")
_KEY = "bot_commands.arguments"


@record
class CompletionContext:
    """What a dynamic completion source may look at."""

    positional: Sequence[str]
    ids: Sequence[str]
    names: Sequence[str]


#: Completion source: static values, or a function of the :class:`CompletionContext`.
Choices = tuple[str, ...] | Callable[[CompletionContext], Iterable[str]]


@record
class Arg:
    """One way to give a parameter: ``flag=None`` makes it positional. A parameter may have several
    (``/list sold`` and ``/list --status sold``); ``dest`` is the parameter's field."""

    dest: str
    metavar: str = ""
    flag: str | None = None
    convert: Callable[[str], object] = str
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


@record
class NoParams:
    """The parameters of a command that takes no arguments."""


def _field(spellings: Sequence[Arg], *, required: bool, default: object = None) -> object:
    """A record field carrying its spellings (no default when ``required``: parsing always gives it)."""
    metadata = {_KEY: tuple(spellings)}
    if required:
        return field(metadata=metadata)
    return field(default=default, metadata=metadata)


@overload
def positional(
    metavar: str,
    convert: Callable[[str], T],
    *,
    required: Literal[True],
    greedy: bool = ...,
    keys: tuple[str, ...] = ...,
    choices: Choices = ...,
    help: str = ...,
    flag: str | None = ...,
    flag_metavar: str = ...,
) -> T: ...
@overload
def positional(
    metavar: str,
    convert: Callable[[str], T],
    *,
    required: Literal[False] = ...,
    greedy: bool = ...,
    keys: tuple[str, ...] = ...,
    choices: Choices = ...,
    help: str = ...,
    flag: str | None = ...,
    flag_metavar: str = ...,
) -> T | None: ...
def positional(
    metavar: str,
    convert: Callable[[str], T],
    *,
    required: bool = False,
    greedy: bool = False,
    keys: tuple[str, ...] = (),
    choices: Choices = (),
    help: str = "",
    flag: str | None = None,
    flag_metavar: str = "",
) -> T | None:
    """A word in its place (``greedy``: the rest of the line); also ``flag FLAG_METAVAR`` when ``flag`` is given,
    and ``key=value`` for each of ``keys``. None when not given (unless ``required``)."""
    word = Arg("", metavar, convert=convert, keys=keys, required=required, greedy=greedy, choices=choices, help=help)
    spellings = [word]
    if flag is not None:
        spellings.append(Arg("", flag_metavar or metavar, flag=flag, convert=convert, choices=choices))
    return cast("T | None", _field(spellings, required=required))


@overload
def option(
    flag: str,
    metavar: str,
    convert: Callable[[str], T],
    *,
    required: Literal[True],
    keys: tuple[str, ...] = ...,
    choices: Choices = ...,
    help: str = ...,
) -> T: ...
@overload
def option(
    flag: str,
    metavar: str,
    convert: Callable[[str], T],
    *,
    required: Literal[False] = ...,
    keys: tuple[str, ...] = ...,
    choices: Choices = ...,
    help: str = ...,
) -> T | None: ...
def option(
    flag: str,
    metavar: str,
    convert: Callable[[str], T],
    *,
    required: bool = False,
    keys: tuple[str, ...] = (),
    choices: Choices = (),
    help: str = "",
) -> T | None:
    """``FLAG VALUE`` (or ``FLAG=VALUE``, or ``key=value`` for each of ``keys``); None when not given."""
    spelling = Arg("", metavar, flag=flag, convert=convert, keys=keys, required=required, choices=choices, help=help)
    return cast("T | None", _field([spelling], required=required))


def switch(flag: str, *, help: str = "") -> bool:
    """``FLAG`` alone: True when given."""
    return cast(bool, _field([Arg("", flag=flag, switch=True, help=help)], required=False, default=False))


def declared_args(params: type) -> tuple[Arg, ...]:
    """Every spelling of every field of ``params`` (a record of declared fields), in field order."""
    if not is_record(params):
        raise TypeError(f"{params.__name__} is not a record: a command's parameters are one")
    args: list[Arg] = []
    for item in fields(params):
        spellings = cast("tuple[Arg, ...] | None", item.metadata.get(_KEY))
        if spellings is None:
            raise TypeError(f"{params.__name__}.{item.name} is not declared with positional(), option() or switch()")
        args += [replace(spelling, dest=item.name) for spelling in spellings]
    return tuple(args)

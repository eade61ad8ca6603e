"""Immutable records: ``@record`` makes a class whose annotated fields are its state, slotted and frozen, with
``__init__`` (positional or keyword, defaults and default factories), ``__eq__`` and ``__hash__`` over the compared
fields (equal only to an instance of the same class), ``__repr__``, ``__match_args__``, and copy and pickle support.
``replace`` makes a changed copy; ``fields`` lists a record's fields (with their ``metadata``).

What it is for: declaring a record costs a few microseconds. A frozen dataclass costs ~350 µs to declare, since
``dataclasses`` writes each method as source and compiles it; the one-shot commands declare about a hundred records
before they do anything. The methods here are closures over the field names, built the same way for every class;
mypy reads the declarations as it reads dataclasses', through ``typing.dataclass_transform`` (PEP 681).

::

    @record(kw_only=True)
    class Page:
        items: tuple[str, ...]
        size: int = 20
        seen: list[str] = field(default_factory=list, compare=False)

Fields are read from the class's own annotations (strings or not; ``ClassVar`` ones are not fields) after those of
its record bases. A default mutable value (a list, a dict, a set) is refused: ``default_factory`` makes one per
record. ``__post_init__``, when the class has one, runs after the fields are set (it may set ``init=False`` fields
with ``object.__setattr__``). A method the class body defines itself (``__repr__``, ``__eq__``...) is kept.
"""

from __future__ import annotations

import inspect
import reprlib
from collections.abc import Callable, Iterable, Mapping
from operator import attrgetter
from types import FunctionType, MappingProxyType
from typing import Final, TypeVar, dataclass_transform, overload

__all__ = ["Field", "FrozenRecordError", "field", "fields", "is_record", "record", "replace"]

T = TypeVar("T")
C = TypeVar("C", bound=type)


class _Missing:
    """The absence of a default (``None`` is a default)."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Final = _Missing()
_NO_METADATA: Mapping[str, object] = MappingProxyType({})


class FrozenRecordError(AttributeError):
    """An assignment to (or deletion of) a record's field: records are immutable; ``replace`` makes a changed one."""


class Field:
    """One field of a record: its name, default (or default factory), and whether it is an ``__init__`` argument,
    shown in ``repr``, compared (and hashed), keyword-only; ``metadata`` is for whoever declares fields."""

    __slots__ = ("compare", "default", "default_factory", "init", "kw_only", "metadata", "name", "repr")

    def __init__(
        self,
        *,
        name: str = "",
        default: object = MISSING,
        default_factory: Callable[[], object] | _Missing = MISSING,
        init: bool = True,
        repr: bool = True,
        compare: bool = True,
        kw_only: bool = False,
        metadata: Mapping[str, object] | None = None,
    ) -> None:
        self.name = name
        self.default = default
        self.default_factory = default_factory
        self.init = init
        self.repr = repr
        self.compare = compare
        self.kw_only = kw_only
        self.metadata: Mapping[str, object] = _NO_METADATA if metadata is None else MappingProxyType(dict(metadata))

    def __repr__(self) -> str:
        return f"Field(name={self.name!r}, default={self.default!r}, default_factory={self.default_factory!r})"

    def named(self, name: str, *, kw_only: bool) -> Field:
        """This declaration as the field ``name`` of one class."""
        made = Field(
            name=name,
            default=self.default,
            default_factory=self.default_factory,
            init=self.init,
            repr=self.repr,
            compare=self.compare,
            kw_only=kw_only,
        )
        made.metadata = self.metadata
        return made

    @property
    def required(self) -> bool:
        """Whether ``__init__`` must be given it (no default, no factory)."""
        return self.default is MISSING and isinstance(self.default_factory, _Missing)


@overload
def field(
    *,
    default: T,
    init: bool = ...,
    repr: bool = ...,
    compare: bool = ...,
    metadata: Mapping[str, object] | None = ...,
) -> T: ...
@overload
def field(
    *,
    default_factory: Callable[[], T],
    init: bool = ...,
    repr: bool = ...,
    compare: bool = ...,
    metadata: Mapping[str, object] | None = ...,
) -> T: ...
@overload
def field(
    *,
    init: bool = ...,
    repr: bool = ...,
    compare: bool = ...,
    metadata: Mapping[str, object] | None = ...,
) -> object: ...
def field(
    *,
    default: object = MISSING,
    default_factory: Callable[[], object] | _Missing = MISSING,
    init: bool = True,
    repr: bool = True,
    compare: bool = True,
    metadata: Mapping[str, object] | None = None,
) -> object:
    """A field declared with more than a default: a ``default_factory``, left out of ``__init__``, ``repr`` or the
    comparison, or carrying ``metadata``."""
    if default is not MISSING and not isinstance(default_factory, _Missing):
        raise ValueError("a field has a default or a default_factory, not both")
    return Field(
        default=default, default_factory=default_factory, init=init, repr=repr, compare=compare, metadata=metadata
    )


#: Each record class -> its fields, in ``__init__``'s order of declaration (the bases' first).
_FIELDS: dict[type, tuple[Field, ...]] = {}


@overload
def record(cls: C, /) -> C: ...
@overload
def record(*, kw_only: bool = False) -> Callable[[C], C]: ...
@dataclass_transform(frozen_default=True, field_specifiers=(field, Field))
def record(cls: C | None = None, /, *, kw_only: bool = False) -> C | Callable[[C], C]:
    """Make ``cls`` an immutable record (``@record``, or ``@record(kw_only=True)``: every field of this class is
    a keyword argument of ``__init__``)."""

    def make(cls: C) -> C:
        return _build(cls, kw_only=kw_only)

    return make if cls is None else make(cls)


def fields(item: object) -> tuple[Field, ...]:
    """The fields of a record class or instance, in order; TypeError for anything else."""
    cls = item if isinstance(item, type) else type(item)
    found = _FIELDS.get(cls)
    if found is None:
        raise TypeError(f"{cls.__qualname__} is not a record")
    return found


def is_record(item: object) -> bool:
    """Whether ``item`` is a record class or an instance of one."""
    return (item if isinstance(item, type) else type(item)) in _FIELDS


R = TypeVar("R")


def replace(item: R, /, **changes: object) -> R:
    """A copy of the record ``item`` with ``changes`` (by field name); ``__post_init__`` runs again."""
    for each in fields(item):
        if not each.init:
            if each.name in changes:
                raise ValueError(f"{each.name} is not an __init__ field: replace cannot set it")
        elif each.name not in changes:
            changes[each.name] = getattr(item, each.name)
    return type(item)(**changes)


def _is_class_var(annotation: object) -> bool:
    text = annotation if isinstance(annotation, str) else getattr(annotation, "__qualname__", repr(annotation))
    return isinstance(text, str) and text.removeprefix("typing.").startswith("ClassVar")


def _own_fields(cls: type, *, kw_only: bool) -> list[Field]:
    declared = []
    for name, annotation in inspect.get_annotations(cls).items():
        if _is_class_var(annotation):
            continue
        value = cls.__dict__.get(name, MISSING)
        if isinstance(value, Field):
            declared.append(value.named(name, kw_only=kw_only))
            continue
        if value is not MISSING and type(value).__hash__ is None:
            raise ValueError(
                f"{cls.__qualname__}.{name}: a mutable default ({type(value).__name__}) would be shared by every "
                "record: use field(default_factory=...)"
            )
        declared.append(Field(name=name, default=value, kw_only=kw_only))
    return declared


def _inherited_fields(cls: type) -> dict[str, Field]:
    found: dict[str, Field] = {}
    for base in reversed(cls.__mro__[1:]):
        for each in _FIELDS.get(base, ()):
            found[each.name] = each
    return found


def _build(cls: C, *, kw_only: bool) -> C:
    own = _own_fields(cls, kw_only=kw_only)
    inherited = _inherited_fields(cls)
    every = {**inherited, **{each.name: each for each in own}}
    all_fields = tuple(every.values())
    slotted = {name for base in cls.__mro__[1:] for name in base.__dict__.get("__slots__", ())}
    namespace = {key: value for key, value in cls.__dict__.items() if key not in every}
    namespace.pop("__dict__", None)
    namespace.pop("__weakref__", None)
    namespace["__slots__"] = tuple(each.name for each in own if each.name not in slotted)
    methods = _methods(cls.__qualname__, all_fields, post_init=hasattr(cls, "__post_init__"))
    for name, method in methods.items():
        if name not in cls.__dict__ or (name == "__hash__" and cls.__dict__["__hash__"] is None):
            namespace[name] = method
    made: C = type(cls)(cls.__name__, cls.__bases__, namespace)
    _point_class_cells(cls.__dict__.values(), old=cls, new=made)
    _FIELDS[made] = all_fields
    return made


def _methods(qualname: str, every: tuple[Field, ...], *, post_init: bool) -> dict[str, object]:
    """The methods of a record with ``every`` field."""
    compared = tuple(each.name for each in every if each.compare)
    key = _getter(compared)
    return {
        "__init__": _init(qualname, every, post_init=post_init),
        "__repr__": _repr(tuple(each.name for each in every if each.repr)),
        "__eq__": _eq(key),
        "__hash__": lambda self: hash(key(self)),
        "__setattr__": _refuse_set,
        "__delattr__": _refuse_delete,
        "__getstate__": _getstate,
        "__setstate__": _setstate,
        "__match_args__": tuple(each.name for each in every if each.init and not each.kw_only),
    }


def _getter(names: tuple[str, ...]) -> Callable[[object], object]:
    """The tuple of the fields ``names`` of a record."""
    if len(names) >= 2:
        return attrgetter(*names)
    if len(names) == 1:
        one = attrgetter(names[0])
        return lambda item: (one(item),)
    return lambda item: ()


def _init(qualname: str, every: tuple[Field, ...], *, post_init: bool) -> Callable[..., None]:
    """``__init__``: positional arguments in the order of the fields that are not keyword-only, any by keyword."""
    taken = [each for each in every if each.init]
    positional = tuple(each.name for each in taken if not each.kw_only)
    _check_order(qualname, (each for each in taken if not each.kw_only))
    names = frozenset(each.name for each in taken)
    defaults = {each.name: each.default for each in taken if each.default is not MISSING}
    made = tuple(
        (each.name, each.default_factory)
        for each in every
        if (each.init or not each.required) and not isinstance(each.default_factory, _Missing)
    )
    fixed = {each.name: each.default for each in every if not each.init and each.default is not MISSING}
    required = [each.name for each in taken if each.required]
    given = len(every) - sum(1 for each in every if not each.init and each.required)  # those __post_init__ sets
    set_field = object.__setattr__
    # Every field positional with a plain default or none: by position alone, the defaults of the rest follow.
    plain = len(positional) == len(every) and not made
    least = len(required)
    tail = tuple(defaults[name] for name in positional[least:]) if plain else ()
    # No default factory and no init=False field with a default: by keyword alone, each field its value or default.
    by_keyword = () if made or fixed else tuple((each.name, defaults.get(each.name, MISSING)) for each in taken)

    def __init__(self: object, /, *args: object, **kwargs: object) -> None:
        if plain and not kwargs and least <= len(args) <= len(positional):
            for name, value in zip(positional, args + tail[len(args) - least :], strict=True):
                set_field(self, name, value)
            if post_init:
                self.__post_init__()  # type: ignore[attr-defined]
            return
        if by_keyword and not args and names.issuperset(kwargs):
            for name, default in by_keyword:
                value = kwargs.get(name, default)
                if value is MISSING:
                    break  # a required field not given: the general path says which
                set_field(self, name, value)
            else:
                if post_init:
                    self.__post_init__()  # type: ignore[attr-defined]
                return
        if len(args) > len(positional):
            raise TypeError(f"{qualname}() takes {len(positional)} positional arguments but {len(args)} were given")
        values = {**defaults, **fixed, **dict(zip(positional, args, strict=False))}
        if kwargs:
            if not names.issuperset(kwargs):
                raise TypeError(f"{qualname}() got unexpected keyword arguments: {', '.join(set(kwargs) - names)}")
            if not kwargs.keys().isdisjoint(positional[: len(args)]):
                raise TypeError(f"{qualname}() got multiple values for {', '.join(kwargs.keys() & positional)}")
            values.update(kwargs)
        for name, factory in made:
            if name not in values:
                values[name] = factory()
        if len(values) < given:
            missing = [name for name in required if name not in values]
            raise TypeError(f"{qualname}() missing required arguments: {', '.join(missing)}")
        for name, value in values.items():
            set_field(self, name, value)
        if post_init:
            self.__post_init__()  # type: ignore[attr-defined]

    __init__.__qualname__ = f"{qualname}.__init__"
    return __init__


def _check_order(qualname: str, positional: Iterable[Field]) -> None:
    """A positional field without a default after one with a default is refused (as in a ``def``)."""
    defaulted = ""
    for each in positional:
        if not each.required:
            defaulted = defaulted or each.name
        elif defaulted:
            raise TypeError(f"{qualname}: non-default argument {each.name!r} follows default argument {defaulted!r}")


def _repr(names: tuple[str, ...]) -> Callable[[object], str]:
    @reprlib.recursive_repr()
    def __repr__(self: object) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in names)
        return f"{type(self).__qualname__}({shown})"

    return __repr__


def _eq(key: Callable[[object], object]) -> Callable[[object, object], bool]:
    def __eq__(self: object, other: object) -> bool:
        if other.__class__ is self.__class__:
            return bool(key(self) == key(other))
        return NotImplemented

    return __eq__


def _refuse_set(self: object, name: str, value: object) -> None:
    raise FrozenRecordError(f"cannot assign to field {name!r} of {type(self).__qualname__}: records are immutable")


def _refuse_delete(self: object, name: str) -> None:
    raise FrozenRecordError(f"cannot delete field {name!r} of {type(self).__qualname__}: records are immutable")


def _getstate(self: object) -> tuple[object, ...]:
    return tuple(getattr(self, each.name) for each in fields(self))


def _setstate(self: object, state: tuple[object, ...]) -> None:
    for each, value in zip(fields(self), state, strict=True):
        object.__setattr__(self, each.name, value)


def _point_class_cells(members: Iterable[object], *, old: type, new: type) -> None:
    """Methods that use ``super()`` or ``__class__`` hold the class in a cell: point it at the class made here."""
    for member in members:
        function = member.fget if isinstance(member, property) else getattr(member, "__func__", member)
        if isinstance(function, FunctionType) and "__class__" in function.__code__.co_freevars:
            cell = function.__closure__[function.__code__.co_freevars.index("__class__")]  # type: ignore[index]
            if cell.cell_contents is old:
                cell.cell_contents = new

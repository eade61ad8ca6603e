"""petstore_os.records: the immutable records every package declares; here the decorator's rules, against a frozen
dataclass of the same fields where the two must agree (construction, equality, hashing, repr, matching)."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from typing import ClassVar

import pytest
from hypothesis import given
from hypothesis import strategies as st

from petstore_os.records import FrozenRecordError, field, fields, is_record, record, replace


@record
class Point:
    x: int
    y: int = 0
    label: str = field(default="", compare=False)
    seen: list[int] = field(default_factory=list, repr=False, compare=False)
    UNIT: ClassVar[int] = 1


@dataclasses.dataclass(frozen=True, slots=True)
class PointDC:
    x: int
    y: int = 0
    label: str = dataclasses.field(default="", compare=False)
    seen: list[int] = dataclasses.field(default_factory=list, repr=False, compare=False)


@record
class Pair:
    """Every field positional with a plain default or none (``__init__``'s shortest way)."""

    first: int
    second: str = "two"
    third: tuple[int, ...] = ()


@dataclasses.dataclass(frozen=True, slots=True)
class PairDC:
    first: int
    second: str = "two"
    third: tuple[int, ...] = ()


@record
class Base:
    """A base with a field and a method its subclasses inherit."""

    kind: str

    def shout(self) -> str:
        return self.kind.upper()


@record(kw_only=True)
class Child(Base):
    size: int = 1
    tags: tuple[str, ...] = ()


@record
class Derived:
    value: int
    double: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "double", self.value * 2)


@record
class Empty:
    pass


@record
class Greeter:
    name: str

    def __str__(self) -> str:
        return f"hello {super().__str__()}"


ints = st.integers()
labels = st.text(max_size=5)


@given(ints, ints, labels)
def test_construction_equality_hash_and_repr_agree_with_a_frozen_dataclass(x: int, y: int, label: str) -> None:
    ours, theirs = Point(x, y, label), PointDC(x, y, label)
    assert (ours.x, ours.y, ours.label, ours.seen) == (theirs.x, theirs.y, theirs.label, theirs.seen)
    assert repr(ours) == repr(theirs).replace("PointDC", "Point")
    assert Point(x, y=y, label="other") == ours
    assert hash(Point(x, y=y, label="other")) == hash(ours)
    assert (Point(x, y + 1) == ours) is False


@given(st.lists(st.one_of(ints, labels), max_size=4), st.dictionaries(st.sampled_from(["first", "second"]), ints))
def test_any_call_makes_what_a_frozen_dataclass_makes_or_fails_as_it_does(
    args: list[object], kwargs: dict[str, int]
) -> None:
    try:
        theirs = PairDC(*args, **kwargs)  # type: ignore[arg-type]
    except TypeError:
        with pytest.raises(TypeError):
            Pair(*args, **kwargs)  # type: ignore[arg-type]
        return
    ours = Pair(*args, **kwargs)  # type: ignore[arg-type]
    assert (ours.first, ours.second, ours.third) == (theirs.first, theirs.second, theirs.third)


@given(ints, ints)
def test_equal_records_are_one_key_and_unequal_ones_two(x: int, y: int) -> None:
    assert len({Point(x, y), Point(x, y), Point(x, y + 1)}) == 2


def test_a_record_equals_only_a_record_of_its_own_class() -> None:
    assert Point(1, 2) != PointDC(1, 2)  # type: ignore[comparison-overlap]
    assert Point(1, 2) != (1, 2)  # type: ignore[comparison-overlap]
    assert Base("a") != Child("a")
    assert Point(1, 2).__eq__((1, 2)) is NotImplemented


def test_fields_cannot_be_set_or_deleted() -> None:
    point = Point(1)
    with pytest.raises(FrozenRecordError, match="'x' of Point"):
        point.x = 2  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del point.y
    with pytest.raises(AttributeError):
        point.other = 3  # type: ignore[attr-defined]
    assert not hasattr(point, "__dict__")
    assert point.x == 1


def test_init_checks_its_arguments_as_a_def_would() -> None:
    with pytest.raises(TypeError, match="missing required arguments: x"):
        Point()  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="takes 4 positional arguments but 5"):
        Point(1, 2, "", [], 5)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="unexpected keyword arguments: z"):
        Point(1, z=2)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="multiple values for x"):
        Point(1, x=2)  # type: ignore[misc]
    with pytest.raises(TypeError, match="positional arguments but 2"):
        Child("a", 2)  # type: ignore[call-arg]


def test_a_default_factory_makes_one_value_per_record() -> None:
    one, two = Point(1), Point(1)
    one.seen.append(3)
    assert two.seen == [] and one.seen == [3]


def test_declarations_are_refused_where_a_def_or_a_dataclass_would_be() -> None:
    with pytest.raises(TypeError, match="non-default argument 'b' follows default argument 'a'"):

        @record
        class Wrong:
            a: int = 0
            b: int  # type: ignore[misc]

    with pytest.raises(ValueError, match="default_factory"):

        @record
        class Shared:
            items: list[int] = []

    with pytest.raises(ValueError, match="not both"):
        field(default=1, default_factory=int)  # type: ignore[call-overload]


def test_fields_of_a_subclass_follow_its_bases_and_keyword_only_ones_are_not_matched() -> None:
    child = Child("dog", size=3)
    assert [each.name for each in fields(Child)] == ["kind", "size", "tags"]
    assert [each.kw_only for each in fields(child)] == [False, True, True]
    assert Child.__match_args__ == ("kind",)
    assert child.shout() == "DOG"
    assert repr(child) == "Child(kind='dog', size=3, tags=())"
    assert isinstance(child, Base)


def test_pattern_matching_by_position_and_keyword() -> None:
    match Point(1, 2):
        case Point(1, y, label=""):
            found = y
        case _:
            found = -1
    assert found == 2
    assert Point.__match_args__ == ("x", "y", "label", "seen")


def test_replace_makes_a_changed_copy_and_runs_post_init_again() -> None:
    point = Point(1, 2, "a")
    assert replace(point, y=5) == Point(1, 5) and replace(point, y=5).label == "a"
    assert point.y == 2
    assert replace(Derived(2), value=5).double == 10
    with pytest.raises(ValueError, match="double is not an __init__ field"):
        replace(Derived(2), double=1)
    with pytest.raises(TypeError, match="unexpected keyword"):
        replace(point, z=1)


def test_metadata_is_kept_and_read_only() -> None:
    @record
    class Params:
        who: str = field(default="", metadata={"spelling": "WHO"})

    (only,) = fields(Params)
    assert only.metadata["spelling"] == "WHO"
    with pytest.raises(TypeError):
        only.metadata["spelling"] = "other"  # type: ignore[index]
    assert fields(Point)[0].metadata == {}


def test_what_is_and_is_not_a_record() -> None:
    assert is_record(Point) and is_record(Point(1)) and is_record(Empty())
    assert not is_record(PointDC) and not is_record(object())
    with pytest.raises(TypeError, match="PointDC is not a record"):
        fields(PointDC)


def test_a_record_without_fields_is_equal_to_its_like() -> None:
    assert Empty() == Empty() and hash(Empty()) == hash(Empty()) and repr(Empty()) == "Empty()"


def test_methods_of_the_body_are_kept_and_super_works() -> None:
    assert str(Greeter("x")).startswith("hello Greeter(name='x')")


def test_copies_and_pickles_are_equal_records() -> None:
    point = Point(1, 2, "a", [3])
    for made in (copy.copy(point), copy.deepcopy(point), pickle.loads(pickle.dumps(point))):
        assert made == point and made.label == "a" and made.seen == [3] and type(made) is Point


def test_a_recursive_value_is_shown_without_recursing() -> None:
    point = Point(1, label="x")
    point.seen.append(point)  # type: ignore[arg-type]
    assert "Point(x=1, y=0, label='x')" == repr(point)
    loop: list[object] = []
    holder = Base(kind=loop)  # type: ignore[arg-type]
    loop.append(holder)
    assert repr(holder) == "Base(kind=[...])"


@record
class Sized:
    """A field ``__init__`` does not take and ``__post_init__`` sets (no default)."""

    items: tuple[int, ...]
    size: int = field(init=False)  # type: ignore[assignment]

    def __post_init__(self) -> None:
        object.__setattr__(self, "size", len(self.items))


def test_a_field_post_init_sets_is_no_argument_but_is_compared_and_shown() -> None:
    assert Sized((1, 2)).size == 2 and repr(Sized((1, 2))) == "Sized(items=(1, 2), size=2)"
    assert Sized(items=(1,)) == Sized((1,)) and Sized((1,)) != Sized((1, 2))
    with pytest.raises(TypeError, match="unexpected keyword arguments: size"):
        Sized((1,), size=3)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="missing required arguments: items"):
        Sized()  # type: ignore[call-arg]

"""Dataclass methods from the on-disk code cache (petstore_cli.dataclass_code): the same classes, compiled once.

Each case runs in a fresh interpreter (the cache replaces a function of the ``dataclasses`` module for the
whole process, as the ``petstore`` program installs it): without the cache, with an empty cache (compiles
and writes), and with the written cache (compiles nothing). What the classes do must not differ.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from python_support import python_run

from petstore_cli import dataclass_code

pytestmark = pytest.mark.skipif(not dataclass_code.applies(), reason="this Python builds dataclass methods otherwise")

#: Dataclasses of every kind the stdlib generates methods for, and what they do, as JSON.
CLASSES = """
import dataclasses, json, sys
from dataclasses import InitVar, dataclass, field

@dataclass(frozen=True, slots=True)
class Point:
    x: int
    y: int = 0

@dataclass(order=True, unsafe_hash=True)
class Ranked:
    rank: int
    name: str = field(default="", compare=False)

@dataclass(kw_only=True)
class Options:
    tags: list[str] = field(default_factory=list)
    hidden: int = field(default=3, repr=False)
    seed: InitVar[int] = 0
    total: int = field(init=False)

    def __post_init__(self, seed: int) -> None:
        self.total = seed + self.hidden

@dataclass(frozen=True)
class Base:
    a: int = 1

@dataclass(frozen=True)
class Child(Base):
    note: str = "x"

def attempt(fn):
    try:
        return repr(fn())
    except Exception as exc:
        return type(exc).__name__

p = Point(1)
said = {
    "point": [repr(p), p == Point(1, 0), p != Point(2), hash(p) == hash(Point(1, 0)),
              attempt(lambda: setattr(p, "x", 5)), attempt(lambda: Point()), Point.__slots__],
    "ranked": [repr(sorted([Ranked(2, "b"), Ranked(1, "a")])), Ranked(1, "a") == Ranked(1, "z"),
               hash(Ranked(1, "a")) == hash(Ranked(1, "q")), Ranked(1) < Ranked(2)],
    "options": [repr(Options(seed=4)), Options(seed=4).total, attempt(lambda: Options(1)),
                Options().tags is not Options().tags],
    "child": [repr(Child()), attempt(lambda: setattr(Child(), "note", "y"))],
    "signatures": [str(__import__("inspect").signature(c)) for c in (Point, Ranked, Options, Child)],
}
"""


def run(tmp_path: Path, *, cached: bool) -> tuple[dict[str, object], int]:
    """What the classes do, and how many entries the process compiled (-1: no cache installed)."""
    install = (
        (
            f"from petstore_cli.dataclass_code import CodeCache, install\n"
            f"cache = install(CodeCache({str(tmp_path / 'cache' / 'code.marshal')!r}))\n"
        )
        if cached
        else "cache = None\n"
    )
    code = install + CLASSES + "print(json.dumps([said, -1 if cache is None else len(cache.new)]))\n"
    said, compiled = json.loads(python_run(code).stdout)
    return said, compiled


def test_the_classes_do_the_same_from_the_cache_and_the_second_process_compiles_nothing(tmp_path: Path) -> None:
    plain, _ = run(tmp_path, cached=False)
    first, compiled_first = run(tmp_path, cached=True)
    second, compiled_second = run(tmp_path, cached=True)
    assert first == plain and second == plain
    assert compiled_first > 10 and compiled_second == 0  # written at exit by the first, read by the second
    entries = dataclass_code.read(tmp_path / "cache" / "code.marshal")
    assert len(entries) == compiled_first and all(text.startswith("def __create_fn__(") for text in entries)


def test_a_garbled_cache_is_a_miss_and_is_written_again(tmp_path: Path) -> None:
    path = tmp_path / "cache" / "code.marshal"
    path.parent.mkdir()
    plain, _ = run(tmp_path, cached=False)
    for junk in (b"", b"\x00garbage", json.dumps({"a": 1}).encode()):
        path.write_bytes(junk)
        said, compiled = run(tmp_path, cached=True)
        assert said == plain and compiled > 10
        assert len(dataclass_code.read(path)) == compiled


def test_read_refuses_anything_but_text_to_code(tmp_path: Path) -> None:
    import marshal

    path = tmp_path / "code.marshal"
    path.write_bytes(marshal.dumps({"def f(): pass": "not code"}))
    assert dataclass_code.read(path) == {}
    path.write_bytes(marshal.dumps([compile("1", "<string>", "eval")]))
    assert dataclass_code.read(path) == {}
    assert dataclass_code.read(tmp_path / "missing") == {}


def test_nothing_is_installed_where_dataclasses_builds_methods_another_way(monkeypatch: pytest.MonkeyPatch) -> None:
    import dataclasses

    def other(name: str, body: str) -> None:  # pragma: no cover - never called
        pass

    monkeypatch.setattr(dataclasses, "_create_fn", other, raising=False)
    assert dataclass_code.install(dataclass_code.CodeCache(Path("unused"))) is None
    assert dataclasses._create_fn is other
    monkeypatch.undo()
    assert dataclass_code.applies()


def test_the_program_installs_it_but_not_for_version_or_help(tmp_path: Path) -> None:
    probe = (
        "import sys, dataclasses\n"
        "sys.argv = ['petstore', *{words!r}]\n"
        "from petstore_cli.main import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print('petstore_cli.dataclass_code' in sys.modules, file=sys.stderr)\n"
    )
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    for words, installed in ((["--version"], "False"), (["--help"], "False"), (["config", "path"], "True")):
        out = python_run(probe.format(words=words), env=env)
        assert out.stderr.strip().splitlines()[-1] == installed

"""What an immutable record costs to declare and to use, by the way it is declared: ``petstore_os.records.record``,
a frozen slotted dataclass (what the packages used before), a ``collections.namedtuple`` and a hand-written
``__slots__`` class; and the ``-X importtime`` self time of the modules that declare most records, in two venvs.

    .venv/bin/python bench/bench_records.py [--reps 7] [--venv LABEL=DIR ...] [--callgrind]

Each figure is the least of ``--reps`` timeit repeats (the machine's noise only adds); ``--callgrind`` adds the
instructions of one declaration of each way (200 declarations less none, under valgrind), which load does not move. The declaration is a class of
three fields, one with a default factory; the uses are a construction by position and by keyword, ``==`` and
``hash``. ``--venv LABEL=DIR`` (e.g. a base ``pip install .`` of the tree before, and one of this tree) adds the
least self time of each module over ``--reps`` interleaved runs of ``-X importtime``.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import timeit
from collections import namedtuple
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field as dc_field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from petstore_os.records import field, record

#: The modules with most records on the one-shot path (``petstore run -c /list``).
MODULES = [
    "bot_commands.results",
    "bot_commands.views",
    "bot_commands.commands",
    "bot_commands.errors",
    "bot_commands.formats",
    "bot_commands.session",
    "petstore_api.models",
    "petstore_cli.runner",
]
IMPORTS = "import bot_commands.commands, bot_commands.views, petstore_cli.runner"
LINE = re.compile(r"import time:\s+(\d+) \|\s+\d+ \|\s*(\S+)")


def declare_record() -> object:
    @record
    class Point:
        x: int
        y: int = 0
        seen: list[int] = field(default_factory=list)

    return Point


def declare_dataclass() -> object:
    @dataclass(frozen=True, slots=True)
    class Point:
        x: int
        y: int = 0
        seen: list[int] = dc_field(default_factory=list)

    return Point


def declare_namedtuple() -> object:
    return namedtuple("Point", "x y seen", defaults=(0, None))


def declare_slots() -> object:  # mutable: the least a class can cost
    class Point:
        __slots__ = ("seen", "x", "y")

        def __init__(self, x: int, y: int = 0, seen: list[int] | None = None) -> None:
            self.x, self.y, self.seen = x, y, seen if seen is not None else []

        def __eq__(self, other: object) -> bool:
            if not isinstance(other, Point) or type(other) is not type(self):
                return NotImplemented
            return (self.x, self.y, self.seen) == (other.x, other.y, other.seen)

        def __hash__(self) -> int:
            return hash((self.x, self.y, self.seen))

    return Point


WAYS: dict[str, Callable[[], object]] = {
    "record": declare_record,
    "frozen dataclass": declare_dataclass,
    "namedtuple": declare_namedtuple,
    "__slots__ class": declare_slots,
}


def least_us(call: Callable[[], object], *, number: int, reps: int) -> float:
    return min(timeit.repeat(call, number=number, repeat=reps)) / number * 1e6


def figures(declare: Callable[[], object], *, reps: int) -> list[float]:
    """Declaring, making by position and by keyword, ``==`` and ``hash``, in µs."""
    make: Callable[..., object] = declare()  # type: ignore[assignment]
    one, two = make(1, 2, [3]), make(1, 2, [3])
    hashable = make(1, 2, ())
    return [
        least_us(declare, number=200, reps=reps),
        least_us(lambda: make(1, 2, [3]), number=20000, reps=reps),
        least_us(lambda: make(x=1, y=2), number=20000, reps=reps),
        least_us(lambda: one == two, number=20000, reps=reps),
        least_us(lambda: hash(hashable), number=20000, reps=reps),
    ]


def in_process(reps: int) -> None:
    print(f"{'':18} {'declare':>9} {'by position':>12} {'by keyword':>11} {'==':>7} {'hash':>7}  (µs, least of {reps})")
    for label, declare in WAYS.items():
        declared, positional, keyword, equal, hashed = figures(declare, reps=reps)
        print(f"{label:18} {declared:9.1f} {positional:12.2f} {keyword:11.2f} {equal:7.2f} {hashed:7.2f}")


def self_times(venvs: dict[str, str], reps: int) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    best: dict[tuple[str, str], int] = {}
    for _ in range(reps):
        for label, venv in venvs.items():
            argv = [str(Path(venv) / "bin" / "python"), "-X", "importtime", "-c", IMPORTS]
            err = subprocess.run(argv, env=env, capture_output=True, text=True, cwd="/", check=True).stderr
            for own, name in LINE.findall(err):
                best[label, name] = min(best.get((label, name), 10**9), int(own))
    print(f"\n-X importtime self, least of {reps} (ms): " + "  ".join(f"{label:>8}" for label in venvs))
    for name in MODULES:
        print(f"  {name:28}" + "  ".join(f"{best.get((label, name), 0) / 1000:8.2f}" for label in venvs))


def declared_instructions(way: str, *, count: int = 200) -> float | None:
    """Instructions one declaration of ``way`` costs: a run declaring ``count`` less a run declaring none."""
    found = []
    for n in (0, count):
        argv = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, __file__]
        done = subprocess.run([*argv, "--declare", way, str(n)], capture_output=True, text=True, check=False)
        total = re.search(r"Collected : (\d+)", done.stderr)
        if total is None:
            return None
        found.append(int(total[1]))
    return (found[1] - found[0]) / count


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--venv", action="append", default=[], metavar="LABEL=DIR")
    parser.add_argument("--callgrind", action="store_true", help="instructions a declaration (valgrind)")
    parser.add_argument("--declare", nargs=2, metavar=("WAY", "N"), help=argparse.SUPPRESS)  # one run measured
    args = parser.parse_args()
    if args.declare:
        way, count = args.declare
        for _ in range(int(count)):
            WAYS[way]()
        return 0
    in_process(args.reps)
    if args.callgrind:
        print("\ninstructions a declaration (callgrind):")
        for way in WAYS:
            count = declared_instructions(way)
            print(f"  {way:18} {count:12,.0f}" if count is not None else f"  {way:18} (valgrind failed)")
    if args.venv:
        self_times(dict(spec.partition("=")[::2] for spec in args.venv), args.reps)
    return 0


if __name__ == "__main__":
    sys.exit(main())

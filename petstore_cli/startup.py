"""The cyclic garbage collector during start-up, through its documented settings (:mod:`gc`).

Importing the libraries a command runs allocates hundreds of thousands of objects that live as long as the process
(modules, classes, functions, pydantic's validators); with the default thresholds the collector walks them again
and again while they are being made (~80M instructions of a one-shot ``petstore run -c /list``, by callgrind). The
program raises the youngest generation's threshold while it imports (:func:`begin`) and, once the command's modules
are in, moves everything made so far out of the collector's sight (``gc.freeze()``, as the documentation suggests
for a process that has finished its set-up) and puts the thresholds back (:func:`started`), so that a long-running
face collects as any program does.
"""

from __future__ import annotations

import gc

__all__ = ["begin", "started"]

#: Allocations between two collections of the youngest generation while the program imports (the default: 700).
START_THRESHOLD = 50_000

_saved: list[tuple[int, int, int]] = []


def begin() -> None:
    """Collect rarely while the command's modules are imported (the program itself only: see :func:`started`)."""
    if not _saved:
        _saved.append(gc.get_threshold())
        gc.set_threshold(START_THRESHOLD, *_saved[0][1:])


def started() -> None:
    """The command's modules are in: freeze what start-up made and collect as usual from here on (once; nothing
    when :func:`begin` was not called, as for ``main(argv)`` called in-process)."""
    if _saved:
        gc.freeze()
        gc.set_threshold(*_saved.pop())

"""How the pets table's columns share the terminal's width (pure: testable without a screen).

Fixed columns (id, category, status) are as wide as their widest value loaded (or their
label), up to a cap; the fill column (name) takes what is left. When the fill column would
get less than its minimum, columns give way in their ``give_way`` order (category first,
then id); status and name never do.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

from petstore_os.records import record

Justify = Literal["left", "right"]


@record
class ColumnSpec:
    """A column: its label, the key of its cells, how values sit, and how it sizes."""

    label: str
    key: str
    justify: Justify = "left"
    max_width: int = 20
    fill: bool = False
    give_way: int = 0  # 0: always shown; else hidden in this order (1 first) when space runs out
    fill_min: int = 10
    min_width: int = 0  # at least this wide whatever is loaded (a status column fits every status)


@record
class Placed:
    """A column as laid out: ``spec``, its index among the specs, and its width in cells (padding excluded)."""

    spec: int
    width: int
    justify: Justify


def fixed_width(spec: ColumnSpec, widest: int) -> int:
    return min(max(len(spec.label), spec.min_width, widest), max(spec.max_width, len(spec.label)))


def layout(specs: Sequence[ColumnSpec], widest: Mapping[str, int], width: int, *, padding: int = 1) -> list[Placed]:
    """The columns shown in ``width`` cells, in order, with their widths."""
    shown = list(range(len(specs)))
    sizes = {i: fixed_width(spec, widest.get(spec.key, 0)) for i, spec in enumerate(specs) if not spec.fill}
    droppable = sorted((spec.give_way, i) for i, spec in enumerate(specs) if spec.give_way)
    while True:
        used = sum(sizes[i] + 2 * padding for i in shown if i in sizes)
        fills = [i for i in shown if specs[i].fill]
        left = width - used - 2 * padding * len(fills)
        room = left // len(fills) if fills else left
        fits = all(room >= specs[i].fill_min for i in fills) if fills else left >= 0
        if fits or not droppable:
            break
        shown.remove(droppable.pop(0)[1])
    return [Placed(i, sizes[i] if i in sizes else max(room, 1), specs[i].justify) for i in shown]

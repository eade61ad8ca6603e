"""Which loaded rows the pets table shows, and in what order: filter-as-you-type and sort by column
(pure: testable without a screen). k9s-like: the filter matches any cell, case-insensitively; a sort
key sorts by that column, again reverses it."""

from __future__ import annotations

from collections.abc import Sequence

from petstore_os.records import record, replace

#: Sortable columns: the table's column keys, in the order of the cells.
COLUMNS = ("id", "name", "category", "status")
#: Columns sorted as numbers (a cell that is not one sorts after those that are).
NUMERIC = frozenset({"id", "category"})


@record
class RowView:
    """The filter text and the sort (a column key, or None: as loaded)."""

    text: str = ""
    sort: str | None = None
    reverse: bool = False

    @property
    def active(self) -> bool:
        return bool(self.text.strip()) or self.sort is not None

    def sorted_by(self, column: str) -> RowView:
        """Sort by ``column``; by the same column again: the other way round."""
        if self.sort == column:
            return replace(self, reverse=not self.reverse)
        return replace(self, sort=column, reverse=False)

    def describe(self) -> str:
        """What the info line says of the view ("" when none)."""
        parts = []
        if self.text.strip():
            parts.append(f"filter “{self.text.strip()}”")
        if self.sort is not None:
            parts.append(f"sorted by {self.sort} {'▼' if self.reverse else '▲'}")
        return " · ".join(parts)


def _sort_key(column: str, value: str) -> tuple[int, int, str]:
    if column in NUMERIC:
        try:
            return (0, int(value), "")
        except ValueError:
            return (1, 0, value.casefold())
    return (0, 0, value.casefold())


def shown_keys(rows: Sequence[tuple[str, Sequence[str]]], view: RowView) -> list[str]:
    """The keys of ``rows`` (key, cell texts in :data:`COLUMNS` order) the view shows, in its order."""
    needle = view.text.strip().casefold()
    kept = [(key, cells) for key, cells in rows if not needle or any(needle in cell.casefold() for cell in cells)]
    if view.sort is not None:
        index = COLUMNS.index(view.sort)
        kept.sort(key=lambda row: _sort_key(view.sort or "", row[1][index]), reverse=view.reverse)
    return [key for key, _ in kept]


def row_tsv(cells: Sequence[str]) -> str:
    """A row as one tab-separated line (id, name, category, status), for the clipboard."""
    return "\t".join(cell.replace("\t", " ").replace("\n", " ") for cell in cells)

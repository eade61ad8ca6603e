"""Literal text for widgets, importable before the libraries (the first frame needs it).

Only Rich, the sanitizer and the style names: no pydantic models, no client. The pets'
rows are made here from their cells (:func:`pet_row_texts`), so a row fetched before the
session (:class:`tui.preview.Preview`) and one from the session (:func:`tui.render.pet_row`)
are the same.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from rich.text import Text

from bot_commands.sanitize import clip, visible
from bot_commands.styles import STYLES

#: Longest name kept in a table cell (the table cuts it to its column with an ellipsis).
NAME_CELL_WIDTH = 400
#: Longest status kept in a table cell.
STATUS_CELL_WIDTH = 20


class CellLike(Protocol):
    """A view's cell: ``bot_commands.views.Cell``, or a :class:`tui.preview.PlainCell` from a preview."""

    @property
    def text(self) -> str: ...

    @property
    def style(self) -> str: ...


def literal(value: object, *, width: int | None = None, style: str = "", keep_newlines: bool = False) -> Text:
    """Server data as literal text (visible control chars, optional clipping)."""
    if keep_newlines:
        return Text(visible(str(value), keep_newlines=True), style=style)
    shown = visible(value if isinstance(value, str) else str(value))
    text = Text(clip(shown, width) if width else shown, style=style)
    if width is not None:
        text.no_wrap, text.overflow = True, "ellipsis"
    return text


def pet_row_texts(cells: Sequence[CellLike]) -> tuple[Text, Text, Text, Text]:
    """A pet's cells (id, name, category, status: ``bot_commands.views.pet_cells``) as the table's Texts:
    the name clipped and the status coloured, as in every face."""
    pet_id, name, category, status = cells
    return (
        Text(pet_id.text, justify="right"),
        literal(name.text, width=NAME_CELL_WIDTH),
        Text(category.text, justify="right"),
        Text(clip(visible(status.text), STATUS_CELL_WIDTH), style=STYLES.get(status.style, "")),
    )

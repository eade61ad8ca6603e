"""Service data as Rich ``Text`` for widgets: always literal, never markup.

A thin adapter over the command layer's renderer (:mod:`bot_commands.render`):
one way to make text visible, one clipping rule, one colour per status.
"""

from __future__ import annotations

from rich.text import Text

from bot_commands.render import cell_text
from bot_commands.results import Pet
from bot_commands.views import pet_cells

from .text import literal

__all__ = ["NAME_CELL_WIDTH", "literal", "pet_row"]

#: Longest name kept in a table cell (the table cuts it to its column with an ellipsis).
NAME_CELL_WIDTH = 400


def pet_row(pet: Pet) -> tuple[Text, Text, Text, Text]:
    """Cells of one pet: id, name (clipped), category id, status, styled as in every face."""
    pet_id, name, category, status = pet_cells(pet)
    return (
        Text(pet_id.text, justify="right"),
        literal(name.text, width=NAME_CELL_WIDTH),
        Text(category.text, justify="right"),
        cell_text(status, 20),
    )

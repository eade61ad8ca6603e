"""Service data as Rich ``Text`` for widgets: always literal, never markup.

A thin adapter over the command layer's views (:func:`bot_commands.views.pet_cells`) and
:mod:`tui.text`: one way to make text visible, one clipping rule, one colour per status.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot_commands.views import pet_cells

from .text import NAME_CELL_WIDTH, literal, pet_row_texts

if TYPE_CHECKING:  # pragma: no cover
    from rich.text import Text

    from bot_commands.results import Pet

__all__ = ["NAME_CELL_WIDTH", "literal", "pet_row"]


def pet_row(pet: Pet) -> tuple[Text, Text, Text, Text]:
    """Cells of one pet: id, name (clipped), category id, status, styled as in every face."""
    return pet_row_texts(pet_cells(pet))

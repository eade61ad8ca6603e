"""Turning service data into Rich ``Text``: always literal, never markup.

Server text goes through :func:`bot_commands.sanitize.visible` (control and
escape characters made visible) and into ``Text`` objects, so a pet named
``[b]x[/b]`` or holding an ESC sequence displays those characters.
"""

from __future__ import annotations

import json
from typing import Any

from rich.text import Text

from bot_commands.sanitize import visible

ELLIPSIS = "…"
#: Widest a name may be in a table cell; longer ones are cut with an ellipsis.
NAME_CELL_WIDTH = 40


def clip(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters, marked with an ellipsis when cut."""
    return text if len(text) <= width else text[: max(width - 1, 0)] + ELLIPSIS


def literal(value: Any, *, width: int | None = None, style: str = "", keep_newlines: bool = False) -> Text:
    """Server data as literal text (visible control chars, optional clipping)."""
    text = visible(value if isinstance(value, str) else str(value), keep_newlines=keep_newlines)
    if width is not None:
        text = clip(text, width)
    return Text(text, style=style, no_wrap=width is not None, overflow="ellipsis")


def status_text(status: str) -> Text:
    styles = {"available": "green", "pending": "yellow", "sold": "magenta"}
    return literal(status or "-", width=20, style=styles.get(status, "italic"))


def pet_row(pet: Any) -> tuple[Text, Text, Text, Text]:
    """Cells of one pet: id, name (clipped), category id, status."""
    return (
        Text(str(pet.id), justify="right"),
        literal(pet.name, width=NAME_CELL_WIDTH),
        Text(str(pet.category_id), justify="right"),
        status_text(pet.status_text),
    )


def is_flat_records(data: Any) -> bool:
    """A non-empty list of objects whose values are all scalars."""
    return (
        isinstance(data, list)
        and bool(data)
        and all(isinstance(item, dict) for item in data)
        and all(not isinstance(v, (dict, list)) for item in data for v in item.values())
    )


def record_columns(records: list[dict[str, Any]]) -> list[str]:
    """Column names in first-seen order across all records."""
    seen: dict[str, None] = {}
    for record in records:
        seen.update(dict.fromkeys(record))
    return list(seen)


def pretty_json(data: Any) -> Text:
    return literal(json.dumps(data, indent=2, ensure_ascii=False, sort_keys=False), keep_newlines=True)

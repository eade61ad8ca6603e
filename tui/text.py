"""Literal text for widgets, importable before the libraries (the first frame needs it).

Only Rich and the sanitizer: no pydantic models, no client. :mod:`tui.render` builds the
pets' cells on top of it.
"""

from __future__ import annotations

from rich.text import Text

from bot_commands.sanitize import clip, visible


def literal(value: object, *, width: int | None = None, style: str = "", keep_newlines: bool = False) -> Text:
    """Server data as literal text (visible control chars, optional clipping)."""
    if keep_newlines:
        return Text(visible(str(value), keep_newlines=True), style=style)
    shown = visible(value if isinstance(value, str) else str(value))
    text = Text(clip(shown, width) if width else shown, style=style)
    if width is not None:
        text.no_wrap, text.overflow = True, "ellipsis"
    return text

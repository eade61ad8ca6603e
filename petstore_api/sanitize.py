"""Make untrusted text safe to show in a terminal, keeping it readable.

Control characters (C0, DEL, C1, ESC included) become visible stand-ins,
bidi overrides/isolates and line separators are shown as ``<U+202E>``-style
tags, so no raw escape byte from service data ever reaches the terminal and
nothing can reorder or break a line. Emoji, ZWJ sequences and combining marks
are kept as they are.
"""

from __future__ import annotations

__all__ = ["visible", "clip", "ELLIPSIS"]

ELLIPSIS = "…"

#: Invisible formatting characters that can reorder or split what is shown.
_TAGGED = frozenset(
    [
        0x061C,
        0x200E,
        0x200F,
        0x2028,
        0x2029,
        0xFEFF,
        *range(0x202A, 0x202F),  # LRE RLE PDF LRO RLO
        *range(0x2066, 0x206A),  # LRI RLI FSI PDI
    ]
)


def _build_table() -> dict[int, str]:
    table: dict[int, str] = {c: chr(0x2400 + c) for c in range(0x20)}  # ␀ .. ␟ (ESC -> ␛)
    table[0x7F] = "\u2421"  # ␡
    table.update({c: f"\\x{c:02x}" for c in range(0x80, 0xA0)})  # C1, e.g. CSI -> \x9b
    table.update({c: f"<U+{c:04X}>" for c in _TAGGED})
    return table


_TABLE = _build_table()
_TABLE_KEEP_NEWLINES = {k: v for k, v in _TABLE.items() if k != 0x0A}


def visible(text: object, *, keep_newlines: bool = False) -> str:
    """``text`` with every control/bidi character replaced by a visible stand-in."""
    shown = str(text)
    if shown.isprintable():  # every replaced character is in Cc, Cf, Zl or Zp, which isprintable() excludes
        return shown
    return shown.translate(_TABLE_KEEP_NEWLINES if keep_newlines else _TABLE)


def clip(text: str, width: int) -> str:
    """At most ``width`` characters: longer text ends in an ellipsis."""
    if width < 1:
        return ""
    if len(text) <= width:
        return text
    return text[: width - 1] + ELLIPSIS

"""Make untrusted text safe to show in a terminal, keeping it readable.

Control characters (C0, DEL, C1, ESC included) become visible stand-ins, and every invisible format character
(Unicode category Cf: zero-width spaces and joiners, bidi overrides and isolates, the word joiner, soft hyphens,
tag characters ...) and the line and paragraph separators are shown as ``<U+200B>``-style tags, so no raw escape
byte from service data ever reaches the terminal, nothing can reorder or break a line, and no name hides a
character (``Zero<U+200B>Width``, never a ``ZeroWidth`` that is not what it looks like). Emoji, their ZWJ
sequences and subdivision flags, and combining marks are kept as they are: a zero-width joiner between two
pictographs, and tag characters spelling a flag after U+1F3F4, are part of one visible emoji.
"""

from __future__ import annotations

import re

__all__ = ["ELLIPSIS", "clip", "visible"]

ELLIPSIS = "…"

#: Unicode's format characters (category Cf, as of Unicode 15), every one invisible or reordering: shown as tags.
_FORMAT = (
    0x00AD,
    *range(0x0600, 0x0606),
    0x061C,
    0x06DD,
    0x070F,
    0x0890,
    0x0891,
    0x08E2,
    0x180E,
    *range(0x200B, 0x2010),  # ZWSP ZWNJ ZWJ LRM RLM
    *range(0x202A, 0x202F),  # LRE RLE PDF LRO RLO
    *range(0x2060, 0x2065),  # WJ and the invisible operators
    *range(0x2066, 0x2070),  # LRI RLI FSI PDI and the deprecated format characters
    0xFEFF,
    *range(0xFFF9, 0xFFFC),
    0x110BD,
    0x110CD,
    *range(0x13430, 0x13440),
    *range(0x1BCA0, 0x1BCA4),
    *range(0x1D173, 0x1D17B),
    0xE0001,
    *range(0xE0020, 0xE0080),  # tag characters: invisible ASCII, unless they spell a flag (see _EMOJI)
)


def _build_table() -> dict[int, str]:
    table: dict[int, str] = {c: chr(0x2400 + c) for c in range(0x20)}  # ␀ .. ␟ (ESC -> ␛)
    table[0x7F] = "\u2421"  # ␡
    table.update({c: f"\\x{c:02x}" for c in range(0x80, 0xA0)})  # C1, e.g. CSI -> \x9b
    table.update({c: f"<U+{c:04X}>" for c in (*_FORMAT, 0x2028, 0x2029)})
    return table


_TABLE = _build_table()
_TABLE_KEEP_NEWLINES = {k: v for k, v in _TABLE.items() if k != 0x0A}

#: Emoji and the symbols emoji are built of (Unicode's Extended_Pictographic, in ranges).
_PICTOGRAPH = (
    "\u00a9\u00ae\u203c\u2049\u2122\u2139\u2194-\u21aa\u231a-\u23ff\u24c2\u25aa-\u27bf\u2934\u2935"
    "\u2b05-\u2b55\u3030\u303d\u3297\u3299\U0001f000-\U0001faff"
)
#: The format characters that are part of one visible emoji: a ZWJ between pictographs (after a variation selector
#: or a skin tone too), and the tags spelling a subdivision flag (🏴 + tags + CANCEL TAG).
_EMOJI = re.compile(f"(?<=[{_PICTOGRAPH}\ufe0f])\u200d(?=[{_PICTOGRAPH}])|\U0001f3f4[\U000e0020-\U000e007e]+\U000e007f")


def visible(text: object, *, keep_newlines: bool = False) -> str:
    """``text`` with every control, format and bidi character replaced by a visible stand-in (emoji kept whole)."""
    shown = str(text)
    if shown.isprintable():  # every replaced character is in Cc, Cf, Zl or Zp, which isprintable() excludes
        return shown
    table = _TABLE_KEEP_NEWLINES if keep_newlines else _TABLE
    if "\u200d" not in shown and "\U000e007f" not in shown:
        return shown.translate(table)
    parts, end = [], 0
    for emoji in _EMOJI.finditer(shown):
        parts += [shown[end : emoji.start()].translate(table), emoji.group()]
        end = emoji.end()
    return "".join([*parts, shown[end:].translate(table)])


def clip(text: str, width: int) -> str:
    """At most ``width`` characters: longer text ends in an ellipsis."""
    if width < 1:
        return ""
    if len(text) <= width:
        return text
    return text[: width - 1] + ELLIPSIS

"""Views as text: plain (pipes: no colour, never wrapped), Markdown and HTML (chat bots).

Each renderer makes service text safe for its medium: control characters
visible everywhere; Markdown and HTML specials escaped, so a pet named
``<b>x</b>``, ``[link](http://x)`` or ``*bold*`` shows those characters and
takes no effect.
"""

from __future__ import annotations

import html
import json
import re

from rich.cells import cell_len, get_character_cell_size

from .sanitize import ELLIPSIS, clip, visible
from .views import (
    BlankView,
    CardView,
    Cell,
    ErrorView,
    GroupView,
    JsonView,
    LinesView,
    NoticeView,
    TableView,
    View,
)

__all__ = ["fence", "to_html", "to_markdown", "to_plain"]


def _one(text: str, width: int | None = None) -> str:
    shown = visible(text)
    return clip(shown, width) if width else shown


def _pretty(data: object) -> str:
    return visible(json.dumps(data, indent=2, ensure_ascii=False), keep_newlines=True)


def _error_lines(view: ErrorView) -> list[str]:
    lines = [f"{view.title}: {_one(view.message)}"]
    if view.usage:
        lines.append(f"usage: {_one(view.usage)}")
    if view.hint:
        lines.append(_one(view.hint))
    return lines


# --------------------------------------------------------------------------- plain


def clip_cells(text: str, width: int) -> str:
    """At most ``width`` terminal cells (wide characters count two): longer text ends in an ellipsis."""
    if cell_len(text) <= width:
        return text
    used, end = 0, 0
    for index, char in enumerate(text):
        size = get_character_cell_size(char)
        if used + size > width - 1:
            break
        used, end = used + size, index + 1
    return text[:end] + ELLIPSIS


def _pad(text: str, width: int, *, right: bool) -> str:
    space = " " * max(width - cell_len(text), 0)
    return space + text if right else text + space


def _plain_table(view: TableView, *, whole: bool) -> str:
    if not view.rows:
        return _one(view.empty)
    cells = [
        [
            _one(cell.text) if whole and not col.clipped else clip_cells(_one(cell.text, col.width), col.width)
            for cell, col in zip(row, view.columns, strict=True)
        ]
        for row in view.rows
    ]
    heads = [_one(col.title) for col in view.columns]
    # A column is as wide as its widest cell up to the column's width: a longer (whole) cell runs past it in its
    # own row only, rather than padding every row out to it.
    widths = [
        max([cell_len(h) if view.header else 0, *(min(cell_len(r[i]), col.width) for r in cells)])
        for i, (h, col) in enumerate(zip(heads, view.columns, strict=True))
    ]

    def line(values: list[str]) -> str:
        parts = [_pad(v, w, right=c.align == "right") for v, w, c in zip(values, widths, view.columns, strict=True)]
        return "  ".join(parts).rstrip()

    out = ([line(heads)] if view.header else []) + [line(r) for r in cells]
    return "\n".join(out + ([_one(view.caption)] if view.caption else []))


def to_plain(view: View, *, whole: bool = False) -> str:
    """Plain text: one line per row, no colour, no wrapping (for pipes and ``body`` fallbacks).

    ``whole``: no cell is clipped (piped output never loses a character); else long cells end in an ellipsis.
    """
    if isinstance(view, TableView):
        return _plain_table(view, whole=whole)
    if isinstance(view, CardView):
        width = max((len(label) for label, _ in view.fields), default=0)
        lines = [f"{visible(label).ljust(width)}  {visible(cell.text)}" for label, cell in view.fields]
        return "\n".join(([_one(view.title)] if view.title else []) + lines)
    if isinstance(view, NoticeView):
        return _one(view.text)
    if isinstance(view, ErrorView):
        return "\n".join(_error_lines(view))
    if isinstance(view, JsonView):
        return _pretty(view.data)
    if isinstance(view, LinesView):
        return "\n".join(_one(c.text) for c in view.lines) if view.lines else _one(view.empty)
    if isinstance(view, GroupView):
        return "\n".join(to_plain(part, whole=whole) for part in view.parts)
    assert isinstance(view, BlankView)
    return ""


# --------------------------------------------------------------------------- Markdown

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|~])")


_FENCE = "```"
#: Three backticks in data, broken with zero-width spaces so they cannot end the block they sit in.
_BROKEN_FENCE = "`\u200b`\u200b`"


def fence(text: str) -> str:
    """``text`` in a fenced code block (Markdown, Slack's mrkdwn) that nothing in ``text`` can close."""
    return f"{_FENCE}\n{text.replace(_FENCE, _BROKEN_FENCE)}\n{_FENCE}"


def md_escape(text: str, width: int | None = None) -> str:
    """Service text for Markdown: specials backslash-escaped, ``<``/``&`` as entities, one line."""
    shown = _one(text, width).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MD_SPECIAL.sub(r"\\\1", shown)


def to_markdown(view: View) -> str:
    if isinstance(view, TableView):
        if not view.rows:
            return f"_{md_escape(view.empty)}_"
        head = "| " + " | ".join(md_escape(c.title) for c in view.columns) + " |"
        rule = "|" + "|".join("---:" if c.align == "right" else "---" for c in view.columns) + "|"
        rows = [
            "| "
            + " | ".join(md_escape(cell.text, col.width) for cell, col in zip(row, view.columns, strict=True))
            + " |"
            for row in view.rows
        ]
        caption = [f"\n_{md_escape(view.caption)}_"] if view.caption else []
        return "\n".join([head, rule, *rows, *caption])
    if isinstance(view, CardView):
        lines = [f"**{md_escape(label)}**: {md_escape(cell.text)}" for label, cell in view.fields]
        return "\n".join(([f"**{md_escape(view.title)}**"] if view.title else []) + lines)
    if isinstance(view, NoticeView):
        return md_escape(view.text)
    if isinstance(view, ErrorView):
        return "\n".join(md_escape(line) for line in _error_lines(view))
    if isinstance(view, JsonView):
        return fence(_pretty(view.data))
    if isinstance(view, LinesView):
        return "\n".join(md_escape(c.text) for c in view.lines) if view.lines else f"_{md_escape(view.empty)}_"
    if isinstance(view, GroupView):
        return "\n\n".join(to_markdown(part) for part in view.parts)
    assert isinstance(view, BlankView)
    return ""


# --------------------------------------------------------------------------- HTML


def _h(text: str, width: int | None = None) -> str:
    return html.escape(_one(text, width), quote=True)


def _html_cell(cell: Cell, width: int | None = None) -> str:
    text = _h(cell.text, width)
    return f"<code>{text}</code>" if cell.style == "id" else text


def to_html(view: View) -> str:
    """HTML for chat (Matrix ``formatted_body``): tables as tables, every text escaped."""
    if isinstance(view, TableView):
        if not view.rows:
            return f"<em>{_h(view.empty)}</em>"
        head = "".join(f"<th>{_h(c.title)}</th>" for c in view.columns) if view.header else ""
        body = "".join(
            "<tr>"
            + "".join(f"<td>{_html_cell(cell, col.width)}</td>" for cell, col in zip(row, view.columns, strict=True))
            + "</tr>"
            for row in view.rows
        )
        table = f"<table>{f'<thead><tr>{head}</tr></thead>' if head else ''}<tbody>{body}</tbody></table>"
        return table + (f"<p><em>{_h(view.caption)}</em></p>" if view.caption else "")
    if isinstance(view, CardView):
        rows = "".join(f"<tr><th>{_h(label)}</th><td>{_html_cell(cell)}</td></tr>" for label, cell in view.fields)
        title = f"<p><strong>{_h(view.title)}</strong></p>" if view.title else ""
        return f"{title}<table><tbody>{rows}</tbody></table>"
    if isinstance(view, NoticeView):
        return _h(view.text)
    if isinstance(view, ErrorView):
        first, *rest = _error_lines(view)
        return "<br>".join([f"<strong>{html.escape(first)}</strong>", *(html.escape(r) for r in rest)])
    if isinstance(view, JsonView):
        return f"<pre><code>{html.escape(_pretty(view.data))}</code></pre>"
    if isinstance(view, LinesView):
        return "<br>".join(_h(c.text) for c in view.lines) if view.lines else f"<em>{_h(view.empty)}</em>"
    if isinstance(view, GroupView):
        return "".join(to_html(part) for part in view.parts)
    assert isinstance(view, BlankView)
    return ""

"""Views as Rich renderables, for terminals (chat, ``petstore run`` on a terminal, the TUI's log).

All text from the service goes through :func:`visible` into ``rich.text.Text``
(never markup), so ``[b]x[/b]`` shows literally and no escape byte gets out.
Style names of the views map to colours by :data:`bot_commands.styles.STYLES` (the
TUI's table uses it too).
"""

from __future__ import annotations

import json

from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from .errors import Failure
from .results import Result
from .sanitize import clip, visible
from .styles import STYLES
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
    present,
)

__all__ = ["STYLES", "cell_text", "echo", "render", "render_failure", "safe", "to_rich"]


def safe(value: object, width: int | None = None, style: str = "") -> Text:
    """Untrusted value -> a Text with control characters visible, optionally clipped."""
    text = visible(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))
    return Text(clip(text, width) if width else text, style=style)


def cell_text(cell: Cell, width: int | None = None) -> Text:
    return safe(cell.text, width, STYLES.get(cell.style, ""))


def _table(view: TableView) -> RenderableType:
    if not view.rows:
        return Text(visible(view.empty), style="dim")
    # Text, not str, in every cell: a str would go through markup and emoji parsing.
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, show_header=view.header)
    for column in view.columns:
        table.add_column(safe(column.title), justify=column.align, overflow="fold", no_wrap=column.align == "right")
    for row in view.rows:
        table.add_row(*(cell_text(cell, column.width) for cell, column in zip(row, view.columns, strict=True)))
    if not view.caption:
        return table
    return Group(table, Text(visible(view.caption), style="dim"))


def _card(view: CardView) -> RenderableType:
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column(overflow="fold")
    for label, cell in view.fields:
        grid.add_row(safe(label, 40), cell_text(cell))
    return Group(Text(visible(view.title), style="bold"), grid) if view.title else grid


def _error(view: ErrorView) -> RenderableType:
    line = Text.assemble((f"{view.title}: ", "bold red"), safe(view.message))
    parts: list[RenderableType] = [line]
    if view.usage:
        parts.append(Text(f"usage: {visible(view.usage)}", style="dim"))
    if view.hint:
        parts.append(Text(visible(view.hint), style="dim"))
    return Group(*parts) if len(parts) > 1 else line


def to_rich(view: View) -> RenderableType:
    """The Rich renderable of any view."""
    if isinstance(view, TableView):
        return _table(view)
    if isinstance(view, CardView):
        return _card(view)
    if isinstance(view, NoticeView):
        return safe(view.text, style=STYLES[view.level])
    if isinstance(view, ErrorView):
        return _error(view)
    if isinstance(view, JsonView):
        return Text(visible(json.dumps(view.data, indent=2, ensure_ascii=False), keep_newlines=True))
    if isinstance(view, LinesView):
        if not view.lines:
            return Text(visible(view.empty), style="dim")
        return Group(*(cell_text(cell) for cell in view.lines))
    if isinstance(view, GroupView):
        return Group(*(to_rich(part) for part in view.parts))
    assert isinstance(view, BlankView)
    return Text("")


def render(result: Result, *, prefix: str = "/") -> RenderableType | None:
    """The renderable of ``result`` (None when there is nothing to show, e.g. /sleep)."""
    view = present(result, prefix=prefix).view
    return None if isinstance(view, BlankView) else to_rich(view)


def render_failure(failure: Failure) -> Text:
    """A failure as its one red line (chat and run print this)."""
    return Text(failure.text, style="bold red")


def echo(line: str) -> Text:
    """How a command line is shown when echoed (run --echo, chat transcript)."""
    return Text.assemble(("› ", "dim"), (visible(line), "bold"))

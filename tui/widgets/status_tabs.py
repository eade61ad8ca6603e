"""The status filter tabs: All, Available, Pending, Sold.

One widget that draws its labels and the bar under the active one (Textual's ``Tabs`` is a dozen
widgets, its styles and an animated underline, all built for the first frame). Looks in
``main.tcss`` (its component classes); the bar is Textual's own :class:`~textual.renderables.bar.Bar`.
"""

from __future__ import annotations

from rich.console import Group
from rich.style import Style
from rich.text import Text
from textual import events
from textual.app import RenderResult
from textual.message import Message
from textual.reactive import reactive
from textual.renderables.bar import Bar
from textual.widget import Widget

from ..tabs import TABS, tab_for_status

LABELS = {"all": "All", "available": "Available", "pending": "Pending", "sold": "Sold"}


def tab_spans() -> dict[str, tuple[int, int]]:
    """Each tab's label as (first column, column after it); a column of padding either side."""
    spans, column = {}, 0
    for number, key in enumerate(TABS, 1):
        start = column + 1
        column = start + len(f"{number} {LABELS[key]}")
        spans[key] = (start, column)
        column += 1
    return spans


SPANS = tab_spans()


def tab_at(column: int) -> str | None:
    """The tab whose label (with its padding) is at ``column``; None right of the last."""
    return next((key for key, (start, end) in SPANS.items() if start - 1 <= column <= end), None)


class StatusTabs(Widget):
    """Tabs whose activation asks for a list of one status (None: all).

    Not focusable: keys 1..4 (the screen's bindings) and the mouse switch tabs; focus moves
    between the table and the prompt. Setting :attr:`active` to another tab posts :class:`Changed`."""

    COMPONENT_CLASSES = {"status-tabs--tab", "status-tabs--hover", "status-tabs--active", "status-tabs--bar"}

    #: The active tab's id (a key of :data:`tui.tabs.TABS`).
    active: reactive[str] = reactive("all", init=False)
    #: The tab under the mouse pointer, if any.
    hovered: reactive[str | None] = reactive(None)

    class Changed(Message):
        """The active tab changed (the user picked it, or the screen did)."""

        def __init__(self, status: str | None) -> None:
            super().__init__()
            self.status = status

    @property
    def status(self) -> str | None:
        return TABS.get(self.active)

    def show_status(self, status: str | None) -> None:
        """Make the tab of ``status`` active (its Changed is ignored by equal status)."""
        self.active = tab_for_status(status)

    def watch_active(self, active: str) -> None:
        self.post_message(self.Changed(TABS.get(active)))

    def render(self) -> RenderResult:
        styles = {name: self.get_component_rich_style(f"status-tabs--{name}") for name in ("tab", "hover", "active")}
        labels = Text(no_wrap=True, overflow="crop")
        for number, key in enumerate(TABS, 1):
            shown = "active" if key == self.active else "hover" if key == self.hovered else "tab"
            labels.append(f" {number} {LABELS[key]} ", style=styles[shown])
        bar = self.get_component_rich_style("status-tabs--bar")
        start, end = SPANS[self.active]
        return Group(
            labels,
            Bar(
                highlight_range=(start, end),
                highlight_style=Style.from_color(bar.color),
                background_style=Style.from_color(bar.bgcolor),
            ),
        )

    def on_click(self, event: events.Click) -> None:
        """A click on a label (or the bar under it) picks that tab."""
        picked = tab_at(event.x)
        if picked is not None:
            self.active = picked

    def on_mouse_move(self, event: events.MouseMove) -> None:
        self.hovered = tab_at(event.x)

    def on_leave(self, event: events.Leave) -> None:
        self.hovered = None

"""The chat pane's log: a :class:`~textual.widgets.RichLog` that re-wraps what it holds when its width changes.

A ``RichLog`` renders each entry once, at the width it has when written: after a resize the old
lines stay cut at the old width (and wider than the view, with a horizontal scrollbar), or keep
their narrow wraps on a wider terminal. This one keeps the entries it was given (the newest
:data:`KEEP`) and writes them again at the new width.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from rich.console import RenderableType
from textual import events
from textual.widgets import RichLog

#: Entries kept for re-wrapping (older ones leave the log at the next resize).
KEEP = 2000
#: Lines kept between resizes (RichLog drops the oldest beyond this).
MAX_LINES = 10_000


class ChatLog(RichLog):
    """Log of commands and results, wrapped to its width whatever the width becomes."""

    def __init__(self, *, keep: int = KEEP, **kwargs: Any) -> None:
        super().__init__(wrap=True, markup=False, highlight=False, min_width=20, max_lines=MAX_LINES, **kwargs)
        self._entries: deque[RenderableType] = deque(maxlen=keep)
        #: The content width the lines were wrapped at (0: not laid out yet, RichLog defers the writes).
        self.wrapped_at = 0

    def add(self, renderable: RenderableType) -> None:
        """Write an entry (kept, to be wrapped again on a resize); the view does not scroll here."""
        self._entries.append(renderable)
        self.write(renderable, expand=True, scroll_end=False)

    def on_resize(self, event: events.Resize) -> None:
        width = self.scrollable_content_region.width
        if width <= 0 or width == self.wrapped_at:
            return
        first, self.wrapped_at = not self.wrapped_at, width
        if not first:  # the first size: RichLog writes what waited for it
            self._rewrap()

    def _rewrap(self) -> None:
        self.clear()
        for renderable in self._entries:
            self.write(renderable, expand=True, scroll_end=False)
        self.scroll_end(animate=False, immediate=True, x_axis=False)

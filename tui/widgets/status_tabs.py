"""The status filter tabs: All, Available, Pending, Sold."""

from __future__ import annotations

from textual.message import Message
from textual.widgets import Tab, Tabs

from ..tabs import TABS, tab_for_status

LABELS = {"all": "All", "available": "Available", "pending": "Pending", "sold": "Sold"}


class StatusTabs(Tabs, can_focus=False):
    """Tabs whose activation asks for a list of one status (None: all).

    Not focusable: keys 1..4 and the mouse switch tabs; focus moves between
    the table and the prompt."""

    class Changed(Message):
        """The user picked a tab."""

        def __init__(self, status: str | None) -> None:
            super().__init__()
            self.status = status

    def __init__(self, **kwargs) -> None:
        tabs = [Tab(f"{n} {LABELS[key]}", id=key) for n, key in enumerate(TABS, 1)]
        super().__init__(*tabs, **kwargs)

    @property
    def status(self) -> str | None:
        return TABS.get(self.active or "all")

    def show_status(self, status: str | None) -> None:
        """Make the tab of ``status`` active (its Changed is ignored by equal status)."""
        self.active = tab_for_status(status)

    def on_tabs_tab_activated(self, event: Tabs.TabActivated) -> None:
        event.stop()
        self.post_message(self.Changed(TABS.get(event.tab.id or "all")))

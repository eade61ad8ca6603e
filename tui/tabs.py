"""The status tabs' ids and the filter each lists (light: the first frame shows the tabs)."""

from __future__ import annotations

#: Tab id -> the ``status`` filter it lists (None: every status).
TABS: dict[str, str | None] = {
    "all": None,
    "available": "available",
    "pending": "pending",
    "sold": "sold",
}


def tab_for_status(status: str | None) -> str:
    """The tab showing ``status`` (unknown statuses show under All)."""
    return status if status in TABS else "all"

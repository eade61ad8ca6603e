"""Themes: Textual's built-in ones, and the one last chosen, remembered in a small state file."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from textual.theme import BUILTIN_THEMES


def theme_names() -> list[str]:
    """The themes ``--theme`` and ``[tui] theme`` accept (Textual's built-in ones)."""
    return sorted(BUILTIN_THEMES)


def unknown_theme(name: str) -> str | None:
    """None for a known theme, else the one line that says which are allowed."""
    if name in BUILTIN_THEMES:
        return None
    return f"unknown theme {name!r}; one of: {', '.join(theme_names())}"


class ThemeMemory:
    """``ThemeMemory(path)``: the theme last chosen in the TUI (JSON ``{"theme": ...}``).

    A missing, garbled or unknown entry reads as None; a failed write is ignored (a looks
    preference never stops the TUI)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def load(self) -> str | None:
        try:
            text = self.path.read_text(encoding="utf-8")
        except OSError:  # none yet: the first frame goes on without importing json
            return None
        import json

        try:
            data = json.loads(text)
        except ValueError:
            return None
        theme = data.get("theme") if isinstance(data, dict) else None
        return theme if isinstance(theme, str) and theme in BUILTIN_THEMES else None

    def save(self, theme: str) -> None:
        import json

        with contextlib.suppress(OSError):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_suffix(".tmp")
            tmp.write_text(json.dumps({"theme": theme}) + "\n", encoding="utf-8")
            os.replace(tmp, self.path)

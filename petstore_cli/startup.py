"""Start-up measures of the ``petstore`` program (``main()``): libraries' work it never needs, skipped."""

from __future__ import annotations

import sys


def skip_attrs() -> None:
    """For the TUI's first frame: Rich's pretty-printer (which Textual's RichLog imports) imports
    attrs when installed (aiohttp and matrix-nio install it), ~7 ms, only to print attrs
    classes; nothing the TUI shows is one. Rich falls back to not knowing attrs."""
    if "attr" not in sys.modules:
        sys.modules["attr"] = None  # type: ignore[assignment]

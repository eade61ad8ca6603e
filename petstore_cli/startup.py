"""Start-up measures of the ``petstore`` program (``main()``): libraries' work it never needs, skipped."""

from __future__ import annotations

import sys
from collections.abc import Sequence


def skip_http2(words: Sequence[str]) -> None:
    """Keep ``import httpx`` from loading the HTTP/2 stack (h2, hpack, hyperframe: ~9 ms).

    httpcore imports h2 whenever it is installed (matrix-nio, a dependency, installs it), and
    stands in a class that refuses HTTP/2 when it is not. petstore's client never asks for
    HTTP/2; the Matrix bot's library does, so ``petstore bot ...`` (any command line with the
    word ``bot``) keeps it.
    """
    if "bot" not in words and "h2" not in sys.modules:
        sys.modules["h2"] = None  # type: ignore[assignment]


def skip_attrs() -> None:
    """For the TUI's first frame: Rich's pretty-printer (which Textual's RichLog imports) imports
    attrs when installed (aiohttp and matrix-nio install it), ~7 ms, only to print attrs
    classes; nothing the TUI shows is one. Rich falls back to not knowing attrs."""
    if "attr" not in sys.modules:
        sys.modules["attr"] = None  # type: ignore[assignment]

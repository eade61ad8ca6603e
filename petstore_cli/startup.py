"""Start-up measures of the ``petstore`` program (``main()``): libraries' work it never needs, skipped."""

from __future__ import annotations

import os
import sys
import types
from collections.abc import Sequence


def skip_pydantic_plugins() -> None:
    """Build pydantic validators without looking for pydantic plugins (petstore uses none).

    On the first model it builds, pydantic imports ``importlib.metadata`` (email, zipfile, csv,
    ...) and scans every installed distribution's entry points for plugins: ~9 ms of a
    ~230 ms ``petstore run -c /list``. ``PYDANTIC_DISABLE_PLUGINS=__all__`` skips the scan but
    not the import, so the plugin loader is replaced by one that finds none. Anyone who sets
    ``PYDANTIC_DISABLE_PLUGINS`` themselves (an empty value: load them all) keeps pydantic's own.
    """
    if "PYDANTIC_DISABLE_PLUGINS" in os.environ or "pydantic.plugin._loader" in sys.modules:
        return
    loader = types.ModuleType("pydantic.plugin._loader")
    loader.get_plugins = lambda: ()  # type: ignore[attr-defined]
    sys.modules["pydantic.plugin._loader"] = loader


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

"""The views' style names and their colours (Rich style strings), light: imports nothing.

Views name styles (``id``, ``status.sold``, ``dim`` ...); the Rich renderer and the TUI's
table map them here, once. The TUI's first frame may import this module.
"""

from __future__ import annotations

__all__ = ["STYLES"]

STYLES = {
    "id": "cyan",
    "status.available": "green",
    "status.pending": "yellow",
    "status.sold": "magenta",
    "status.unknown": "dim italic",
    "status.none": "dim",
    "dim": "dim",
    "bold": "bold",
    "production": "bold red",
    "env": "green",
    "info": "",
    "success": "green",
    "warning": "yellow",
    "error": "bold red",
}

"""Prompt history shared by the faces (``petstore chat`` and the TUI prompt), kept across runs.

One file in prompt_toolkit's ``FileHistory`` format, so the chat (prompt_toolkit) and the
TUI (this reader/appender) read and write the same history::

    <blank line>
    # 2026-11-23 04:49:30.123456
    +/list sold
    +/add "Rex"

A multi-line entry has each of its lines prefixed with ``+``. A missing or garbled file reads
as empty (garbled lines are skipped); the file is private (mode 0600, an older one tightened). Lines that carry a
secret (``/key sk-...``, ``api_key=...``) are never written.
"""

from __future__ import annotations

import os
import re
from datetime import datetime
from pathlib import Path

from petstore_os import open_private

__all__ = ["PromptHistory", "is_secret", "HISTORY_FILE"]

#: The history file's name in the data dir.
HISTORY_FILE = "history"
#: Commands whose arguments are secrets (none today; kept out should one come).
SECRET_COMMANDS = frozenset({"key", "apikey", "api-key", "api_key", "token", "login", "password"})
_SECRET_WORDS = re.compile(
    r"(api[_-]?key|token|password|secret)\s*[=:]|\bsk-[A-Za-z0-9_-]{6,}|\bbearer\s+\S+|PETSTORE_API_KEY", re.IGNORECASE
)


def is_secret(line: str) -> bool:
    """True for a line that must not be kept: a key command, or a key-like value."""
    words = line.strip().split(maxsplit=1)
    if words and words[0].lstrip("/").lower() in SECRET_COMMANDS:
        return True
    return bool(_SECRET_WORDS.search(line))


class PromptHistory:
    """``PromptHistory(path)``: ``load()`` the entries (oldest first), ``append(line)`` one."""

    def __init__(self, path: Path, *, limit: int = 1000) -> None:
        self.path = path
        self.limit = limit

    def load(self) -> list[str]:
        """The entries, oldest first (the last ``limit``); [] when the file is missing or unreadable."""
        try:
            text = self.path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return []
        entries: list[str] = []
        lines: list[str] = []
        for raw in text.splitlines():
            if raw.startswith("+"):
                lines.append(raw[1:])
            elif lines:  # a comment, a blank or a garbled line ends the entry
                entries.append("\n".join(lines))
                lines = []
        if lines:
            entries.append("\n".join(lines))
        return entries[-self.limit :]

    def append(self, line: str) -> bool:
        """Add one entry at the end; False when it was not written (blank, secret, or an OS error)."""
        if not line.strip() or is_secret(line):
            return False
        body = "".join(f"+{part}\n" for part in line.split("\n"))
        entry = f"\n# {datetime.now()}\n{body}"
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with os.fdopen(open_private(self.path), "a", encoding="utf-8") as out:
                out.write(entry)
        except OSError:
            return False
        return True

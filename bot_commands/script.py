"""Scripts of slash commands: one command a line, ``#`` comments and blank lines skipped.

Line numbers are kept so a failing command (or ``/expect``) can name its line.
``$last`` and ``/sleep``/``/expect`` are handled by the session like any line.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["HistoryEntry", "parse_script", "read_script", "command_word", "is_expect", "history_script"]

HEADER = "# petstore script, saved by /history save; replay with: petstore run FILE"


@dataclass(frozen=True)
class HistoryEntry:
    """One executed line; ``ok`` is False when the command failed."""

    line: str
    ok: bool = True
    command: str = ""


def parse_script(text: str | Iterable[str]) -> list[tuple[int, str]]:
    """``(line number, command)`` for every line that is not blank or a comment."""
    lines = text.splitlines() if isinstance(text, str) else [str(t).rstrip("\r\n") for t in text]
    out: list[tuple[int, str]] = []
    for number, raw in enumerate(lines, start=1):
        line = raw.lstrip("\ufeff").strip() if number == 1 else raw.strip()
        if line and not line.startswith("#"):
            out.append((number, line))
    return out


def read_script(path: str | Path) -> list[tuple[int, str]]:
    """Read a UTF-8 script file (raises OSError / UnicodeDecodeError)."""
    return parse_script(Path(path).read_text(encoding="utf-8-sig"))


def command_word(line: str) -> str:
    """The command name of a line, lower-cased and without ``/`` ('' if none)."""
    parts = line.split(maxsplit=1)
    return parts[0].lstrip("/").lower() if parts else ""


def is_expect(line: str) -> bool:
    return command_word(line) == "expect"


def history_script(entries: Sequence[HistoryEntry]) -> list[str]:
    """Lines of a script that replays ``entries``.

    A failed command is kept live only when an ``/expect`` follows it (a demo
    of an error); otherwise it is written as a comment, so the replay is green.
    """
    lines: list[str] = []
    for index, entry in enumerate(entries):
        nxt = entries[index + 1] if index + 1 < len(entries) else None
        if entry.ok or (nxt is not None and nxt.command == "expect"):
            lines.append(entry.line)
        else:
            lines.append(f"# failed: {entry.line}")
    return lines

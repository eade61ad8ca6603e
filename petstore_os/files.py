"""Files that hold data or secrets (databases, keys, audit, history, state, config): mode 0600.

A new file is created 0600 whatever the umask; an existing one that group or others may read is tightened to
0600, with one warning line saying so (it may have been made by an older petstore, or by hand).
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Callable
from pathlib import Path

__all__ = ["PRIVATE_MODE", "Warn", "open_private", "private_database", "read_secret_lines", "tighten"]

PRIVATE_MODE = 0o600
#: Where a warning line goes: a face that owns the terminal (the TUI) collects them instead.
Warn = Callable[[str], None]
_LOOSE = stat.S_IRWXG | stat.S_IRWXO
_APPEND = os.O_WRONLY | os.O_APPEND | os.O_CREAT


def _stderr(line: str) -> None:
    print(f"petstore: warning: {line}", file=sys.stderr)


def open_private(path: str | os.PathLike[str], flags: int = _APPEND, *, warn: Warn | None = None) -> int:
    """``os.open(path, flags)`` for a file that holds data or secrets: created 0600, an existing one tightened.

    The default ``flags`` append (creating the file); add ``os.O_EXCL`` to create only. Returns the descriptor.
    """
    fd = os.open(path, flags, PRIVATE_MODE)
    try:
        _tighten(path, os.fstat(fd).st_mode, lambda: os.fchmod(fd, PRIVATE_MODE), warn)
    except BaseException:
        os.close(fd)
        raise
    return fd


def tighten(path: str | os.PathLike[str], *, warn: Warn | None = None) -> bool:
    """Make an existing file 0600 if group or others may use it (one warning line); False when there is no file."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return False
    _tighten(path, mode, lambda: os.chmod(path, PRIVATE_MODE), warn)
    return True


def private_database(path: str | os.PathLike[str], *, warn: Warn | None = None) -> None:
    """A SQLite database file made private before SQLite opens it: created empty 0600 when there is none, else it and
    its WAL and -shm tightened (SQLite gives the WAL and -shm it creates the database file's mode).

    An existing file is never opened here, only ``stat``-ed and ``chmod``-ed by name: closing any descriptor of a
    file drops every POSIX lock the process holds on it, SQLite's included (they belong to the process, not to a
    connection), and another process closing the database would then delete the WAL under this one's connections.
    A file created here (``O_EXCL``) is a new one, which no connection of this process can have open.
    """
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_MODE)
    except FileExistsError:
        pass
    else:
        try:
            os.fchmod(fd, PRIVATE_MODE)  # whatever the umask
        finally:
            os.close(fd)
    for suffix in ("", "-wal", "-shm"):
        tighten(f"{os.fspath(path)}{suffix}", warn=warn)


def read_secret_lines(path: str | os.PathLike[str], *, warn: Warn | None = None) -> list[tuple[int, str]]:
    """The lines of a file of secrets (keys, one a line) with their line numbers, tightened first.

    Blank lines and lines starting with ``#`` are left out; the others are stripped. Raises ``OSError`` (the file
    is missing or unreadable) and ``UnicodeDecodeError`` (not UTF-8).
    """
    fd = open_private(path, os.O_RDONLY, warn=warn)
    with os.fdopen(fd, encoding="utf-8") as file:
        text = file.read()
    lines = [(number, raw.strip()) for number, raw in enumerate(text.splitlines(), start=1)]
    return [(number, line) for number, line in lines if line and not line.startswith("#")]


def _tighten(path: str | os.PathLike[str], mode: int, chmod: Callable[[], None], warn: Warn | None) -> None:
    if not stat.S_ISREG(mode) or not mode & _LOOSE:
        return
    was = f"{stat.S_IMODE(mode):04o}"
    try:
        chmod()
    except OSError as exc:  # another user's file: say so, and go on
        line = f"{Path(path)} is open to others (mode {was}) and could not be tightened: {exc.strerror or exc}"
    else:
        line = f"tightened {Path(path)} to 0600 (it was {was})"
    (warn or _stderr)(line)

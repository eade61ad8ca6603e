"""Long output through a pager, as pgcli does: ``$PAGER`` (``less -SRXF`` when unset), only at a terminal.

``-S`` keeps long rows whole (scroll sideways), ``-R`` shows colours, ``-X`` leaves the text on the screen after
quitting, ``-F`` quits at once when it all fits. ``PAGER=`` (empty) turns paging off.
"""

from __future__ import annotations

import os
import shutil
import subprocess

__all__ = ["page", "pager_command"]

DEFAULT = "less -SRXF"


def pager_command() -> str | None:
    """The pager to use: ``$PAGER``, else ``less -SRXF`` where less is installed; None for ``PAGER=`` or no pager."""
    value = os.environ.get("PAGER")
    if value is None:
        return DEFAULT if shutil.which("less") else None
    return value.strip() or None


def page(text: str, command: str) -> bool:
    """Show ``text`` through ``command`` (a shell command line, as $PAGER is for git and pydoc); waits for it to
    end. False when it could not be started (the caller prints the text instead)."""
    env = {**os.environ, "LESS": os.environ.get("LESS", "-SRXF")}
    try:
        proc = subprocess.Popen(command, shell=True, stdin=subprocess.PIPE, env=env)
    except OSError:
        return False
    assert proc.stdin is not None
    try:
        with proc.stdin:
            proc.stdin.write(text.encode("utf-8", "replace"))
    except BrokenPipeError:  # quit before reading it all
        pass
    proc.wait()
    return True

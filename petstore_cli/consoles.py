"""Rich consoles for stdout that leave a closed pipe to the entry point (:func:`petstore_cli.main.main`).

Rich answers a closed stdout by exiting with status 1 (``Console.on_broken_pipe``); petstore ends quietly with 0
once the reader has what it wanted (``petstore list | head -1``), the same way for every command.
"""

from __future__ import annotations

import errno
import os

from rich.console import Console

__all__ = ["PipeConsole"]


class PipeConsole(Console):
    """A Console whose write to a closed pipe raises :class:`BrokenPipeError` for the entry point to end quietly."""

    def on_broken_pipe(self) -> None:
        raise BrokenPipeError(errno.EPIPE, os.strerror(errno.EPIPE))

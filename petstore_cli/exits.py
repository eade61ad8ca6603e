"""The program's exit codes: bot_commands.errors' own, restated so that ``petstore --version`` and ``--help``
import nothing of the command layer (tests/test_cli.py keeps them equal)."""

from __future__ import annotations

__all__ = ["EXIT_FAILED", "EXIT_INTERRUPTED", "EXIT_OK", "EXIT_USAGE"]

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
#: Ctrl-C: 128 + SIGINT, as shells report it.
EXIT_INTERRUPTED = 130

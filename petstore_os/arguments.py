"""The command line's shared rules, for the service (``python -m petstore_server``) and the client's faces alike: one
parser class whose errors are one line, and one type for every ``--port``.
"""

from __future__ import annotations

import argparse
from typing import NoReturn

__all__ = ["HIGHEST_PORT", "OneLineParser", "port_number"]

#: The highest TCP port; 0 asks the system for a free one.
HIGHEST_PORT = 65_535


class OneLineParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose usage errors are one line on stderr, exit 2: what was wrong and what is allowed
    (argparse's own message: a bad choice lists the choices), and where the usage is, instead of the usage dumped
    above it. Its subcommand parsers are of this class too (argparse builds them with the parent's class)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message}; {self.prog} --help shows the usage\n")


def port_number(text: str) -> int:
    """A ``--port`` value: a whole number from 0 to 65535 (0: the system picks a free port), or a one-line refusal."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= HIGHEST_PORT:
        raise argparse.ArgumentTypeError(
            f"must be a port number from 1 to {HIGHEST_PORT} (0 picks a free one), not {text!r}"
        )
    return value

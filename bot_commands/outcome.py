"""What came of one line: the one outcome every face consumes.

A failed line carries its :class:`~bot_commands.errors.Failure`, classified by the one table of
:mod:`bot_commands.errors` (kind, title, JSON ``code``, exit code). Faces never classify errors themselves.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from petstore_os.records import record

from .errors import EXIT_OK, EXIT_USAGE, Failure

if TYPE_CHECKING:  # pragma: no cover
    from .registry import Command, Invocation
    from .results import Result

__all__ = ["Outcome", "worst_exit_code"]


@record
class Outcome:
    """One line run: as shown (``$last`` expanded), parsed, and its result or its failure."""

    line: str
    invocation: Invocation | None = None
    result: Result | None = None
    failure: Failure | None = None
    seq: int = 0

    @property
    def ok(self) -> bool:
        return self.failure is None

    @property
    def exit_code(self) -> int:
        return EXIT_OK if self.failure is None else self.failure.exit_code

    @property
    def command(self) -> Command | None:
        return self.invocation.command if self.invocation is not None else None

    @property
    def name(self) -> str:
        """The command's canonical name ('' when the line did not parse)."""
        return self.invocation.command.name if self.invocation is not None else ""


def worst_exit_code(codes: list[int]) -> int:
    """Aggregate exit codes: 2 if any input error, else 1 if any failure, else 0."""
    if not codes:
        return EXIT_OK
    return EXIT_USAGE if EXIT_USAGE in codes else max(codes)

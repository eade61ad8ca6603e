"""Errors raised by the command layer itself (not by the client).

::

    CommandError              base: one human line, ``kind`` and ``exit_code``
    ├── UsageError            the line could not be parsed/validated (exit 2)
    ├── RefusedError          refused before sending (exit 2)
    │   ├── NoMorePages           /more with nothing to continue
    │   ├── ReadOnlyError         a write in a --read-only session
    │   ├── Forbidden             the actor's role does not allow the command
    │   ├── ConfirmationRequired  a write that needs confirming, without a way to confirm
    │   ├── Declined              the user answered "no" to the confirmation
    │   └── NotConfirmable        /confirm with an unknown, expired or used code
    └── ExpectationFailed     an ``/expect`` did not hold (exit 1)

Client errors (``petstore_api.errors.PetStoreError``) pass through unchanged;
:mod:`bot_commands.outcome` classifies every error (its one table).
"""

from __future__ import annotations

__all__ = [
    "CommandError",
    "UsageError",
    "RefusedError",
    "ReadOnlyError",
    "ConfirmationRequired",
    "Declined",
    "ExpectationFailed",
    "Forbidden",
    "NoMorePages",
    "NotConfirmable",
    "one_line",
]


def one_line(text: str) -> str:
    """Collapse whitespace (newlines included) so a message is always one line."""
    return " ".join(str(text).split())


class CommandError(Exception):
    """Base of the command layer's errors: ``str()`` is one line."""

    kind: str = "command"
    exit_code: int = 1

    def __init__(self, message: str) -> None:
        self.message = one_line(message)
        super().__init__(self.message)


class UsageError(CommandError):
    """Bad input: says what is wrong and, when known, the command's usage line.

    ``command`` is the canonical name of the command the line was meant for
    (None when the command itself is unknown).
    """

    kind = "usage"
    exit_code = 2

    def __init__(self, message: str, *, usage: str | None = None, command: str | None = None) -> None:
        self.problem = one_line(message)
        self.usage = usage
        self.command = command
        text = self.problem
        if usage:
            text = f"{text.rstrip('.')}. Usage: {usage}"
        super().__init__(text)


class RefusedError(CommandError):
    """The command was valid but refused before anything was sent."""

    kind = "refused"
    exit_code = 2


class NoMorePages(RefusedError):
    """/more with no next page to fetch."""

    kind = "no_more_pages"


class ReadOnlyError(RefusedError):
    kind = "read_only"


class Forbidden(RefusedError):
    kind = "forbidden"


class ConfirmationRequired(RefusedError):
    kind = "confirmation_required"


class Declined(RefusedError):
    kind = "declined"


class NotConfirmable(RefusedError):
    kind = "not_confirmable"


class ExpectationFailed(CommandError):
    """``/expect`` did not hold; ``expected`` and ``actual`` say what differed."""

    kind = "expectation_failed"
    exit_code = 1

    def __init__(self, *, expected: str, actual: str) -> None:
        self.expected = one_line(expected)
        self.actual = one_line(actual)
        super().__init__(f"expected {self.expected}, got {self.actual}")

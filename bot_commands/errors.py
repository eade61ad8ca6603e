"""Errors raised by the command layer itself (not by the client).

::

    CommandError              base: one human line, ``kind`` and ``exit_code``
    ├── UsageError            the line could not be parsed/validated (exit 2)
    ├── RefusedError          refused before sending (exit 2)
    │   ├── ReadOnlyError         a write in a --read-only session
    │   ├── ConfirmationRequired  a write on production without a way to confirm
    │   └── Declined              the user answered "no" to the confirmation
    └── ExpectationFailed     an ``/expect`` did not hold (exit 1)

Client errors (``petstore_api.errors.PetStoreError``) pass through unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass

from petstore_api.errors import (
    APIError,
    AuthenticationError,
    ConfigError,
    InputError,
    PetStoreError,
    ProtocolError,
    TransportError,
)

__all__ = [
    "CommandError",
    "UsageError",
    "RefusedError",
    "ReadOnlyError",
    "ConfirmationRequired",
    "Declined",
    "ExpectationFailed",
    "one_line",
    "ErrorInfo",
    "error_info",
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


class ConfirmationRequired(RefusedError):
    kind = "confirmation_required"


class Declined(RefusedError):
    kind = "declined"


class ExpectationFailed(CommandError):
    """``/expect`` did not hold; ``expected`` and ``actual`` say what differed."""

    kind = "expectation_failed"
    exit_code = 1

    def __init__(self, *, expected: str, actual: str) -> None:
        self.expected = one_line(expected)
        self.actual = one_line(actual)
        super().__init__(f"expected {self.expected}, got {self.actual}")


@dataclass(frozen=True)
class ErrorInfo:
    """How a face reports an error: the JSON ``error`` object and the exit code."""

    code: str
    message: str
    status: int
    exit_code: int

    def to_json(self) -> dict[str, object]:
        return {"code": self.code, "message": self.message, "status": self.status}


def error_info(exc: BaseException) -> ErrorInfo:
    """Classify any exception a command can end with.

    The service's errors keep its ``code``/``message``/``status``; errors found
    before sending get ``status`` 0 and ``code`` = their kind. Exit codes: 2 for
    input the user must fix (usage, invalid input, refused, config), else 1.
    """
    if isinstance(exc, APIError):
        return ErrorInfo(code=exc.code, message=exc.error.message, status=exc.status, exit_code=1)
    if isinstance(exc, CommandError):
        return ErrorInfo(code=exc.kind, message=str(exc), status=0, exit_code=exc.exit_code)
    if isinstance(exc, PetStoreError):
        code = 2 if isinstance(exc, (InputError, ConfigError)) else 1
        return ErrorInfo(code=exc.kind, message=str(exc), status=0, exit_code=code)
    return ErrorInfo(code="internal", message=one_line(f"internal error: {type(exc).__name__}: {exc}"),
                     status=0, exit_code=1)


def hint_for(exc: BaseException) -> str | None:
    """What the user can do about an error, when there is something to say."""
    if isinstance(exc, AuthenticationError):
        return "Check the API key: PETSTORE_API_KEY, or api_key in the config file."
    if isinstance(exc, TransportError):
        return "Is the service running? Check the base URL (--base-url or PETSTORE_BASE_URL)."
    if isinstance(exc, ProtocolError):
        return "Is the base URL a Pet Store API server (it ends with /v1)?"
    return None

"""Errors: the command layer's own exceptions, and the one table that names every error.

::

    CommandError              base: one human line
    ├── UsageError            the line could not be parsed/validated
    ├── RefusedError          refused before sending
    │   ├── NoMorePages           /more with nothing to continue
    │   ├── ReadOnlyError         a write in a --read-only session
    │   ├── Forbidden             the actor's role does not allow the command
    │   ├── ConfirmationRequired  a write that needs confirming, without a way to confirm
    │   ├── Declined              the user answered "no" to the confirmation
    │   ├── NotConfirmable        /confirm with an unknown, expired or used code
    │   │   └── NotApprovable     /approve or /deny with a code that is not another's waiting request
    │   ├── ApprovalDenied        a second person denied the approval a write asked for
    │   └── ApprovalExpired       nobody approved the write before its request expired
    ├── StillWaiting          the wait for an approval ended (--wait, Ctrl-C) with the request still open
    └── ExpectationFailed     an ``/expect`` did not hold

The client's errors (``petstore_api.errors.PetStoreError``) pass through unchanged. :data:`ERRORS` is the only
statement of what any error is called (its ``kind``, title and JSON ``code``) and which exit code it ends with
(0 ok, 1 failed at the service or an ``/expect``, 2 input the user must fix or a refusal before sending);
:func:`classify` reads it. The classes carry no second copy, and faces never classify errors themselves: they read
the :class:`Failure`.
"""

from __future__ import annotations

from petstore_api.errors import (
    APIError,
    ConfigError,
    ConnectError,
    InputError,
    InsecureTransportError,
    PetStoreError,
    ProtocolError,
    TimeoutError,
    TransportError,
)
from petstore_os.records import field, record

from .sanitize import visible

__all__ = [
    "ERRORS",
    "EXIT_FAILED",
    "EXIT_OK",
    "EXIT_USAGE",
    "CommandError",
    "ApprovalDenied",
    "ApprovalExpired",
    "ConfirmationRequired",
    "Declined",
    "ErrorKind",
    "ExpectationFailed",
    "Failure",
    "Forbidden",
    "NoMorePages",
    "NotApprovable",
    "NotConfirmable",
    "ReadOnlyError",
    "RefusedError",
    "StillWaiting",
    "UsageError",
    "classify",
    "one_line",
]

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def one_line(text: str) -> str:
    """Collapse whitespace (newlines included) so a message is always one line."""
    return " ".join(str(text).split())


class CommandError(Exception):
    """Base of the command layer's errors: ``str()`` is one line."""

    def __init__(self, message: str) -> None:
        self.message = one_line(message)
        super().__init__(self.message)


class UsageError(CommandError):
    """Bad input: says what is wrong and, when known, the command's usage line.

    ``command`` is the canonical name of the command the line was meant for
    (None when the command itself is unknown).
    """

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


class NoMorePages(RefusedError):
    """/more with no next page to fetch."""


class ReadOnlyError(RefusedError):
    """A write in a read-only session."""


class Forbidden(RefusedError):
    """The actor may not run the command here (its role, or a terminal-only command elsewhere)."""


class ConfirmationRequired(RefusedError):
    """A write that needs confirming, where nobody can be asked."""


class Declined(RefusedError):
    """The person asked to confirm a write said no."""


class NotConfirmable(RefusedError):
    """``/confirm`` or ``/cancel`` with a code that waits for nothing (unknown, used, expired, another's)."""


class NotApprovable(NotConfirmable):
    """``/approve`` or ``/deny`` with a code that waits for nothing this person may approve."""


class ApprovalDenied(RefusedError):
    """The second person asked to approve a write denied it (nothing was sent)."""


class ApprovalExpired(RefusedError):
    """A request for approval expired (or was withdrawn) before anyone approved it: nothing was sent."""


class StillWaiting(CommandError):
    """The wait for an approval ended before a decision; the request stays open and may still run."""


class ExpectationFailed(CommandError):
    """``/expect`` did not hold; ``expected`` and ``actual`` say what differed."""

    def __init__(self, *, expected: str, actual: str) -> None:
        self.expected = one_line(expected)
        self.actual = one_line(actual)
        super().__init__(f"expected {self.expected}, got {self.actual}")


# --------------------------------------------------------------------------- the table


@record
class ErrorKind:
    """One row of :data:`ERRORS`: the errors it covers and what they are called.

    ``kind`` is the family faces branch on (``usage``, ``unreachable``, ``not_found``...); ``code`` is the name in
    ``petstore run --json`` and the audit (the kind unless given; a service error's code is the one in the service's
    Error body); ``status`` narrows an :class:`~petstore_api.errors.APIError` row to one HTTP status.
    """

    error: type[BaseException]
    kind: str
    title: str
    exit_code: int
    code: str = ""
    status: int | None = None
    hint: str | None = None

    def covers(self, exc: BaseException) -> bool:
        if not isinstance(exc, self.error):
            return False
        return self.status is None or (isinstance(exc, APIError) and exc.status == self.status)


_UNREACHABLE = "Is the service running? Check the base URL (--base-url or PETSTORE_BASE_URL)."

#: Every error a command can end with, most specific first; the first row that covers an error names it.
ERRORS: tuple[ErrorKind, ...] = (
    ErrorKind(UsageError, "usage", "Usage", EXIT_USAGE),
    ErrorKind(ReadOnlyError, "read_only", "Read-only session", EXIT_USAGE),
    ErrorKind(Forbidden, "forbidden", "Not allowed", EXIT_USAGE),
    ErrorKind(Declined, "declined", "Cancelled", EXIT_USAGE),
    ErrorKind(ConfirmationRequired, "confirmation_required", "Not confirmed", EXIT_USAGE),
    ErrorKind(NotApprovable, "not_approvable", "Nothing to approve", EXIT_USAGE),
    ErrorKind(NotConfirmable, "not_confirmable", "Nothing to confirm", EXIT_USAGE),
    ErrorKind(NoMorePages, "no_more_pages", "No more pages", EXIT_USAGE),
    ErrorKind(ApprovalDenied, "denied", "Denied", EXIT_USAGE),
    ErrorKind(ApprovalExpired, "approval_expired", "Not approved", EXIT_USAGE),
    ErrorKind(RefusedError, "refused", "Not done", EXIT_USAGE),
    ErrorKind(ExpectationFailed, "expectation_failed", "Expectation failed", EXIT_FAILED),
    ErrorKind(StillWaiting, "waiting", "Still waiting", EXIT_FAILED),
    ErrorKind(CommandError, "command", "Error", EXIT_FAILED),
    ErrorKind(APIError, "bad_request", "Rejected by the service", EXIT_FAILED, status=400),
    ErrorKind(
        APIError,
        "auth",
        "Not authorised",
        EXIT_FAILED,
        status=401,
        hint="Check the API key: PETSTORE_API_KEY, api_key in the config file, or the key petstore auth login stored.",
    ),
    ErrorKind(APIError, "not_found", "Not found", EXIT_FAILED, status=404),
    ErrorKind(APIError, "gone", "Operation gone", EXIT_FAILED, status=410),
    ErrorKind(APIError, "rate_limited", "Too many requests", EXIT_FAILED, status=429),
    ErrorKind(APIError, "api", "Service error", EXIT_FAILED),
    ErrorKind(ConnectError, "unreachable", "Service unreachable", EXIT_FAILED, code="connect", hint=_UNREACHABLE),
    ErrorKind(TimeoutError, "unreachable", "Service unreachable", EXIT_FAILED, code="timeout", hint=_UNREACHABLE),
    ErrorKind(TransportError, "unreachable", "Service unreachable", EXIT_FAILED, code="transport", hint=_UNREACHABLE),
    ErrorKind(
        ProtocolError,
        "protocol",
        "Unexpected answer",
        EXIT_FAILED,
        hint="Is the base URL a Pet Store API server (it ends with /v1)?",
    ),
    ErrorKind(InputError, "invalid_input", "Invalid input", EXIT_USAGE),
    ErrorKind(InsecureTransportError, "config", "Configuration", EXIT_USAGE, code="insecure_transport"),
    ErrorKind(ConfigError, "config", "Configuration", EXIT_USAGE),
    ErrorKind(PetStoreError, "error", "Error", EXIT_FAILED),
    ErrorKind(BaseException, "internal", "Internal error", EXIT_FAILED),
)


@record
class Failure:
    """A classified error. ``text`` is the one line a line face prints; all text is one line."""

    kind: str
    title: str
    code: str
    message: str
    exit_code: int
    status: int = 0
    usage: str | None = None
    problem: str = ""
    hint: str | None = None
    detail: str = ""
    error: BaseException | None = field(default=None, compare=False, repr=False)

    @property
    def text(self) -> str:
        """The one line chat and ``run`` print (control characters made visible)."""
        if self.kind == "expectation_failed":
            line = f"expectation failed: {self.message}"
        elif self.kind in ("usage", "internal"):
            line = self.message
        else:
            line = f"error: {self.message}" + (f". {self.hint}" if self.hint else "")
        return visible(one_line(line))

    @property
    def wrote_nothing(self) -> bool:
        """True when nothing can have reached the service (refused, bad input, or the service said no)."""
        return self.exit_code == EXIT_USAGE or (400 <= self.status < 500)

    def to_json(self) -> dict[str, object]:
        """The ``error`` object of ``petstore run --json``."""
        return {"code": self.code, "message": self.detail or self.message, "status": self.status}


def classify(exc: BaseException) -> Failure:
    """Any exception a command can end with -> its :class:`Failure`, named by the first row of :data:`ERRORS`."""
    row = next(r for r in ERRORS if r.covers(exc))
    code, message, status, usage, detail = row.code or row.kind, str(exc), 0, None, ""
    if row.error is BaseException:  # nothing a command should end with: say what it was
        message = one_line(f"internal error: {type(exc).__name__}: {exc}")
    problem = message
    if isinstance(exc, APIError):
        code, status, detail = exc.code, exc.status, exc.error.message
        problem = detail
    elif isinstance(exc, UsageError):
        usage, problem = exc.usage, exc.problem
    return Failure(
        kind=row.kind,
        title=row.title,
        code=code,
        message=message,
        exit_code=row.exit_code,
        status=status,
        usage=usage,
        problem=problem,
        hint=row.hint,
        detail=detail,
        error=exc,
    )

"""What came of one line: the one outcome every face consumes, and the one error table.

:func:`classify` is the only place an exception becomes a kind, a title, a JSON
``code`` and an exit code (0 ok, 1 failed at the service or an ``/expect``,
2 input the user must fix or a refusal before sending). Faces never classify
errors themselves; they read :class:`Failure`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from petstore_api.errors import (
    APIError,
    AuthenticationError,
    ConfigError,
    InputError,
    PetStoreError,
    ProtocolError,
    TransportError,
)

from .errors import (
    CommandError,
    ConfirmationRequired,
    Declined,
    ExpectationFailed,
    Forbidden,
    NoMorePages,
    NotConfirmable,
    ReadOnlyError,
    RefusedError,
    UsageError,
    one_line,
)
from .sanitize import visible

if TYPE_CHECKING:  # pragma: no cover
    from .registry import Command, Invocation
    from .results import Result

__all__ = ["EXIT_OK", "EXIT_FAILED", "EXIT_USAGE", "Failure", "Outcome", "classify", "worst_exit_code"]

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2

#: (exception class, kind, title, exit code), most specific first. APIError is split by status below.
_TABLE: tuple[tuple[type[BaseException], str, str, int], ...] = (
    (UsageError, "usage", "Usage", EXIT_USAGE),
    (ReadOnlyError, "read_only", "Read-only session", EXIT_USAGE),
    (Forbidden, "forbidden", "Not allowed", EXIT_USAGE),
    (Declined, "declined", "Cancelled", EXIT_USAGE),
    (ConfirmationRequired, "confirmation_required", "Not confirmed", EXIT_USAGE),
    (NotConfirmable, "not_confirmable", "Nothing to confirm", EXIT_USAGE),
    (NoMorePages, "no_more_pages", "No more pages", EXIT_USAGE),
    (RefusedError, "refused", "Not done", EXIT_USAGE),
    (ExpectationFailed, "expectation", "Expectation failed", EXIT_FAILED),
    (CommandError, "command", "Error", EXIT_FAILED),
    (TransportError, "unreachable", "Service unreachable", EXIT_FAILED),
    (ProtocolError, "protocol", "Unexpected answer", EXIT_FAILED),
    (InputError, "invalid_input", "Invalid input", EXIT_USAGE),
    (ConfigError, "config", "Configuration", EXIT_USAGE),
    (PetStoreError, "error", "Error", EXIT_FAILED),
)
#: HTTP status -> (kind, title) for the service's errors.
_API_KINDS = {
    400: ("bad_request", "Rejected by the service"),
    401: ("auth", "Not authorised"),
    404: ("not_found", "Not found"),
    410: ("gone", "Operation gone"),
    429: ("rate_limited", "Too many requests"),
}
_HINTS: tuple[tuple[type[BaseException], str], ...] = (
    (AuthenticationError, "Check the API key: PETSTORE_API_KEY, or api_key in the config file."),
    (TransportError, "Is the service running? Check the base URL (--base-url or PETSTORE_BASE_URL)."),
    (ProtocolError, "Is the base URL a Pet Store API server (it ends with /v1)?"),
)


@dataclass(frozen=True, slots=True)
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
        if self.kind == "expectation":
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
    """The one table: any exception a command can end with -> :class:`Failure`."""
    hint = next((text for cls, text in _HINTS if isinstance(exc, cls)), None)
    if isinstance(exc, APIError):
        kind, title = _API_KINDS.get(exc.status, ("api", "Service error"))
        return Failure(
            kind=kind,
            title=title,
            code=exc.code,
            message=str(exc),
            exit_code=EXIT_FAILED,
            status=exc.status,
            hint=hint,
            detail=exc.error.message,
            problem=exc.error.message,
            error=exc,
        )
    for cls, kind, title, exit_code in _TABLE:
        if isinstance(exc, cls):
            code = getattr(exc, "kind", kind)
            usage = exc.usage if isinstance(exc, UsageError) else None
            problem = exc.problem if isinstance(exc, UsageError) else str(exc)
            return Failure(
                kind=kind,
                title=title,
                code=code,
                message=str(exc),
                exit_code=exit_code,
                usage=usage,
                problem=problem,
                hint=hint,
                error=exc,
            )
    message = one_line(f"internal error: {type(exc).__name__}: {exc}")
    return Failure(
        kind="internal",
        title="Internal error",
        code="internal",
        message=message,
        exit_code=EXIT_FAILED,
        problem=message,
        error=exc,
    )


@dataclass(frozen=True, slots=True)
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

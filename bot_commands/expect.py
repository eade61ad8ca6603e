"""``/expect``: assertions about the previous command's outcome, so a demo is also a check.

``ok`` · ``count N`` · ``status S`` · ``name NAME`` · ``error [STATUS|CODE]``.
"""

from __future__ import annotations

import re

from petstore_os.records import record, replace

from .arguments import CompletionContext, positional
from .context import PreviousOutcome
from .errors import ExpectationFailed, Failure
from .parser import show
from .results import OrdersListing, PetCreated, PetDetail, PetList, Result
from .validation import STATUSES, suggest

__all__ = ["KINDS", "USAGE", "ExpectParams", "check", "describe", "evaluate", "what"]

KINDS = ("ok", "count", "status", "name", "error")
USAGE = "/expect ok | count N | status S | name NAME | error [HTTP-STATUS|CODE]"
ERROR_HINTS = (
    "400",
    "401",
    "404",
    "not_found",
    "bad_request",
    "unauthorized",
    "usage",
    "invalid_input",
    "read_only",
    "connect",
    "timeout",
    "protocol",
)


def what(word: str) -> str:
    """Converter of the first word of ``/expect``."""
    value = word.lower()
    if value in KINDS:
        return value
    hint = suggest(value, KINDS)
    maybe = f" (did you mean {hint}?)" if hint else ""
    raise ValueError(f"cannot expect '{show(word)}'{maybe}")


def _values(context: CompletionContext) -> list[str]:
    kind = context.positional[0].lower() if context.positional else ""
    return {"status": list(STATUSES), "error": list(ERROR_HINTS)}.get(kind, [])


@record(kw_only=True)
class ExpectParams:
    """``/expect WHAT [VALUE]``; :func:`check` makes a count's value an int and a known status lower-case."""

    what: str = positional("WHAT", what, required=True, choices=KINDS, help="ok, count, status, name or error")
    value: str | int | None = positional("VALUE", str, greedy=True, choices=_values, help="what to compare with")


def check(params: ExpectParams) -> ExpectParams:
    """Validate (and convert) the value for the kind of expectation; raises ValueError."""
    kind, value = params.what, params.value
    if kind == "ok" and value is not None:
        raise ValueError("/expect ok takes no value")
    if not isinstance(value, str):  # none given (or a count already converted)
        if value is None and kind in ("count", "status", "name"):
            raise ValueError(f"/expect {kind} needs a value")
        return params
    if kind in ("count", "status", "name") and not value:
        raise ValueError(f"/expect {kind} needs a value")
    if kind == "count":
        if not re.fullmatch(r"[0-9]{1,9}", value, re.ASCII):
            raise ValueError(f"count must be a whole number from 0, not '{show(value)}'")
        return replace(params, value=int(value))
    if kind == "status" and value.lower() in STATUSES:
        return replace(params, value=value.lower())
    if kind == "error" and " " in value:
        raise ValueError(f"error takes one HTTP status or code, not '{show(value)}'")
    return params


def describe(kind: str, value: str | int | None) -> str:
    return kind if value is None else f"{kind} {value}"


def evaluate(kind: str, value: str | int | None, outcome: PreviousOutcome | None) -> str:
    """Return what held, or raise ExpectationFailed saying what differed."""
    expected = describe(kind, value)
    if outcome is None:
        raise ExpectationFailed(expected=expected, actual="no previous command to check")
    if kind == "error":
        return _error(None if value is None else str(value), outcome, expected)
    if outcome.failure is not None:
        failure = outcome.failure
        raise ExpectationFailed(expected=expected, actual=f"an error ({_error_label(failure)}): {failure.message}")
    if kind == "ok":
        return expected
    if kind == "count" and isinstance(value, int):
        _count(value, outcome.result, expected)
    elif kind == "status" and isinstance(value, str):
        _status(value, outcome.result, expected)
    elif kind == "name" and isinstance(value, str):
        _name(value, outcome.result, expected)
    else:  # check() gives each kind the value it takes
        raise ValueError(f"cannot expect {expected}")
    return expected


def _error_label(failure: Failure) -> str:
    return f"{failure.status} {failure.code}" if failure.status else failure.code


def _error(value: str | None, outcome: PreviousOutcome, expected: str) -> str:
    failure = outcome.failure
    if failure is None:
        raise ExpectationFailed(expected=expected, actual=f"success ({_kind(outcome.result)})")
    if value is None:
        return expected
    names = {str(failure.status) if failure.status else "", failure.code, failure.kind}
    if value.lower() in {n.lower() for n in names if n}:
        return expected
    raise ExpectationFailed(expected=expected, actual=f"error {_error_label(failure)}: {failure.message}")


def _kind(result: Result | None) -> str:
    if isinstance(result, PetList):
        return f"{len(result.pets)} pets"
    if isinstance(result, (PetCreated, PetDetail)):
        return f"pet {result.pet.id}"
    return type(result).__name__


def _count(value: int, result: Result | None, expected: str) -> None:
    if isinstance(result, PetList):
        got = len(result.pets)
    elif isinstance(result, OrdersListing) and isinstance(result.data, list):
        got = len(result.data)
    else:
        raise ExpectationFailed(expected=expected, actual=f"a {_kind(result)}, which has no count")
    if got != value:
        raise ExpectationFailed(expected=expected, actual=f"count {got}")


def _status(value: str, result: Result | None, expected: str) -> None:
    if isinstance(result, (PetCreated, PetDetail)):
        got = result.pet.status_text or "(none)"
        if got != value:
            raise ExpectationFailed(expected=expected, actual=f"status {got} (pet {result.pet.id})")
        return
    if not isinstance(result, PetList):
        raise ExpectationFailed(expected=expected, actual=f"a {_kind(result)}, which has no status")
    if not result.pets:
        raise ExpectationFailed(expected=expected, actual="no pets")
    others = [p for p in result.pets if p.status_text != value]
    if others:
        shown = ", ".join(f"{p.id} ({p.status_text or 'none'})" for p in others[:5])
        more = " ..." if len(others) > 5 else ""
        raise ExpectationFailed(
            expected=f"every pet {expected}", actual=f"{len(others)} of {len(result.pets)} not {value}: {shown}{more}"
        )


def _name(value: str, result: Result | None, expected: str) -> None:
    if isinstance(result, (PetCreated, PetDetail)):
        if result.pet.name != value:
            raise ExpectationFailed(expected=expected, actual=f"name '{show(result.pet.name)}'")
        return
    if not isinstance(result, PetList):
        raise ExpectationFailed(expected=expected, actual=f"a {_kind(result)}, which has no name")
    if not any(p.name == value for p in result.pets):
        raise ExpectationFailed(expected=f"a pet named '{show(value)}'", actual=f"none among {len(result.pets)} pets")

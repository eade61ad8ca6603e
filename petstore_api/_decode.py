"""Turning replies into results or exceptions: JSON, shapes and Error bodies.

A 2xx body that is not what the spec promises becomes a ProtocolError whose
one line says what was expected and what came; a non-2xx reply becomes the
APIError subclass for its status, with the Error body parsed tolerantly (or
synthesised when the service sent none).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from http import HTTPStatus
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from .errors import APIError, ProtocolError, api_error_for
from .models import ErrorBody, Pet, parse_pets

if TYPE_CHECKING:  # pragma: no cover
    from ._http import Reply

__all__ = ["read_json", "read_pets", "read_pet", "api_error", "describe_json"]

Scrub = Callable[[str], str]

_HINTS = {
    400: "the request was refused as invalid",
    401: "the API key is missing or invalid",
    403: "the API key may not do this",
    404: "no such resource",
    405: "the service does not allow this method here",
    413: "the request body is too large",
    415: "the service did not accept the body format",
    422: "the service could not process the request",
    429: "too many requests, try again later",
}
_MAX_TEXT = 500


def describe_json(value: Any) -> str:
    """A JSON value's kind with an article: 'a JSON object', 'a string', ..."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a JSON array"
    if isinstance(value, dict):
        return "a JSON object"
    return "an unknown value"


def _looks_like_html(reply: Reply) -> bool:
    content_type = reply.headers.get("content-type", "").lower()
    return "html" in content_type or reply.body[:512].lstrip().startswith(b"<")


def _parse(reply: Reply) -> tuple[bool, Any, str]:
    """(ok, value, description of what came when not ok)."""
    try:
        return True, json.loads(reply.body), ""  # the common case first: no header lookups
    except RecursionError:
        return False, None, "JSON nested too deeply"
    except ValueError:
        pass
    if not reply.body.strip():
        return False, None, "an empty body"
    if _looks_like_html(reply):  # a proxy's or portal's page, say
        return False, None, "an HTML page"
    return False, None, "invalid or truncated JSON"


def read_json(reply: Reply, *, label: str, expected: str) -> Any:
    """The reply's JSON value; ProtocolError naming ``expected`` otherwise."""
    ok, value, what = _parse(reply)
    if not ok:
        raise ProtocolError(f"{label}: expected {expected}, got {what}")
    return value


def _field_problem(error: ErrorDetails, *, top: str) -> str:
    """One pydantic error as plain words: 'item 2: id is missing'."""
    loc = list(error.get("loc", ()))
    where = ""
    if loc and isinstance(loc[0], int):
        where = f"item {loc.pop(0)}: "
    name = str(loc[0]) if loc else ""
    kind = error.get("type", "")
    got = describe_json(error.get("input"))
    if not name:
        return f"{where}{top} is {got}, expected an object"
    if kind == "missing":
        return f"{where}{name} is missing"
    if kind.startswith("int") or kind in {"greater_than_equal", "less_than_equal"}:
        return f"{where}{name} is {got if kind.startswith('int') else 'out of range'}, expected a 64-bit integer"
    if kind.startswith("string") or kind == "enum":
        return f"{where}{name} is {got}, expected a string"
    return f"{where}{name} is {got}, which is not allowed"


def _shape_error(exc: ValidationError, *, label: str, expected: str, top: str) -> ProtocolError:
    first = exc.errors(include_url=False)[0]
    return ProtocolError(f"{label}: expected {expected}, but {_field_problem(first, top=top)}")


def read_pets(reply: Reply, *, label: str) -> tuple[list[Pet], list[Any]]:
    """A ``Pets`` array: (parsed pets, the raw list as sent)."""
    expected = "a JSON array of pets"
    value = read_json(reply, label=label, expected=expected)
    if not isinstance(value, list):
        raise ProtocolError(f"{label}: expected {expected}, got {describe_json(value)}")
    try:
        return parse_pets(value), value
    except ValidationError as exc:
        raise _shape_error(exc, label=label, expected=expected, top="the pet") from None


def read_pet(reply: Reply, *, label: str) -> tuple[Pet, dict[str, Any]]:
    """One ``Pet`` object: (parsed pet, the raw object as sent)."""
    expected = "a pet object"
    value = read_json(reply, label=label, expected=expected)
    if not isinstance(value, dict):
        raise ProtocolError(f"{label}: expected {expected}, got {describe_json(value)}")
    try:
        return Pet.model_validate(value), value
    except ValidationError as exc:
        raise _shape_error(exc, label=label, expected=expected, top="the pet") from None


def _synthesised_message(status: int) -> str:
    reason = _phrase(status) or f"HTTP {status}"
    hint = _HINTS.get(status) or ("the service failed, try again later" if status >= 500 else "")
    return f"{reason}: {hint or 'the service sent no error details'}"


def _phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""


def _text(value: Any, scrub: Scrub) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return None
    return scrub(" ".join(value.split())[:_MAX_TEXT])


def _scrub_json(value: Any, scrub: Scrub, depth: int = 0) -> Any:
    """``value`` with ``scrub`` applied to every string in it (too deep: dropped)."""
    if depth > 32:
        return None
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, list):
        return [_scrub_json(v, scrub, depth + 1) for v in value]
    if isinstance(value, dict):
        return {scrub(k): _scrub_json(v, scrub, depth + 1) for k, v in value.items()}
    return value


def error_body(reply: Reply, *, scrub: Scrub) -> ErrorBody:
    """The Error body as sent where usable, with gaps filled from the HTTP status."""
    ok, value, _ = _parse(reply)
    data: dict[str, Any] = value if ok and isinstance(value, dict) else {}
    code = _text(data.get("code"), scrub) or f"http_{reply.status}"
    message = _text(data.get("message"), scrub) or _synthesised_message(reply.status)
    extra = _scrub_json({k: v for k, v in data.items() if k not in {"code", "message", "status"}}, scrub)
    return ErrorBody.model_validate({**extra, "code": code, "message": message, "status": reply.status})


def api_error(reply: Reply, *, label: str, scrub: Scrub) -> APIError:
    """The APIError subclass for the reply's status, carrying its Error body."""
    method, _, path = label.partition(" ")
    return api_error_for(reply.status)(error_body(reply, scrub=scrub), method=method, url=path)

"""The service's wire format: constants, JSON encoding and input validation.

Every validation failure raises :class:`ApiError` whose message names the
offending field or parameter; the app turns it into an Error body.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from typing import Any
from urllib.parse import parse_qsl

__all__ = [
    "CURSOR_PATTERN",
    "ERROR_CODES",
    "INT64_MAX",
    "INT64_MIN",
    "LIMIT_DEFAULT",
    "LIMIT_MAX",
    "LIMIT_MIN",
    "NAME_MAX_LENGTH",
    "STATUSES",
    "ApiError",
    "decode_cursor",
    "dumps",
    "dumps_str",
    "encode_cursor",
    "error_body",
    "fingerprint",
    "parse_limit",
    "parse_new_pet",
    "parse_pet_id",
    "parse_query",
    "parse_status",
]

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
#: Longest accepted pet name, in code points (the spec leaves it open).
NAME_MAX_LENGTH = 200
LIMIT_MIN, LIMIT_MAX, LIMIT_DEFAULT = 1, 100, 20
STATUSES = ("available", "pending", "sold")
_NEW_PET_FIELDS = ("name", "categoryId", "status")

#: The ``code`` of every Error body, by HTTP status.
ERROR_CODES = {
    400: "bad_request",
    401: "unauthorized",
    404: "not_found",
    405: "method_not_allowed",
    413: "payload_too_large",
    415: "unsupported_media_type",
    422: "idempotency_key_reused",
    500: "internal_error",
    503: "service_unavailable",
}

_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False, check_circular=False)
#: Every string this matches is a valid cursor: base64url of an int64 (8 bytes -> 11 characters,
#: the last one carrying 4 bits), so the OpenAPI pattern describes valid cursors exactly.
CURSOR_PATTERN = "^[A-Za-z0-9_-]{10}[AEIMQUYcgkosw048]$"
_CURSOR_RE = re.compile(CURSOR_PATTERN)
_INT_RE = re.compile(r"-?[0-9]{1,19}")


class ApiError(Exception):
    """A request the service refuses: HTTP status, human message, extra headers."""

    def __init__(self, status: int, message: str, *, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers


def dumps(obj: Any) -> bytes:
    """Compact UTF-8 JSON."""
    return _ENCODER.encode(obj).encode()


def dumps_str(text: str) -> str:
    """``text`` as a JSON string, as :func:`dumps` writes a string inside a value."""
    return _ENCODER.encode(text)


def error_body(status: int, message: str) -> bytes:
    return dumps({"code": ERROR_CODES.get(status, "error"), "message": message, "status": status})


def _show(value: str) -> str:
    """A short, escaped rendering of client input for messages."""
    return repr(value[:40] + "..." if len(value) > 40 else value)


def parse_query(raw: bytes, allowed: tuple[str, ...]) -> dict[str, str]:
    """Query parameters as a dict; unknown, repeated or undecodable ones are a 400."""
    if not raw:
        return {}
    try:
        pairs = parse_qsl(raw.decode("latin-1"), keep_blank_values=True, errors="strict", max_num_fields=10)
    except ValueError:
        raise ApiError(400, "query string is malformed") from None
    params: dict[str, str] = {}
    for name, value in pairs:
        if name not in allowed:
            known = ", ".join(allowed) or "none"
            raise ApiError(400, f"unknown query parameter {_show(name)} (allowed: {known})")
        if name in params:
            raise ApiError(400, f"query parameter {name!r} given more than once")
        params[name] = value
    return params


def parse_limit(value: str | None) -> int:
    if value is None:
        return LIMIT_DEFAULT
    if len(value) <= 3 and value.isascii() and value.isdigit() and LIMIT_MIN <= int(value) <= LIMIT_MAX:
        return int(value)
    raise ApiError(400, f"limit must be an integer from {LIMIT_MIN} to {LIMIT_MAX}, got {_show(value)}")


def parse_status(value: str | None) -> str | None:
    if value is None or value in STATUSES:
        return value
    raise ApiError(400, f"status must be one of {', '.join(STATUSES)}, got {_show(value)}")


def encode_cursor(last_id: int) -> str:
    """Opaque, URL-safe token for the page after ``last_id``."""
    return base64.urlsafe_b64encode(last_id.to_bytes(8, "big", signed=True)).decode().rstrip("=")


def decode_cursor(value: str | None) -> int | None:
    """The id a cursor continues after; a string not of the cursor's form is a 400."""
    if value is None:
        return None
    if not _CURSOR_RE.match(value):
        raise ApiError(400, "cursor is invalid; use the URL from the Link header as given")
    return int.from_bytes(base64.urlsafe_b64decode(value + "="), "big", signed=True)


def parse_pet_id(value: str) -> int | None:
    """The int64 a path segment names, or None (such a segment names no pet)."""
    if _INT_RE.fullmatch(value):
        pet_id = int(value)
        if INT64_MIN <= pet_id <= INT64_MAX:
            return pet_id
    return None


def parse_new_pet(body: bytes) -> dict[str, Any]:
    """Validate a NewPet body; returns ``name``, ``category_id``, ``status`` (None when absent)."""
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        raise ApiError(400, "request body is not valid JSON") from None
    if not isinstance(data, dict):
        raise ApiError(400, "request body must be a JSON object (NewPet)")
    for field in data:
        if field not in _NEW_PET_FIELDS:
            raise ApiError(400, f"unknown field {_show(field)} (NewPet has name, categoryId, status)")
    return {
        "name": _name(data),
        "category_id": _category_id(data),
        "status": _status(data),
    }


def _name(data: dict[str, Any]) -> str:
    if "name" not in data:
        raise ApiError(400, "name is required")
    name = data["name"]
    if not isinstance(name, str):
        raise ApiError(400, "name must be a string")
    if not name:
        raise ApiError(400, "name must not be empty")
    if len(name) > NAME_MAX_LENGTH:
        raise ApiError(400, f"name must be at most {NAME_MAX_LENGTH} characters, got {len(name)}")
    try:
        name.encode()
    except UnicodeEncodeError:
        raise ApiError(400, "name must be valid Unicode (no lone surrogates)") from None
    return name


def _category_id(data: dict[str, Any]) -> int:
    if "categoryId" not in data:
        raise ApiError(400, "categoryId is required")
    value = data["categoryId"]
    if type(value) is not int or not INT64_MIN <= value <= INT64_MAX:
        raise ApiError(400, "categoryId must be an integer in the int64 range")
    return value


def _status(data: dict[str, Any]) -> str | None:
    if "status" not in data:
        return None
    status = data["status"]
    if not isinstance(status, str) or status not in STATUSES:
        raise ApiError(400, f"status must be one of {', '.join(STATUSES)}")
    return status


def fingerprint(new_pet: dict[str, Any]) -> str:
    """Digest of a validated NewPet: equal for semantically equal bodies."""
    canonical = json.dumps(new_pet, sort_keys=True, ensure_ascii=True)
    return hashlib.sha256(canonical.encode()).hexdigest()

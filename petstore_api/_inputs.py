"""Checks on what the caller asks for, done before anything is sent.

Each failure is an InputError whose one line names the input and what is
allowed, e.g. ``limit must be an integer from 1 to 100, got 0``.
"""

from __future__ import annotations

import uuid
from typing import Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from .errors import InputError
from .models import INT64_MAX, INT64_MIN, LIMIT_MAX, LIMIT_MIN, NAME_MAX_LENGTH, NewPet, PetStatus

__all__ = ["check_limit", "check_status", "check_pet_id", "build_new_pet", "check_idempotency_key"]

_ALLOWED_STATUS = ", ".join(PetStatus.values())
_WIRE_TO_FIELD = {"categoryId": "category_id"}


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def check_limit(limit: Any) -> int | None:
    if limit is None:
        return None
    if not _is_int(limit) or not LIMIT_MIN <= limit <= LIMIT_MAX:
        raise InputError(
            f"limit must be an integer from {LIMIT_MIN} to {LIMIT_MAX}, got {_shown(limit)}", field="limit"
        )
    return int(limit)


def check_status(status: Any) -> PetStatus | None:
    if status is None or isinstance(status, PetStatus):
        return status
    if isinstance(status, str) and status in PetStatus.values():
        return PetStatus(status)
    raise InputError(f"status must be one of {_ALLOWED_STATUS}, got {_shown(status)}", field="status")


def check_pet_id(pet_id: Any) -> int:
    if not _is_int(pet_id) or not INT64_MIN <= pet_id <= INT64_MAX:
        raise InputError(f"pet id must be a 64-bit integer, got {_shown(pet_id)}", field="pet_id")
    return int(pet_id)


def check_idempotency_key(key: Any) -> str:
    """The given key, or a fresh uuid4 when None."""
    if key is None:
        return str(uuid.uuid4())
    if not isinstance(key, str) or not 1 <= len(key) <= 255 or not all("!" <= c <= "~" for c in key):
        raise InputError(
            f"idempotency key must be 1 to 255 visible ASCII characters, got {_shown(key)}",
            field="idempotency_key",
        )
    return key


def _problem(error: ErrorDetails) -> tuple[str, str]:
    """(field, one-line message) for a NewPet validation error."""
    loc = error.get("loc") or ("",)
    field = _WIRE_TO_FIELD.get(str(loc[0]), str(loc[0]))
    kind = error.get("type", "")
    got = _shown(error.get("input"))
    if kind == "missing":
        return field, f"{field} is required"
    if kind == "string_unicode":
        return field, f"{field} must be valid Unicode text (it holds a lone surrogate)"
    if field == "name":
        return field, f"name must be text of 1 to {NAME_MAX_LENGTH} characters, got {got}"
    if field == "category_id":
        return field, f"category_id must be a 64-bit integer, got {got}"
    if field == "status":
        return field, f"status must be one of {_ALLOWED_STATUS}, got {got}"
    if kind == "extra_forbidden":
        return field, f"unknown field {field!r}; allowed: name, category_id, status"
    return field, f"{field}: {error.get('msg', 'invalid value')}"


def build_new_pet(pet: Any, *, name: Any, category_id: Any, status: Any) -> NewPet:
    """A NewPet from either ``pet`` or the keyword fields (not both)."""
    if pet is not None:
        if any(v is not None for v in (name, category_id, status)):
            raise InputError("pass either a NewPet or name/category_id/status, not both")
        if not isinstance(pet, NewPet):
            raise InputError(f"pet must be a NewPet, got {type(pet).__name__}", field="pet")
        return pet
    given = {"name": name, "category_id": category_id, "status": status}
    fields = {k: v for k, v in given.items() if v is not None}
    try:
        return NewPet(**fields)
    except ValidationError as exc:
        field, message = _problem(exc.errors(include_url=False)[0])
        raise InputError(message, field=field) from None

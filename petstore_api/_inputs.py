"""Checks on what the caller asks for, done before anything is sent.

The rules and their messages are :mod:`petstore_api.validation` (one set for
the client, the command parser and the TUI form).
"""

from __future__ import annotations

import uuid
from typing import Any

from pydantic import ValidationError

import petstore_api.validation as validation

from .errors import InputError
from .models import NewPet, PetStatus

__all__ = ["check_limit", "check_status", "check_pet_id", "build_new_pet", "check_idempotency_key"]


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def check_limit(limit: Any) -> int | None:
    return None if limit is None else validation.check_limit(limit)


def check_status(status: Any) -> PetStatus | None:
    return None if status is None else PetStatus(validation.check_status(status))


def check_pet_id(pet_id: Any) -> int:
    return validation.check_pet_id(pet_id)


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


def build_new_pet(pet: Any, *, name: Any, category_id: Any, status: Any) -> NewPet:
    """A NewPet from either ``pet`` or the keyword fields (not both)."""
    if pet is not None:
        if any(v is not None for v in (name, category_id, status)):
            raise InputError("pass either a NewPet or name/category_id/status, not both")
        if not isinstance(pet, NewPet):
            raise InputError(f"pet must be a NewPet, got {type(pet).__name__}", field="pet")
        return pet
    checked = {
        "name": validation.check_name(name),
        "category_id": validation.check_category_id(category_id),
        "status": check_status(status),
    }
    try:
        return NewPet(**checked)
    except ValidationError as exc:  # the checks above are the model's rules: this is a bug
        raise InputError(f"invalid pet: {exc.errors(include_url=False)[0].get('msg')}") from None

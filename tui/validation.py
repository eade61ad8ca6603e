"""Validation of the add form, mirroring the service (spec section 2, NewPet)."""

from __future__ import annotations

from dataclasses import dataclass

from textual.validation import ValidationResult, Validator

from petstore_api.models import INT64_MAX, INT64_MIN, NAME_MAX_LENGTH, PetStatus


def name_error(value: str) -> str | None:
    """Why ``value`` is not a valid pet name (None: it is)."""
    if not value.strip():
        return "Name is required."
    if len(value) > NAME_MAX_LENGTH:
        return f"Name is at most {NAME_MAX_LENGTH} characters ({len(value)} now)."
    return None


def category_error(value: str) -> str | None:
    """Why ``value`` is not a valid int64 category id (None: it is)."""
    text = value.strip()
    if not text:
        return "Category id is required."
    try:
        number = int(text, 10)
    except ValueError:
        return "Category id must be a whole number."
    if not INT64_MIN <= number <= INT64_MAX:
        return "Category id must fit in 64 bits (int64)."
    return None


def status_error(value: str | None) -> str | None:
    if value in (None, "") or value in PetStatus.values():
        return None
    return f"Status is one of {', '.join(PetStatus.values())}."


@dataclass(frozen=True, slots=True)
class FormValues:
    name: str
    category_id: int
    status: str | None


def form_errors(*, name: str, category: str, status: str | None) -> dict[str, str]:
    """Errors by field name ('name', 'category', 'status'); empty when valid."""
    checks = {"name": name_error(name), "category": category_error(category), "status": status_error(status)}
    return {field: error for field, error in checks.items() if error}


def parse_form(*, name: str, category: str, status: str | None) -> FormValues:
    """Values of a form that :func:`form_errors` found valid."""
    return FormValues(name=name, category_id=int(category.strip(), 10), status=status or None)


class Check(Validator):
    """A Textual validator made from one of the functions above."""

    def __init__(self, check) -> None:
        super().__init__()
        self._check = check

    def validate(self, value: str) -> ValidationResult:
        error = self._check(value)
        return self.failure(error, value) if error else self.success()

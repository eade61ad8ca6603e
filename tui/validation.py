"""Validation of the add form as you type: the command layer's one validation, as Textual validators."""

from __future__ import annotations

from collections.abc import Callable

from textual.validation import ValidationResult, Validator

from bot_commands.validation import check_category_id, check_name, check_status, problem
from petstore_os.records import record


def name_error(value: str) -> str | None:
    return problem(check_name, value)


def category_error(value: str) -> str | None:
    """An empty field is missing, not a malformed number: it says so (and what goes there)."""
    if not value.strip():
        return "category id is required: a whole number"
    return problem(check_category_id, value)


def status_error(value: str | None) -> str | None:
    return None if value in (None, "") else problem(check_status, value)


@record
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
    return FormValues(
        name=name, category_id=check_category_id(category), status=check_status(status) if status else None
    )


class Check(Validator):
    """A Textual validator made from one of the functions above."""

    def __init__(self, check: Callable[[str], str | None]) -> None:
        super().__init__()
        self._check = check

    def validate(self, value: str) -> ValidationResult:
        error = self._check(value)
        return self.failure(error, value) if error else self.success()

"""The one validation of what a user asks for: pet input, page size, ids. One set of messages.

Each check takes a value as typed (text, from a command line or a form) or as
passed in code (an ``int``, a :class:`PetStatus`), and returns it converted, or
raises :class:`InputError` whose one line says what was wrong and what is
allowed. The client, the command parser and the TUI form all use these
(``bot_commands.validation`` re-exports them for the faces).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable

from .errors import InputError
from .models import INT64_MAX, INT64_MIN, LIMIT_MAX, LIMIT_MIN, NAME_MAX_LENGTH, PetStatus
from .sanitize import clip, visible

__all__ = [
    "STATUSES",
    "check_name",
    "check_category_id",
    "check_pet_id",
    "check_limit",
    "check_status",
    "problem",
    "shown",
    "suggest",
]

STATUSES: tuple[str, ...] = PetStatus.values()
_INTEGER = re.compile(r"[+-]?[0-9]+", re.ASCII)
#: Longest digit string worth converting (int64 has 19 digits).
_MAX_DIGITS = 40


def shown(value: object, width: int = 40) -> str:
    """A value quoted for a message: one line, control characters visible, clipped."""
    return clip(visible(value if isinstance(value, str) else repr(value)), width)


def suggest(word: str, options: tuple[str, ...] | list[str]) -> str | None:
    """The closest of ``options`` to ``word`` (did-you-mean), if any is close."""
    matches = difflib.get_close_matches(word.lower(), list(options), n=1, cutoff=0.6)
    return matches[0] if matches else None


def _whole_number(value: object, what: str) -> int:
    field = what.replace(" ", "_")
    if value is None:
        raise InputError(f"{what} is required", field=field)
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise InputError(f"{what} must be a whole number, not {shown(value)}", field=field)
    if isinstance(value, int):
        number = value
    else:
        text = value.strip()
        if not _INTEGER.fullmatch(text):
            raise InputError(f"{what} must be a whole number, not '{shown(value)}'", field=field)
        if len(text) > _MAX_DIGITS:
            raise InputError(f"{what} {shown(text)} is outside the int64 range", field=field)
        number = int(text)
    if not INT64_MIN <= number <= INT64_MAX:
        raise InputError(f"{what} {shown(str(number))} is outside the int64 range", field=field)
    return number


def check_category_id(value: object) -> int:
    """A category id: a whole number within int64."""
    return _whole_number(value, "category id")


def check_pet_id(value: object) -> int:
    """A pet id: a whole number within int64."""
    return _whole_number(value, "pet id")


def check_limit(value: object) -> int:
    """A page size: a whole number from 1 to 100."""
    message = f"limit must be a whole number from {LIMIT_MIN} to {LIMIT_MAX}, not {{}}"
    try:
        number = _whole_number(value, "limit")
    except InputError:
        raise InputError(message.format(_quoted(value)), field="limit") from None
    if not LIMIT_MIN <= number <= LIMIT_MAX:
        raise InputError(message.format(_quoted(value)), field="limit")
    return number


def _quoted(value: object) -> str:
    return f"'{shown(value)}'" if isinstance(value, str) else shown(value)


def check_status(value: object) -> str:
    """One of the three statuses (case-insensitive); returns it lower-cased."""
    if isinstance(value, PetStatus):
        return value.value
    word = value.strip().lower() if isinstance(value, str) else None
    if word in STATUSES:
        return word
    hint = suggest(word, STATUSES) if word else None
    maybe = f" (did you mean {hint}?)" if hint else ""
    raise InputError(f"unknown status {_quoted(value)}{maybe}; use one of {', '.join(STATUSES)}", field="status")


def check_name(value: object) -> str:
    """A pet name: text, not blank, at most NAME_MAX_LENGTH characters; returned as given."""
    if value is None:
        raise InputError("the name is required", field="name")
    if not isinstance(value, str):
        raise InputError(f"the name must be text, not {shown(value)}", field="name")
    if not value.strip():
        raise InputError("the name must not be blank", field="name")
    if len(value) > NAME_MAX_LENGTH:
        raise InputError(
            f"the name is {len(value)} characters long; at most {NAME_MAX_LENGTH} are allowed", field="name"
        )
    if any(0xD800 <= ord(c) <= 0xDFFF for c in value):
        raise InputError("the name must be valid Unicode text (it holds a lone surrogate)", field="name")
    return value


def problem(check: Callable[[str], object], value: str) -> str | None:
    """What ``check`` finds wrong with ``value`` (None: nothing), for forms validating as you type."""
    try:
        check(value)
    except InputError as exc:
        return exc.message
    return None

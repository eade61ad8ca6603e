"""Typed converters for command arguments.

Each takes the word as typed and returns the value, or raises
:class:`ValueError` whose message says what is wrong (the registry adds the
command's usage line).
"""

from __future__ import annotations

import difflib
import math
import re

from petstore_api.models import INT64_MAX, INT64_MIN, LIMIT_MAX, LIMIT_MIN, NAME_MAX_LENGTH, PetStatus

from .parser import show

__all__ = ["limit", "status", "int64", "pet_id", "category_id", "name", "seconds", "suggest", "STATUSES"]

STATUSES: tuple[str, ...] = PetStatus.values()
_INTEGER = re.compile(r"[+-]?[0-9]+", re.ASCII)
_DECIMAL = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)", re.ASCII)
#: Longest digit string worth converting (int64 has 19 digits).
_MAX_DIGITS = 40


def suggest(word: str, options: list[str] | tuple[str, ...]) -> str | None:
    """The closest of ``options`` to ``word`` (did-you-mean), if any is close."""
    matches = difflib.get_close_matches(word.lower(), list(options), n=1, cutoff=0.6)
    return matches[0] if matches else None


def _integer(word: str, what: str) -> int:
    text = word.strip()
    if not _INTEGER.fullmatch(text) or len(text) > _MAX_DIGITS:
        if _INTEGER.fullmatch(text):
            raise ValueError(f"{what} {show(text)} is outside the int64 range")
        raise ValueError(f"{what} must be a whole number, not '{show(word)}'")
    return int(text)


def limit(word: str) -> int:
    """Page size: a whole number from 1 to 100."""
    try:
        value = _integer(word, "limit")
    except ValueError:
        value = None
    if value is None or not LIMIT_MIN <= value <= LIMIT_MAX:
        raise ValueError(f"limit must be a whole number from {LIMIT_MIN} to {LIMIT_MAX}, not '{show(word)}'")
    return value


def status(word: str) -> str:
    """One of the three pet statuses (case-insensitive)."""
    value = word.strip().lower()
    if value in STATUSES:
        return value
    hint = suggest(value, STATUSES)
    maybe = f" (did you mean {hint}?)" if hint else ""
    raise ValueError(f"unknown status '{show(word)}'{maybe}; use one of {', '.join(STATUSES)}")


def int64(word: str, *, what: str = "id") -> int:
    """A whole number within int64."""
    value = _integer(word, what)
    if not INT64_MIN <= value <= INT64_MAX:
        raise ValueError(f"{what} {show(word)} is outside the int64 range")
    return value


def pet_id(word: str) -> int:
    return int64(word, what="pet id")


def category_id(word: str) -> int:
    return int64(word, what="category id")


def name(word: str) -> str:
    """A pet name: not blank, at most NAME_MAX_LENGTH characters."""
    if not word.strip():
        raise ValueError("the name must not be blank")
    if len(word) > NAME_MAX_LENGTH:
        raise ValueError(f"the name is {len(word)} characters long; at most {NAME_MAX_LENGTH} are allowed")
    return word


def seconds(word: str) -> float:
    """A pause in seconds, 0 to 60."""
    text = word.strip()
    value = float(text) if _DECIMAL.fullmatch(text) and len(text) <= _MAX_DIGITS else math.nan
    if not 0 <= value <= 60:
        raise ValueError(f"seconds must be a number from 0 to 60, not '{show(word)}'")
    return value

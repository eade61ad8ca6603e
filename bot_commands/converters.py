"""Typed converters for command arguments.

Each takes the word as typed and returns the value, or raises
:class:`ValueError` whose message says what is wrong (the registry adds the
command's usage line). Pet input goes through the one validation
(:mod:`bot_commands.validation`), so the parser, the TUI form and the client
say the same thing about the same mistake.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import TypeVar

from petstore_api.errors import InputError
from petstore_api.models import PetStatus

from . import validation as v
from .parser import show

__all__ = ["STATUSES", "category_id", "limit", "name", "pet_id", "seconds", "status", "suggest"]

STATUSES = v.STATUSES
suggest = v.suggest
_DECIMAL = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)", re.ASCII)
_MAX_DIGITS = 40
T = TypeVar("T")


def _converter(check: Callable[[str], T]) -> Callable[[str], T]:
    def convert(word: str) -> T:
        try:
            return check(word)
        except InputError as exc:
            raise ValueError(exc.message) from None

    convert.__doc__ = check.__doc__
    return convert


def _status(word: str) -> PetStatus:
    """One of the three statuses, as typed in any case."""
    return PetStatus(v.check_status(word))


limit = _converter(v.check_limit)
status = _converter(_status)
pet_id = _converter(v.check_pet_id)
category_id = _converter(v.check_category_id)
name = _converter(v.check_name)


def seconds(word: str) -> float:
    """A pause in seconds, 0 to 60."""
    text = word.strip()
    value = float(text) if _DECIMAL.fullmatch(text) and len(text) <= _MAX_DIGITS else math.nan
    if not 0 <= value <= 60:
        raise ValueError(f"seconds must be a number from 0 to 60, not '{show(word)}'")
    return value

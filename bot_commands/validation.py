"""What the faces check input with: the client's one validation, re-exported (faces import no petstore_api).

Also the limits a face needs to show or step through (page sizes, name length,
getPet's sunset date), so ``tui/`` takes everything it checks from here.
"""

from __future__ import annotations

from petstore_api.models import LIMIT_DEFAULT, LIMIT_MAX, LIMIT_MIN, NAME_MAX_LENGTH, SUNSET_DATE
from petstore_api.validation import (
    STATUSES,
    check_category_id,
    check_limit,
    check_name,
    check_pet_id,
    check_status,
    problem,
    suggest,
)

__all__ = [
    "LIMIT_DEFAULT",
    "LIMIT_MAX",
    "LIMIT_MIN",
    "NAME_MAX_LENGTH",
    "STATUSES",
    "SUNSET_DATE",
    "check_category_id",
    "check_limit",
    "check_name",
    "check_pet_id",
    "check_status",
    "problem",
    "suggest",
]

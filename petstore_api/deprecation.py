"""Deprecation notices from response headers.

``Deprecation`` (RFC 9745, a structured-field date ``@<unix seconds>``),
``Sunset`` (RFC 8594, an HTTP-date) and ``Link; rel="successor-version"``
are read when present; otherwise the notice falls back on what the spec says
(getPet is removed on 5 December 2030).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, date, datetime
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING

from .links import Links, link_target
from .models import SUNSET_DATE, DeprecationNotice

if TYPE_CHECKING:  # pragma: no cover
    import httpx

__all__ = ["parse_deprecation", "parse_sunset", "notice_from_headers"]

_SF_DATE = re.compile(r"@(-?[0-9]{1,15})")


def parse_deprecation(value: str | None) -> datetime | None:
    """RFC 9745 ``Deprecation: @1735689600`` as an aware datetime; None if absent or unreadable."""
    if not value:
        return None
    match = _SF_DATE.fullmatch(value.strip())
    if match is None:
        return None
    try:
        return datetime.fromtimestamp(int(match.group(1)), tz=UTC)
    except (OverflowError, OSError, ValueError):
        return None


def parse_sunset(value: str | None) -> datetime | None:
    """RFC 8594 ``Sunset`` (HTTP-date) as an aware datetime; None if absent or unreadable."""
    if not value:
        return None
    try:
        when = parsedate_to_datetime(value.strip())
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when is None:
        return None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def notice_from_headers(
    headers: httpx.Headers,
    *,
    operation: str,
    resolve: Callable[[str], str | None],
    links: Links | None = None,
    default_sunset: date = SUNSET_DATE,
) -> DeprecationNotice:
    """Build the notice for ``operation``; ``links``: the response's (httpx's ``Response.links``), whose
    ``successor-version`` is the successor; ``resolve`` turns a link target into an absolute URL."""
    deprecation = headers.get("deprecation")
    sunset = headers.get("sunset")
    successor = link_target(links or {}, "successor-version")
    return DeprecationNotice(
        operation=operation,
        sunset=parse_sunset(sunset) or default_sunset,
        deprecated_since=parse_deprecation(deprecation),
        successor=resolve(successor) if successor else None,
        from_headers=deprecation is not None or sunset is not None,
    )

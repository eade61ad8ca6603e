"""Time budgets and retry rules of the client.

``Timeouts.total`` is a hard deadline over a whole call: every attempt, every
backoff sleep and every byte of every body. ``RetryPolicy`` says how often and
how long to wait between attempts; *which* failures may be retried is decided
by the sender (see :mod:`petstore_api._http`).
"""

from __future__ import annotations

import asyncio
import math
import random
import re
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    import httpx

from petstore_os.records import field, record

__all__ = ["MAX_RESPONSE_BYTES", "Timeouts", "RetryPolicy", "RETRY_STATUSES", "parse_retry_after"]

#: Statuses after which an idempotent request is tried again.
#: Bodies larger than this are refused (a huge body must not eat memory).
MAX_RESPONSE_BYTES = 10 * 1024 * 1024
RETRY_STATUSES = frozenset({429, 502, 503, 504})
_DELTA = re.compile(r"[0-9]{1,10}")


def _check_positive(name: str, value: float | None, *, allow_none: bool = True) -> None:
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise ValueError(f"{name} must be a positive number of seconds, got {value!r}")
    if math.isinf(value) or math.isnan(value):
        raise ValueError(f"{name} must be finite, got {value!r}")


@record
class Timeouts:
    """Seconds allowed per phase (httpx style) and for the whole call (``total``).

    ``None`` switches a limit off. ``total`` covers retries and backoff, and a
    server that trickles bytes slowly cannot stretch it.
    """

    connect: float | None = 5.0
    read: float | None = 10.0
    write: float | None = 10.0
    pool: float | None = 5.0
    total: float | None = 30.0

    def __post_init__(self) -> None:
        for name in ("connect", "read", "write", "pool", "total"):
            _check_positive(name, getattr(self, name))

    def to_httpx(self) -> httpx.Timeout:
        import httpx  # with the connection pool (PetStoreClient's first call), not with the settings

        return httpx.Timeout(connect=self.connect, read=self.read, write=self.write, pool=self.pool)


Sleep = Callable[[float], Awaitable[object]]


@record
class RetryPolicy:
    """How many attempts a call gets and how long to wait between them.

    ``attempts`` counts the first try (1 = never retry). The wait before try
    ``n + 1`` is ``min(backoff_max, backoff * 2 ** (n - 1))``, drawn uniformly
    from ``[0, that]`` when ``jitter`` is on ("full jitter"). A ``Retry-After``
    from the service replaces it; one longer than ``retry_after_cap`` ends the
    call with the service's error instead of waiting. ``sleep`` is injectable
    for tests.
    """

    attempts: int = 3
    backoff: float = 0.25
    backoff_max: float = 4.0
    retry_after_cap: float = 10.0
    jitter: bool = True
    sleep: Sleep = field(default=asyncio.sleep, repr=False, compare=False)

    def __post_init__(self) -> None:
        if isinstance(self.attempts, bool) or not isinstance(self.attempts, int) or self.attempts < 1:
            raise ValueError(f"attempts must be an integer >= 1, got {self.attempts!r}")
        for name in ("backoff", "backoff_max", "retry_after_cap"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < math.inf:
                raise ValueError(f"{name} must be a non-negative number of seconds, got {value!r}")

    @classmethod
    def never(cls) -> RetryPolicy:
        """A policy that makes exactly one attempt."""
        return cls(attempts=1)

    def backoff_delay(self, attempt: int) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (1-based)."""
        ceiling = min(self.backoff_max, self.backoff * 2 ** min(attempt - 1, 60))
        return random.uniform(0.0, ceiling) if self.jitter else ceiling


def parse_retry_after(value: str | None, *, now: datetime | None = None) -> float | None:
    """``Retry-After`` as seconds from ``now``: delta-seconds or an HTTP-date.

    Returns None when absent or unreadable; a date in the past gives 0.
    """
    if value is None:
        return None
    text = value.strip()
    if _DELTA.fullmatch(text):
        return float(text)
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when is None:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    now = now or datetime.now(UTC)
    return max(0.0, (when - now).total_seconds())

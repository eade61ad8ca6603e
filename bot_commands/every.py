"""When a schedule (``/every``) runs: the words people type, parsed once, and the next run after an instant.

Two kinds: an interval (``10m``, ``2h``, ``1d``; at least one minute), counted in elapsed time whatever the
clocks do; and a time of day on some days (``day``, ``weekday``, ``weekend`` or a day's name, ``at HH:MM``) in a
time zone. Around a DST change a time of day follows the clocks: a time the clocks skip (02:30 when they jump
from 02:00 to 03:00) runs as much after the jump as it was after the start of the gap (03:30), a time that
happens twice (when they fall back) runs once, the first time. Pure functions, no clock of their own.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from petstore_os.records import record

__all__ = ["DAY_WORDS", "MAX_INTERVAL_MINUTES", "Every", "parse_every", "split_every"]

#: The longest interval (30 days): beyond it a time of day says what is meant better.
MAX_INTERVAL_MINUTES = 30 * 24 * 60
_UNIT_MINUTES = {"m": 1, "h": 60, "d": 24 * 60}
_INTERVAL = re.compile(r"^(\d{1,6})\s*(m|min|h|d)$", re.IGNORECASE)
_AT = re.compile(r"^([01]?\d|2[0-3]):([0-5]\d)$")
_NAMES = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
#: The day words a time of day takes, and the weekdays (0 is Monday) each means.
DAY_WORDS: dict[str, frozenset[int]] = {
    "day": frozenset(range(7)),
    "weekday": frozenset(range(5)),
    "weekend": frozenset({5, 6}),
    **{name: frozenset({i}) for i, name in enumerate(_NAMES)},
    **{name[:3]: frozenset({i}) for i, name in enumerate(_NAMES)},
}
_FULL = {name[:3]: name for name in _NAMES}
_USAGE = "write every 10m, every 2h, every 1d, every day at 18:00, every weekday at 09:00 or every monday at 08:30"


@record
class Every:
    """A schedule's rhythm: every ``minutes`` (an interval), or at ``at`` on ``days`` (0 is Monday) in a zone."""

    minutes: int | None = None
    days: frozenset[int] = frozenset()
    at: time | None = None
    day_word: str = ""

    @property
    def text(self) -> str:
        """As it would be typed: ``every 10m``, ``every weekday at 09:00`` (parse_every reads it back)."""
        if self.minutes is not None:
            for unit, size in (("d", 24 * 60), ("h", 60)):
                if self.minutes % size == 0:
                    return f"every {self.minutes // size}{unit}"
            return f"every {self.minutes}m"
        assert self.at is not None
        return f"every {self.day_word} at {self.at:%H:%M}"

    def next_after(self, instant: datetime, zone: ZoneInfo) -> datetime:
        """The first run strictly after ``instant`` (aware), in UTC; an interval counts from ``instant``."""
        if self.minutes is not None:
            return (instant + timedelta(minutes=self.minutes)).astimezone(UTC)
        assert self.at is not None
        local_day = instant.astimezone(zone).date()
        for offset in range(-1, 9):  # yesterday's time may still be ahead when a zone's day starts early
            day = local_day + timedelta(days=offset)
            if day.weekday() not in self.days:
                continue
            run = _wall_clock(day, self.at, zone)
            if run > instant:
                return run
        raise AssertionError("a day of the week recurs within 8 days")  # pragma: no cover - days is never empty


def _wall_clock(day: date, at: time, zone: ZoneInfo) -> datetime:
    """``at`` on ``day`` in ``zone`` as a UTC instant: the first of two when the clocks fall back (fold 0); a time
    they skip maps past the jump, by the offset in force before it (fold 0 again)."""
    return datetime.combine(day, at, tzinfo=zone).astimezone(UTC)


def parse_every(words: str) -> Every:
    """``10m``, ``weekday at 09:00`` (with or without a leading ``every``) -> :class:`Every`; ValueError says what
    is allowed."""
    text = " ".join(words.lower().split()).removeprefix("every ").strip()
    interval = _INTERVAL.match(text)
    if interval is not None:
        amount, unit = int(interval[1]), interval[2][0]
        minutes = amount * _UNIT_MINUTES[unit]
        if not 1 <= minutes <= MAX_INTERVAL_MINUTES:
            raise ValueError(f"an interval is 1 minute to 30 days, not '{text}'")
        return Every(minutes=minutes)
    parts = text.split(" ")
    if len(parts) == 3 and parts[1] == "at" and parts[0] in DAY_WORDS:
        at = _AT.match(parts[2])
        if at is None:
            raise ValueError(f"'{parts[2]}' is not a time: use HH:MM on a 24-hour clock, e.g. 09:00 or 18:30")
        word = _FULL.get(parts[0], parts[0])
        return Every(days=DAY_WORDS[parts[0]], at=time(int(at[1]), int(at[2])), day_word=word)
    raise ValueError(f"'{text}' is not a schedule: {_USAGE}")


def split_every(text: str) -> tuple[Every, str]:
    """``weekday at 09:00 /list pending`` -> (its rhythm, ``/list pending``): the command starts at the first
    word that begins with ``/`` or ``!``, or after the interval / the ``at HH:MM``; ValueError otherwise."""
    words = text.split()
    for index, word in enumerate(words):
        if word.startswith(("/", "!")):
            head, rest = words[:index], words[index:]
            break
    else:
        cut = 1 if words and _INTERVAL.match(words[0].lower()) else 3
        head, rest = words[:cut], words[cut:]
    if not rest:
        raise ValueError(f"/every needs a command to run: e.g. /every weekday at 09:00 /list pending ({_USAGE})")
    command = "/" + " ".join(rest).lstrip("/!")
    return parse_every(" ".join(head)), command

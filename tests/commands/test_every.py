"""/every's rhythm: parsing, and the next run after an instant, across DST changes in real time zones."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot_commands.every import DAY_WORDS, Every, parse_every, split_every

#: Zones with DST of an hour (both hemispheres), of half an hour (Lord Howe), at odd offsets (Chatham), none (UTC).
ZONES = ["Europe/Berlin", "America/New_York", "Australia/Sydney", "Australia/Lord_Howe", "Pacific/Chatham", "UTC"]

instants = st.datetimes(min_value=datetime(2020, 1, 1), max_value=datetime(2035, 12, 31), timezones=st.just(UTC))
zones = st.sampled_from(ZONES).map(ZoneInfo)
# Times near the small hours, where the clocks change, far more often than the rest of the day.
times = st.one_of(
    st.builds(time, st.integers(0, 3), st.sampled_from([0, 15, 30, 45, 59])),
    st.builds(time, st.integers(0, 23), st.integers(0, 59)),
)
day_rules = st.builds(
    lambda word, at: Every(days=DAY_WORDS[word], at=at, day_word=word),
    st.sampled_from(["day", "weekday", "weekend", "monday", "sunday"]),
    times,
)
intervals = st.builds(Every, minutes=st.integers(1, 30 * 24 * 60))


def _in_gap(day: datetime, at: time, zone: ZoneInfo) -> bool:
    """Whether ``at`` on ``day``'s date does not exist in ``zone`` (the clocks jump over it)."""
    wall = datetime.combine(day.date(), at, tzinfo=zone)
    return wall.astimezone(UTC).astimezone(zone).replace(tzinfo=None) != wall.replace(tzinfo=None)


@settings(max_examples=400, deadline=None)
@given(rule=day_rules, after=instants, zone=zones, data=st.data())
def test_a_time_of_day_runs_at_that_time_on_those_days_and_nothing_before(
    rule: Every, after: datetime, zone: ZoneInfo, data: st.DataObject
) -> None:
    run = rule.next_after(after, zone)
    assert run > after and run.tzinfo is UTC
    local = run.astimezone(zone)
    assert local.weekday() in rule.days
    assert rule.at is not None
    if local.time().replace(second=0) != rule.at:
        assert _in_gap(local, rule.at, zone), f"{local} is not {rule.at} and that time exists that day"
    # minimal: from any instant between, the next run is the same one
    span = (run - after) // timedelta(microseconds=1)
    between = after + timedelta(microseconds=data.draw(st.integers(0, span - 1)))
    assert rule.next_after(between, zone) == run


@settings(max_examples=300, deadline=None)
@given(rule=day_rules, after=instants, zone=zones)
def test_a_time_of_day_runs_once_a_day_even_when_the_clocks_fall_back(
    rule: Every, after: datetime, zone: ZoneInfo
) -> None:
    first = rule.next_after(after, zone)
    second = rule.next_after(first, zone)
    assert second.astimezone(zone).date() > first.astimezone(zone).date()


@given(rule=intervals, after=instants, zone=zones)
def test_an_interval_counts_elapsed_time_whatever_the_clocks_do(rule: Every, after: datetime, zone: ZoneInfo) -> None:
    assert rule.minutes is not None
    assert rule.next_after(after, zone) - after == timedelta(minutes=rule.minutes)


@given(rule=st.one_of(day_rules, intervals))
def test_the_text_of_a_rhythm_parses_back_to_it(rule: Every) -> None:
    assert parse_every(rule.text) == rule


def test_dst_in_berlin_a_skipped_time_runs_after_the_jump_and_a_doubled_one_once() -> None:
    berlin = ZoneInfo("Europe/Berlin")
    rule = parse_every("day at 02:30")
    spring = rule.next_after(datetime(2026, 3, 29, 0, 0, tzinfo=UTC), berlin)  # 02:00 -> 03:00 that night
    assert spring.astimezone(berlin).strftime("%Y-%m-%d %H:%M %Z") == "2026-03-29 03:30 CEST"
    autumn = rule.next_after(datetime(2026, 10, 24, 23, 0, tzinfo=UTC), berlin)  # 03:00 -> 02:00 that night
    assert autumn.astimezone(berlin).strftime("%Y-%m-%d %H:%M %Z") == "2026-10-25 02:30 CEST"
    assert rule.next_after(autumn, berlin).astimezone(berlin).date().isoformat() == "2026-10-26"


def test_a_weekday_rule_skips_the_weekend() -> None:
    rule = parse_every("weekday at 09:00")
    friday_evening = datetime(2026, 11, 27, 18, 0, tzinfo=UTC)
    assert rule.next_after(friday_evening, ZoneInfo("UTC")) == datetime(2026, 11, 30, 9, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("weekday at 09:00 /list pending", ("every weekday at 09:00", "/list pending")),
        ("day at 18:00 /orders", ("every day at 18:00", "/orders")),
        ("10m /list available", ("every 10m", "/list available")),
        ("90m list", ("every 90m", "/list")),
        ("2h !orders", ("every 2h", "/orders")),
        ("mon at 8:30 /list sold", ("every monday at 08:30", "/list sold")),
        ("1d /orders", ("every 1d", "/orders")),
    ],
)
def test_split_every(text: str, expected: tuple[str, str]) -> None:
    every, command = split_every(text)
    assert (every.text, command) == expected


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("0m /list", "1 minute to 30 days"),
        ("31d /list", "1 minute to 30 days"),
        ("30s /list", "is not a schedule"),
        ("day at 25:00 /list", "is not a time"),
        ("fortnight at 09:00 /list", "is not a schedule"),
        ("10m", "needs a command"),
        ("", "needs a command"),
    ],
)
def test_a_bad_schedule_says_what_is_allowed(text: str, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        split_every(text)

"""config/days.py: "today" is the calendar day in the schedule's time zone, not UTC's."""

from __future__ import annotations

from datetime import UTC, date, datetime
from zoneinfo import ZoneInfo

from config.days import today


def test_today_is_the_day_in_the_schedules_zone() -> None:
    evening_utc = datetime(2026, 12, 1, 20, 0, tzinfo=UTC)  # 04:00 on Dec 2 in Shanghai
    assert today("Asia/Shanghai", evening_utc) == date(2026, 12, 2)
    assert today("America/Los_Angeles", evening_utc) == date(2026, 12, 1)
    assert today("UTC", evening_utc) == date(2026, 12, 1)


def test_today_reads_the_clock_by_default() -> None:
    before = datetime.now(ZoneInfo("Pacific/Kiritimati")).date()  # UTC+14: never behind another zone
    assert today("Pacific/Kiritimati") in (before, date.fromordinal(before.toordinal() + 1))

"""Days of history files: the day a path states, and the latest day an observation can be real."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from scrapers.history.paths import latest_real_day, observation_day


def test_the_latest_real_day_is_tomorrow_by_utc() -> None:
    late_evening = dt.datetime(2026, 12, 31, 23, 30, tzinfo=dt.timezone(dt.timedelta(hours=-10)))
    assert latest_real_day(late_evening) == dt.date(2027, 1, 2)  # 09:30 UTC on Jan 1, plus a day


@pytest.mark.parametrize(
    ("name", "given", "message"),
    [
        ("lambda_vms_2099-12-31.csv", None, r"the day 2099-12-31 \(its name\) is in the future"),
        ("runpod.csv", dt.date(2099, 1, 1), r"the day 2099-01-01 \(--date\) is in the future"),
    ],
)
def test_a_day_in_the_future_is_refused(name: str, given: dt.date | None, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        observation_day(Path(name), given)

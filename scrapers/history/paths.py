"""The days of history files: what a path says when the file does not, and which days can be real.

Dated catalog versions carry the day in their names: `lambda_vms_2026-04-02.csv`
(SkyPilot catalog mirrors), `.../20260818-42/runpod.csv` (dstack gpuhunt versions
`YYYYMMDD-<run>`).

History is what was seen: a day after `latest_real_day()` has not happened yet, and an
observation dated then (2099-12-31, a typo, a clock ahead) is refused, never loaded where it
would stand as the latest price for decades and give `gpuplan backfill` plans for that day.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

# The clocks furthest ahead (UTC+14, Kiribati) are up to a day ahead of the UTC date: a file of a
# tracker there may be dated tomorrow by UTC, never later.
FUTURE_DAYS_ALLOWED = 1

_DAY = re.compile(r"(?<!\d)(\d{4})-?(\d{2})-?(\d{2})(?!\d)")


def day_in_path(path: Path) -> dt.date | None:
    """The first valid calendar day in the file name, else in its parent folders (nearest first)."""
    for part in (path.name, *(parent.name for parent in path.parents)):
        for match in _DAY.finditer(part):
            try:
                return dt.date(*(int(group) for group in match.groups()))
            except ValueError:
                continue
    return None


def latest_real_day(now: dt.datetime | None = None) -> dt.date:
    """The latest day an observation can be dated: the UTC date of `now` (default: the clock) plus
    FUTURE_DAYS_ALLOWED."""
    moment = now or dt.datetime.now(dt.UTC)
    return moment.astimezone(dt.UTC).date() + dt.timedelta(days=FUTURE_DAYS_ALLOWED)


def observation_day(path: Path, given: dt.date | None) -> dt.date:
    """`given` when set, else the day in the path; raises with a clear message when there is none
    or when it is after `latest_real_day()`."""
    day = given if given is not None else day_in_path(path)
    if day is None:
        raise ValueError(f"{path.name}: no date in the file name; pass --date YYYY-MM-DD")
    if day > latest_real_day():
        said = "--date" if given is not None else "its name"
        raise ValueError(f"{path.name}: the day {day} ({said}) is in the future; history is what was seen")
    return day


def midnight_utc(day: dt.date) -> str:
    """The ISO-8601 UTC instant an imported day is stamped with: the files give a day, not a time."""
    return f"{day.isoformat()}T00:00:00Z"

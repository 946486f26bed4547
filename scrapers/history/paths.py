"""What a history file's path says when the file itself does not: its observation day.

Dated catalog versions carry the day in their names: `lambda_vms_2026-04-02.csv`
(SkyPilot catalog mirrors), `.../20260818-42/runpod.csv` (dstack gpuhunt versions
`YYYYMMDD-<run>`).
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

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


def observation_day(path: Path, given: dt.date | None) -> dt.date:
    """`given` when set, else the day in the path; raises with a clear message when there is none."""
    if given is not None:
        return given
    day = day_in_path(path)
    if day is None:
        raise ValueError(f"{path.name}: no date in the file name; pass --date YYYY-MM-DD")
    return day


def midnight_utc(day: dt.date) -> str:
    """The ISO-8601 UTC instant an imported day is stamped with: the files give a day, not a time."""
    return f"{day.isoformat()}T00:00:00Z"

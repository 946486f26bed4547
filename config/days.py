"""The day in the schedule's time zone (GPUPLAN_SCHEDULE_TZ): the one rule for "today".

The daily run files its crawls and plans under the day its schedule fires in that zone; so do
`gpuplan refresh`, `crawl`, `digest`, `history` and `backfill`, and whatever asks whether a
partition is current. Timestamps stay UTC everywhere (`observed_at`, `*_at`); only the day that
names a run is local.
"""

from __future__ import annotations

from datetime import date, datetime
from zoneinfo import ZoneInfo


def today(timezone: str, now: datetime | None = None) -> date:
    """The calendar day in `timezone` (an IANA name) at `now` (aware; default: the clock)."""
    zone = ZoneInfo(timezone)
    return (now or datetime.now(zone)).astimezone(zone).date()

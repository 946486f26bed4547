"""The daily partition: one key per calendar day in the schedule's time zone (YYYY-MM-DD)."""

from __future__ import annotations

import dagster as dg

# The month gpuplan started collecting; live crawls only observe the present (see assets/crawls.py),
# so earlier days could only be filled from imported history.
FIRST_DAY = "2026-11-01"


def daily_partitions(timezone: str) -> dg.DailyPartitionsDefinition:
    """Days in `timezone`; today's key exists already (end_offset=1) so the morning run can plan it."""
    return dg.DailyPartitionsDefinition(start_date=FIRST_DAY, timezone=timezone, end_offset=1)

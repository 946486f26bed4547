"""The daily partition: one key per calendar day in the schedule's time zone (YYYY-MM-DD)."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

import dagster as dg
import duckdb

from config import days
from warehouse import daily_plans
from warehouse.engine import connect

# The first day any partition may start on. Live crawls only observe the present (see
# assets/crawls.py); earlier days are filled from imported history (`gpuplan import`), whose oldest
# readable source is dstack's gpuhunt catalog, published by version since 2024 (e.g.
# `v1-20240301`); `gpuplan backfill` also reaches earlier days.
FIRST_DAY = "2024-01-01"

# The backfill policy of every writing asset a backfill selects (the `backfill_plans` job): a range
# of days runs as one run, because plan changes compare with the previous day, so the days must be
# planned oldest first, after the cheapest plans of every day exist. One run also opens the writer
# once per step rather than once per day and step.
SINGLE_RUN = dg.BackfillPolicy.single_run()


def first_partition_day(warehouse: Path, timezone: str, today: date | None = None) -> date:
    """The day the partitions start: the first day the install has, so that "missing" in the UI
    means a day the install should have and lacks, not every day since 2024.

    That is the warehouse's first day (planned, crawled or imported: a backfill of imported
    history can select every day of it), or yesterday on a new install (a first offline refresh
    replays the day before today); never before FIRST_DAY. A warehouse that cannot be read (an
    older schema, a damaged file) hides nothing: the partitions start at FIRST_DAY.
    """
    floor = date.fromisoformat(FIRST_DAY)
    fallback = (today or days.today(timezone)) - timedelta(days=1)
    if not warehouse.exists():
        return max(fallback, floor)
    try:
        with connect.reader(warehouse) as con:
            first = daily_plans.first_day(con)
    except (RuntimeError, OSError, duckdb.Error):  # connect's errors are RuntimeErrors
        return floor
    return max(min(first, fallback) if first else fallback, floor)


def daily_partitions(timezone: str, first_day: date | None = None) -> dg.DailyPartitionsDefinition:
    """Days in `timezone` from `first_day` (None: FIRST_DAY); today's key exists already
    (end_offset=1) so the morning run can plan it."""
    start = first_day.isoformat() if first_day else FIRST_DAY
    return dg.DailyPartitionsDefinition(start_date=start, timezone=timezone, end_offset=1)


def partition_days(context: dg.AssetExecutionContext | dg.AssetCheckExecutionContext) -> list[date]:
    """The days a run covers, oldest first: its partition, or every day of its partition range.

    A backfill of assets with `BackfillPolicy.single_run()` runs a whole range at once.
    """
    keys = context.partition_key_range
    first, last = date.fromisoformat(keys.start), date.fromisoformat(keys.end)
    return [first + timedelta(days=offset) for offset in range((last - first).days + 1)]

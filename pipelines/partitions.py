"""The daily partition: one key per calendar day in the schedule's time zone (YYYY-MM-DD)."""

from __future__ import annotations

from datetime import date, timedelta

import dagster as dg

# The first day the partitions offer. Live crawls only observe the present (see assets/crawls.py);
# earlier days are filled from imported history (`gpuplan import`), whose oldest readable source is
# dstack's gpuhunt catalog, published by version since 2024 (e.g. `v1-20240301`); the observations
# file starts 2026-02-11, the SkyPilot catalogs in 2026-04. About a thousand days is well within
# what Dagster's partition views handle; `gpuplan backfill` also reaches earlier days.
FIRST_DAY = "2024-01-01"

# The backfill policy of every writing asset a backfill selects (the `backfill_plans` job): a range
# of days runs as one run, because plan changes compare with the previous day, so the days must be
# planned oldest first, after the cheapest plans of every day exist. One run also opens the writer
# once per step rather than once per day and step.
SINGLE_RUN = dg.BackfillPolicy.single_run()


def daily_partitions(timezone: str) -> dg.DailyPartitionsDefinition:
    """Days in `timezone`; today's key exists already (end_offset=1) so the morning run can plan it."""
    return dg.DailyPartitionsDefinition(start_date=FIRST_DAY, timezone=timezone, end_offset=1)


def partition_days(context: dg.AssetExecutionContext | dg.AssetCheckExecutionContext) -> list[date]:
    """The days a run covers, oldest first: its partition, or every day of its partition range.

    A backfill of assets with `BackfillPolicy.single_run()` runs a whole range at once.
    """
    keys = context.partition_key_range
    first, last = date.fromisoformat(keys.start), date.fromisoformat(keys.end)
    return [first + timedelta(days=offset) for offset in range((last - first).days + 1)]

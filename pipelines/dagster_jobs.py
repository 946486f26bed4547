"""The jobs: the whole graph for one day (the schedule's), and plans over a range of past days.

Both run in one process (the code location's executor, `pipelines.definitions`).
"""

from __future__ import annotations

import dagster as dg

# Every job writes the warehouse, which allows one writing process: the team deployment's run queue
# (deploy/dagster.yaml, tag_concurrency_limits) starts one run with this tag at a time.
WRITES_WAREHOUSE = {"gpuplan/writes": "warehouse"}

daily_refresh = dg.define_asset_job(
    name="daily_refresh",
    selection=dg.AssetSelection.all(),
    tags=WRITES_WAREHOUSE,
    description="Crawl every platform, load the warehouse, and compute the day's plans and changes.",
)

# The crawls are left out: they observe the present only (a past day keeps its crawl, or has none and
# its volume check would fail), and `offers` loads what a day has: its crawl folder, or for a past
# day without one, imported history. The digest is left out too: past days are not mailed. So is the
# `fresh` check, which is about now, not the days backfilled.
backfill_plans = dg.define_asset_job(
    name="backfill_plans",
    selection=(dg.AssetSelection.assets("gpus", "offers") | dg.AssetSelection.groups("plans"))
    - dg.AssetSelection.checks(dg.AssetCheckKey(dg.AssetKey("offers"), "fresh")),
    tags=WRITES_WAREHOUSE,
    description=(
        "Plans and plan changes for past days from what the warehouse holds (crawl folders, imported "
        "history): launch a backfill of a date range from this job's Partitions tab. The range runs as "
        "one run, oldest day first, so each day's changes compare with the day before."
    ),
)

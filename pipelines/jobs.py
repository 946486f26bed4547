"""The one job: the whole graph for one day, crawls to plan changes (and the digest)."""

from __future__ import annotations

import dagster as dg

daily_refresh = dg.define_asset_job(
    name="daily_refresh",
    selection=dg.AssetSelection.all(),
    description="Crawl every platform, load the warehouse, and compute the day's plans and changes.",
)

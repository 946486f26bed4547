"""The Dagster definitions (`dg dev`, `dagster dev`, `dg check defs` load `defs` from here).

`defs` is built when Dagster loads the code location, not at import: Settings are read from the
environment then, and the platforms come from Scrapy's spider loader. Tests and the CLI call
`build_defs(settings, offline=...)` directly.
"""

from __future__ import annotations

import dagster as dg

from gpuplan.settings import Settings
from pipelines.assets.crawls import build_crawl_assets, crawl_key
from pipelines.assets.digest import build_digest_asset
from pipelines.assets.plans import build_plan_assets
from pipelines.assets.warehouse import build_warehouse_assets
from pipelines.checks import build_checks
from pipelines.jobs import daily_refresh
from pipelines.partitions import daily_partitions
from pipelines.resources import CrawlerResource, WarehouseResource
from pipelines.schedules import build_daily_schedule
from scrapers.runner import platforms


def build_defs(settings: Settings, offline: bool = False) -> dg.Definitions:
    """Every asset, check, job and schedule, with resources from `settings`."""
    partitions = daily_partitions(settings.schedule_timezone)
    slugs = platforms()
    crawls = build_crawl_assets(slugs, partitions)
    return dg.Definitions(
        assets=[
            *crawls,
            *build_warehouse_assets([crawl_key(slug) for slug in slugs], partitions),
            *build_plan_assets(partitions),
            build_digest_asset(partitions),
        ],
        asset_checks=build_checks(slugs),
        jobs=[daily_refresh],
        schedules=[build_daily_schedule(settings.schedule_cron, settings.schedule_timezone)],
        resources={
            "warehouse": WarehouseResource.from_settings(settings),
            "crawler": CrawlerResource(offline=offline),
        },
    )


@dg.definitions
def defs() -> dg.Definitions:
    return build_defs(Settings.from_env())

"""The Dagster definitions (`dg dev`, `dagster dev`, `dg check defs` load `defs` from here).

`defs` is built when Dagster loads the code location, not at import: Settings are read from the
environment then, and the platforms come from Scrapy's spider loader. Tests and the CLI call
`build_defs(settings, offline=...)` directly.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date

import dagster as dg

from config.settings import Settings
from pipelines.assets.crawls import build_crawl_assets, crawl_key
from pipelines.assets.dataset import build_dataset_asset
from pipelines.assets.digest import build_digest_asset
from pipelines.assets.jobs import build_job_assets
from pipelines.assets.plans import build_plan_assets
from pipelines.assets.push import build_push_asset
from pipelines.assets.warehouse import build_warehouse_assets
from pipelines.checks import build_checks
from pipelines.dagster_jobs import backfill_plans, daily_refresh
from pipelines.drift_checks import build_drift_checks
from pipelines.intraday import build_watch_cycle
from pipelines.partitions import daily_partitions, first_partition_day
from pipelines.resources import WRITER_WAIT_S, CrawlerResource, MailerResource, WarehouseResource
from pipelines.schedules import build_daily_schedule
from pipelines.watches import watches
from scrapers.registry import platforms


@contextmanager
def policy_warnings_silenced() -> Iterator[None]:
    """Silence two Dagster warnings that come with every load and run and ask for nothing.

    `backfill_policy` is a beta parameter (Dagster is pinned), and daily_refresh mixes the crawls'
    one-day policy with the single-run policy of what `backfill_plans` selects, which Dagster
    resolves to one day per run, as intended.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dg.BetaWarning)
        warnings.filterwarnings("ignore", message="Asset job daily_refresh materializes assets with varying")
        yield


def build_defs(
    settings: Settings,
    offline: bool = False,
    snapshot: str = "",
    writer_wait_s: float = WRITER_WAIT_S,
    first_day: date | None = None,
) -> dg.Definitions:
    """Every asset, check, job and schedule, with resources from `settings`.

    `offline`: replay the bundled snapshots; `snapshot`: which recorded day of them ("" the
    latest, "previous" the day before, `CrawlerResource.snapshot`); `writer_wait_s`: how long a
    writing step waits for another writer (`WarehouseResource.writer_wait_s`); `first_day`: a day
    the partitions must include, when earlier than the install's first (`first_partition_day`).
    A run launched from the UI or the CLI replays the snapshots with the run config
    `{resources: {crawler: {config: {offline: true}}}}` (README, "The Dagster UI")."""
    start = first_partition_day(settings.warehouse, settings.schedule_timezone)
    partitions = daily_partitions(settings.schedule_timezone, min(start, first_day or start))
    slugs = platforms()
    watch_job, watch_schedule = build_watch_cycle(settings.notify_file, settings.watch_every_minutes)
    with policy_warnings_silenced():
        defs = dg.Definitions(
            assets=[
                *build_crawl_assets(slugs, partitions),
                *build_warehouse_assets([crawl_key(slug) for slug in slugs], partitions),
                *build_plan_assets(partitions),
                *build_job_assets(partitions),
                build_digest_asset(partitions),
                build_dataset_asset(partitions, settings.export_dir),
                build_push_asset(partitions, settings.notify_file),
            ],
            asset_checks=[*build_checks(slugs), watches, *build_drift_checks(slugs)],
            jobs=[daily_refresh, backfill_plans, watch_job],
            schedules=[
                build_daily_schedule(settings.schedule_cron, settings.schedule_timezone),
                watch_schedule,
            ],
            # Every run in one process, the run worker: its writing steps take the one writer in
            # turn anyway, its crawls run side by side in a crawl process of their own, and a
            # check is a query or two. A process per step (Dagster's default) adds an interpreter
            # and this code's imports to each of ~20 steps: minutes a day (bench/bench_daemon.py).
            executor=dg.in_process_executor,
            resources={
                "warehouse": WarehouseResource.from_settings(settings, writer_wait_s),
                "crawler": CrawlerResource(
                    offline=offline, snapshot=snapshot, contact=settings.crawler_contact
                ),
                "mailer": MailerResource.from_settings(settings),
            },
        )
        defs.resolve_all_job_defs()  # now, inside the filter: Dagster caches them
    return defs


@dg.definitions
def defs() -> dg.Definitions:
    settings = Settings.from_env()
    return build_defs(settings, offline=settings.offline)

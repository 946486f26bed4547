"""The crawls: one asset per platform (`crawls/<platform>`), all made by one step that crawls them together.

Scrapy's spider loader is the list (`scrapers.registry.platforms()`). The step (`crawls`, a
multi-asset that can run any subset) starts one crawl process for every platform selected
(`scrapers.crawl.runner`: the crawls run side by side in one reactor), and materializes each
platform's asset as soon as that platform's crawl ended, with its own status, error and counts.
A crawl writes `<crawl_dir>/<day>/<platform>.jsonl` and its summary (offline runs: under
`<crawl_dir>/offline/<day>/`, so demo data never lands beside live crawls).

A platform that fails is recorded, never raised: its asset materializes with status 'failed' and
the error in its metadata and in the run's log, so the other platforms still load and plan, and
its `crawled` check (evaluated in the same step, as each crawl ends) turns red. How the crawl
compares with the platform's usual ones (offers halved, unknown GPU names, prices off) is its
drift check on `offers`, once loaded (pipelines/drift_checks.py). Live crawls observe the present
only: a past day keeps the crawl it had (re-running a past day recomputes its plans from the
crawls of that day).

`crawl_listener` lets the process that runs the job in-process (`pipelines.runs.execute_day`,
behind `gpuplan refresh`) follow each platform live: (platform, "waiting" | "crawling" | "done",
summary), the runner's progress, plus a past day's kept crawl as "done" (summary None when that
day has no crawl of the platform).
"""

from collections.abc import Iterator, Sequence
from contextvars import ContextVar
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

import dagster as dg

from config import days
from pipelines.resources import CrawlerResource, WarehouseResource
from scrapers.crawl.runner import OnProgress
from scrapers.crawl.summary import CrawlSummary, SummaryError

GROUP = "crawls"
CRAWLED = "crawled"  # each crawl asset's check: the crawl worked and yielded items
# The run tag that names the platforms whose crawl failed in the run (comma-separated slugs).
FAILED_TAG = "gpuplan/failed_platforms"

# Set by an in-process caller for the duration of a run; unset (None) in Dagster's own runs.
crawl_listener: ContextVar[OnProgress | None] = ContextVar("crawl_listener", default=None)


def crawl_key(platform: str) -> dg.AssetKey:
    return dg.AssetKey([GROUP, platform])


def summary_path(warehouse: WarehouseResource, day: date, platform: str, offline: bool = False) -> Path:
    return warehouse.day_dir(day, offline) / f"{platform}.summary.json"


def is_current(day: date, timezone: str, now: datetime | None = None) -> bool:
    """True for today and yesterday in `timezone`: a run that starts before midnight may crawl after it."""
    today = days.today(timezone, now)
    return today - timedelta(days=1) <= day <= today


def _summary_metadata(summary: CrawlSummary) -> dict[str, Any]:
    duration_s = summary.duration_s
    metadata: dict[str, Any] = {
        "status": summary.status,
        "error": summary.error or "",
        "items_yielded": summary.items_yielded,
        "dagster/row_count": summary.items_yielded,
        "offline": summary.offline,
        "summary": dg.MetadataValue.path(str(summary.path or "")),
    }
    if summary.feed is not None:
        metadata["feed"] = dg.MetadataValue.path(str(summary.feed))
    if duration_s is not None:
        metadata["duration_s"] = round(duration_s, 2)
    return metadata


def _notify(platform: str, state: str, summary: CrawlSummary | None) -> None:
    listener = crawl_listener.get()
    if listener is not None:
        listener(platform, state, summary)


def crawled_check(platform: str, day: date, summary: CrawlSummary | None, error: str) -> dg.AssetCheckResult:
    """`platform`'s crawl of `day` worked and yielded items (`summary` None: none could be read,
    `error` says why). A crawl skipped for want of a token passes: not configured, not broken."""
    key = crawl_key(platform)
    if summary is None:
        return dg.AssetCheckResult(
            asset_key=key, check_name=CRAWLED, passed=False, description=error, metadata={"day": str(day)}
        )
    metadata: dict[str, Any] = {
        "day": str(day),
        "status": summary.status,
        "items_yielded": summary.items_yielded,
        "error": summary.error or "",
    }
    if summary.status == "skipped":
        passed, description = True, f"skipped: {summary.error}"
    elif summary.status == "failed" or summary.items_yielded == 0:
        passed, description = False, summary.error or "no items"
    else:
        passed, description = True, None
    return dg.AssetCheckResult(
        asset_key=key, check_name=CRAWLED, passed=passed, description=description, metadata=metadata
    )


def _kept(
    context: dg.AssetExecutionContext, warehouse: WarehouseResource, day: date, platform: str
) -> tuple[dg.MaterializeResult, dg.AssetCheckResult]:
    """A past day's crawl of `platform`, as it was: crawling now would file today's prices under it."""
    context.log.info(f"{day} is past: keeping its crawl of {platform} instead of crawling now")
    path = summary_path(warehouse, day, platform)
    key = crawl_key(platform)
    if not path.is_file():
        _notify(platform, "done", None)
        missing = f"no crawl of {platform} for {day}"
        return (
            dg.MaterializeResult(asset_key=key, metadata={"status": "missing", "error": missing}),
            crawled_check(platform, day, None, missing),
        )
    try:
        kept = CrawlSummary.read(path)
    except SummaryError as exc:
        context.log.error(str(exc))
        _notify(platform, "done", None)
        return (
            dg.MaterializeResult(asset_key=key, metadata={"status": "failed", "error": str(exc)}),
            crawled_check(platform, day, None, str(exc)),
        )
    _notify(platform, "done", kept)
    return (
        dg.MaterializeResult(asset_key=key, metadata={**_summary_metadata(kept), "kept": True}),
        crawled_check(platform, day, kept, ""),
    )


def _crawled(context: dg.AssetExecutionContext, summary: CrawlSummary) -> dg.MaterializeResult:
    if summary.status == "failed":
        context.log.error(f"crawl of {summary.platform} failed: {summary.error}")
    elif summary.status in ("partial", "skipped"):
        context.log.warning(f"crawl of {summary.platform} is {summary.status}: {summary.error}")
    else:
        context.log.info(f"crawl of {summary.platform}: {summary.items_yielded} offers")
    return dg.MaterializeResult(asset_key=crawl_key(summary.platform), metadata=_summary_metadata(summary))


def _mark_failed(context: dg.AssetExecutionContext, failed: Sequence[str], crawled: int) -> None:
    """Say on the run itself that platforms failed: the run succeeds (the others still plan), so
    without this its header and the Runs list show only green. A tag (FAILED_TAG, the slugs
    comma-separated) and one warning in the run's log."""
    context.instance.add_run_tags(context.run.run_id, {FAILED_TAG: ",".join(failed)})
    context.log.warning(
        f"{len(failed)} of {crawled} platform crawls failed: {', '.join(failed)}. Their plans use their "
        "last good crawl; each one's `crawled` check says why."
    )


def build_crawl_assets(
    platforms: Sequence[str], partitions: dg.DailyPartitionsDefinition
) -> list[dg.AssetsDefinition]:
    """The crawl asset of every platform slug, all made by one step (`crawls`)."""
    specs = [
        dg.AssetSpec(
            crawl_key(platform),
            group_name=GROUP,
            kinds={"scrapy"},
            skippable=True,
            description=(
                f"The day's offers from {platform}. Its spider `{platform}` runs with the day's other "
                "crawls in one crawl process (offline: its bundled snapshot replayed), written to "
                f"`<crawl_dir>/<day>/{platform}.jsonl` with a summary. A failed crawl is recorded here "
                "(status, error) rather than raised, so the other platforms still produce plans; its "
                f"`{CRAWLED}` check fails."
            ),
        )
        for platform in platforms
    ]
    checks = [
        dg.AssetCheckSpec(
            CRAWLED,
            asset=crawl_key(platform),
            description=f"Passes when the {platform} crawl worked and yielded items, or was skipped for "
            f"want of a token. Whether it yielded as much as usual is the `{platform}_drift` check on "
            "offers.",
        )
        for platform in platforms
    ]

    @dg.multi_asset(
        name=GROUP,
        specs=specs,
        check_specs=checks,
        partitions_def=partitions,
        can_subset=True,
        description="Crawls every selected platform at once, in one crawl process.",
    )
    def crawls(
        context: dg.AssetExecutionContext, warehouse: WarehouseResource, crawler: CrawlerResource
    ) -> Iterator[dg.MaterializeResult | dg.AssetCheckResult]:
        day = date.fromisoformat(context.partition_key)
        selected = [platform for platform in platforms if crawl_key(platform) in context.selected_asset_keys]
        checked = {key.asset_key for key in context.selected_asset_check_keys}
        if not crawler.offline and not is_current(day, partitions.timezone):
            for platform in selected:
                materialization, check = _kept(context, warehouse, day, platform)
                yield materialization
                if crawl_key(platform) in checked:
                    yield check
            return
        failed = []
        for step in crawler.crawl_progress(selected, warehouse.day_dir(day, crawler.offline)):
            _notify(*step)
            if step.summary is not None:
                if step.summary.status == "failed":
                    failed.append(step.platform)
                yield _crawled(context, step.summary)
                if crawl_key(step.platform) in checked:
                    yield crawled_check(step.platform, day, step.summary, "")
        if failed:
            _mark_failed(context, sorted(failed), len(selected))

    return [crawls]

"""One crawl asset per platform; Scrapy's spider loader is the list (`scrapers.registry.platforms()`).

A crawl runs in a child process and writes `<crawl_dir>/<day>/<platform>.jsonl` and its summary
(offline runs: under `<crawl_dir>/offline/<day>/`, so demo data never lands beside live crawls).
A platform that fails is recorded, never raised: the step succeeds with status 'failed' and the
error in its metadata and in the run's log, so the other platforms still load and plan, and the
crawl's `volume` check turns red. Live crawls observe the present only: a past day keeps the
crawl it had (re-running a past day recomputes its plans from the crawls of that day).
"""

from collections.abc import Sequence
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import dagster as dg

from pipelines.resources import CrawlerResource, WarehouseResource
from scrapers.summary import CrawlSummary, SummaryError

GROUP = "crawls"


def crawl_key(platform: str) -> dg.AssetKey:
    return dg.AssetKey([GROUP, platform])


def summary_path(warehouse: WarehouseResource, day: date, platform: str, offline: bool = False) -> Path:
    return warehouse.day_dir(day, offline) / f"{platform}.summary.json"


def is_current(day: date, timezone: str, now: datetime | None = None) -> bool:
    """True for today and yesterday in `timezone`: a run that starts before midnight may crawl after it."""
    today = (now or datetime.now(ZoneInfo(timezone))).astimezone(ZoneInfo(timezone)).date()
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


def _crawl_asset(platform: str, partitions: dg.DailyPartitionsDefinition) -> dg.AssetsDefinition:
    @dg.asset(
        key=crawl_key(platform),
        partitions_def=partitions,
        group_name=GROUP,
        kinds={"scrapy"},
        description=(
            f"The day's offers from **{platform}**: spider `{platform}` run in a child process (offline: "
            f"its bundled snapshot replayed), written to `<crawl_dir>/<day>/{platform}.jsonl` with a "
            "summary. A failed crawl is recorded here (status, error) rather than raised, so the other "
            "platforms still produce plans; its `volume` check fails."
        ),
    )
    def crawl(
        context: dg.AssetExecutionContext, warehouse: WarehouseResource, crawler: CrawlerResource
    ) -> dg.MaterializeResult:
        day = date.fromisoformat(context.partition_key)
        path = summary_path(warehouse, day, platform, crawler.offline)
        if not crawler.offline and not is_current(day, partitions.timezone):
            # Crawling now would file today's prices under a past day: keep that day's crawl.
            context.log.info(f"{day} is past: keeping its crawl of {platform} instead of crawling now")
            if not path.is_file():
                return dg.MaterializeResult(
                    metadata={"status": "missing", "error": f"no crawl of {platform} for {day}"}
                )
            try:
                kept = CrawlSummary.read(path)
            except SummaryError as exc:
                context.log.error(str(exc))
                return dg.MaterializeResult(metadata={"status": "failed", "error": str(exc)})
            return dg.MaterializeResult(metadata={**_summary_metadata(kept), "kept": True})

        (summary,) = crawler.crawl([platform], warehouse.day_dir(day, crawler.offline))
        if summary.status == "failed":
            context.log.error(f"crawl of {platform} failed: {summary.error}")
        elif summary.status in ("partial", "skipped"):
            context.log.warning(f"crawl of {platform} is {summary.status}: {summary.error}")
        else:
            context.log.info(f"crawl of {platform}: {summary.items_yielded} offers")
        return dg.MaterializeResult(metadata=_summary_metadata(summary))

    return crawl


def build_crawl_assets(
    platforms: Sequence[str], partitions: dg.DailyPartitionsDefinition
) -> list[dg.AssetsDefinition]:
    """One crawl asset per platform slug."""
    return [_crawl_asset(platform, partitions) for platform in platforms]

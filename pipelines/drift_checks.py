"""Drift checks: each platform's loaded crawl against its own last good crawls (warehouse.drift).

One check per platform on `offers` (`<platform>_drift`), all evaluated by one step once the day's
crawls are loaded: each is a query or two on the published snapshot, so one step (one reader)
costs less than starting a step for each. A check warns, never blocks: a drifting platform still
loads, and the check names what moved. This is the one home of "the crawl yielded under half
its usual offers" (`drift.MIN_OFFER_SHARE`); a crawl that failed or yielded nothing is its own
crawl asset's `crawled` check.
"""

from collections.abc import Iterator, Sequence

import dagster as dg

from pipelines.partitions import partition_days
from pipelines.resources import WarehouseResource
from warehouse import drift

OFFERS = dg.AssetKey("offers")


def _spec(platform: str) -> dg.AssetCheckSpec:
    return dg.AssetCheckSpec(
        drift.check_name(platform),
        asset=OFFERS,
        description=(
            f"Passes when the {platform} crawl looks like its last {drift.HISTORY_CRAWLS} good crawls. "
            f"Warns on offers under {drift.MIN_OFFER_SHARE:.0%} of the usual count, the share of "
            f"unknown GPU names or of rejected quotes {drift.SHARE_GROWTH:g}x the usual, or a GPU "
            f"model's median price {drift.PRICE_FACTOR:g}x off its usual median."
        ),
    )


def _result(platform: str, days: Sequence[drift.CrawlDrift]) -> dg.AssetCheckResult:
    problems = [f"{r.plan_date}: {problem}" for r in days for problem in r.problems]
    last = days[-1]
    first_day, last_day = days[0].plan_date, last.plan_date
    return dg.AssetCheckResult(
        asset_key=OFFERS,
        check_name=drift.check_name(platform),
        passed=not problems,
        severity=dg.AssetCheckSeverity.WARN,
        description="; ".join(problems[:5]) or None,
        metadata={
            "day": str(first_day) if first_day == last_day else f"{first_day}..{last_day}",
            "history_crawls": last.history_crawls,
            "offers": last.today_offers if last.today_offers is not None else -1,
            "usual_offers": last.usual_offers if last.usual_offers is not None else -1.0,
            "problems": len(problems),
        },
    )


def build_drift_checks(platforms: Sequence[str]) -> list[dg.AssetChecksDefinition]:
    """The drift check of every platform, made by one step (`crawl_drift`)."""
    by_name = {drift.check_name(platform): platform for platform in platforms}

    @dg.multi_asset_check(
        name="crawl_drift",
        specs=[_spec(platform) for platform in platforms],
        can_subset=True,
        description="Each platform's crawl of the day against its own last good crawls.",
    )
    def crawl_drift(
        context: dg.AssetCheckExecutionContext, warehouse: WarehouseResource
    ) -> Iterator[dg.AssetCheckResult]:
        days = partition_days(context)
        selected = [by_name[key.name] for key in context.selected_asset_check_keys]
        if not warehouse.has_snapshot():
            for platform in selected:
                yield dg.AssetCheckResult(
                    asset_key=OFFERS,
                    check_name=drift.check_name(platform),
                    passed=True,
                    description="no warehouse yet: nothing to compare",
                )
            return
        with warehouse.reader() as con:
            for platform in selected:
                yield _result(platform, [drift.crawl_drift(con, platform, day) for day in days])

    return [crawl_drift]

"""Drift checks: each platform's loaded crawl against its own last good crawls (warehouse.drift).

One check per platform on `offers`, so it runs once the day's crawls are loaded. It warns, never
blocks: a drifting platform still loads, and the check names what moved.
"""

from collections.abc import Sequence

import dagster as dg

from pipelines.partitions import partition_days
from pipelines.resources import WarehouseResource
from warehouse import drift


def _drift_check(platform: str) -> dg.AssetChecksDefinition:
    @dg.asset_check(
        asset="offers",
        name=drift.check_name(platform),
        description=(
            f"The {platform} crawl against its last {drift.HISTORY_CRAWLS} good crawls: offers under "
            f"{drift.MIN_OFFER_SHARE:.0%} of the usual count, the share of unknown GPU names or of "
            f"rejected quotes {drift.SHARE_GROWTH:g}x the usual, or a GPU model's median price "
            f"{drift.PRICE_FACTOR:g}x off its usual median."
        ),
    )
    def crawl_drift(
        context: dg.AssetCheckExecutionContext, warehouse: WarehouseResource
    ) -> dg.AssetCheckResult:
        days = partition_days(context)
        if not warehouse.has_snapshot():
            return dg.AssetCheckResult(passed=True, description="no warehouse yet: nothing to compare")
        with warehouse.reader() as con:
            results = [drift.crawl_drift(con, platform, day) for day in days]
        problems = [f"{r.plan_date}: {problem}" for r in results for problem in r.problems]
        last = results[-1]
        return dg.AssetCheckResult(
            passed=not problems,
            severity=dg.AssetCheckSeverity.WARN,
            description="; ".join(problems[:5]) or None,
            metadata={
                "day": str(days[0]) if len(days) == 1 else f"{days[0]}..{days[-1]}",
                "history_crawls": last.history_crawls,
                "offers": last.today_offers if last.today_offers is not None else -1,
                "usual_offers": last.usual_offers if last.usual_offers is not None else -1.0,
                "problems": len(problems),
            },
        )

    return crawl_drift


def build_drift_checks(platforms: Sequence[str]) -> list[dg.AssetChecksDefinition]:
    """One drift check per platform."""
    return [_drift_check(platform) for platform in platforms]

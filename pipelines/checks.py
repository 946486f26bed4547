"""Asset checks: believable prices, fresh data, a plan row for every ask and a plan (or a reason)
for every job. (Each crawl's own check runs in the crawl step, `pipelines.assets.crawls`; each
platform's drift against its usual crawls is `pipelines.drift_checks`.)

Checks read the published snapshot (never the writer), so they run beside writing steps. None of
them blocks: a bad platform must not stop the plans of the others; the check says what is wrong.
"""

from collections.abc import Sequence
from datetime import UTC, datetime

import dagster as dg
import pandas as pd

from config.user_files import UserFileError
from pipelines import markdown
from pipelines.assets.jobs import read_job_file, refused_text
from pipelines.partitions import partition_days
from pipelines.resources import WarehouseResource
from warehouse import daily_plans, job_plans, queries

# Spot and monthly plans differ from on-demand by 2-3x, never 5x: beyond is a parsing fault.
# Rule 5 of the price-plausibility rules listed in docs/plausibility.md.
MEDIAN_FACTOR = 5.0

# The schedule runs daily: a platform without a good crawl for a day and a half has missed one.
MAX_CRAWL_AGE_HOURS = 36


@dg.asset_check(
    asset="offers",
    description=(
        "Passes when every price of the day is a plausible price per GPU-hour (the loaders' rule, "
        f"`offer_price_problem` in SQL) and within {MEDIAN_FACTOR:g}x of the median of the same GPU "
        "model; and no offer is under the price floor (`judged_offers`: a small share of what the other "
        "platforms ask for the same GPU that day, or of the platform's other offers of it): a "
        "placeholder price, which plans leave out."
    ),
)
def prices_believable(
    context: dg.AssetCheckExecutionContext, warehouse: WarehouseResource
) -> dg.AssetCheckResult:
    days = partition_days(context)
    with warehouse.reader() as con:
        out_of_bounds = [
            queries.frame(
                con,
                "checks/price_outliers",
                plan_date=day,
                factor=MEDIAN_FACTOR,
            ).assign(day=day)
            for day in days
        ]
        below_floor = [daily_plans.offers_below_price_floor(con, day).assign(day=day) for day in days]
    outliers = pd.concat([*out_of_bounds, *below_floor], ignore_index=True)
    columns = [
        "platform",
        "offer_id",
        "gpu_model",
        "price_usd_per_gpu_hour",
        "median_usd_per_gpu_hour",
        "reason",
    ]
    return dg.AssetCheckResult(
        passed=outliers.empty,
        severity=dg.AssetCheckSeverity.WARN,
        metadata={
            "day": str(days[0]) if len(days) == 1 else f"{days[0]}..{days[-1]}",
            "outliers": len(outliers),
            "below_price_floor": sum(len(frame) for frame in below_floor),
            "offers": dg.MetadataValue.md(
                markdown.table(outliers, columns if len(days) == 1 else ["day", *columns])
            ),
        },
    )


def _freshness_check(platforms: Sequence[str]) -> dg.AssetChecksDefinition:
    @dg.asset_check(
        asset="offers",
        name="fresh",
        description=f"Passes when every platform that ever loaded offers did so in the last "
        f"{MAX_CRAWL_AGE_HOURS} hours.",
    )
    def fresh(warehouse: WarehouseResource) -> dg.AssetCheckResult:
        with warehouse.reader() as con:
            ages = queries.frame(
                con,
                "checks/platform_freshness",
                platforms=list(platforms),
                now=datetime.now(UTC).replace(tzinfo=None),
                max_age_hours=MAX_CRAWL_AGE_HOURS,
            )
        stale = ages[ages["stale"]]
        return dg.AssetCheckResult(
            passed=stale.empty,
            severity=dg.AssetCheckSeverity.WARN,
            metadata={
                "stale_platforms": ", ".join(stale["platform"]) or "none",
                "platforms": dg.MetadataValue.md(
                    markdown.table(ages, ["platform", "last_crawled_at", "age_hours"])
                ),
            },
        )

    return fresh


@dg.asset_check(
    asset="cheapest_plans",
    # after plan_changes: the run publishes the snapshot this check reads once, after its last writing step
    additional_deps=["plan_changes"],
    description="Passes when every (model, method) in the settings has both rankings for each day of the "
    "run with crawls recorded ('no_offer_fits' counts); fails when no day of the run has a crawl recorded.",
)
def every_ask_has_a_plan(
    context: dg.AssetCheckExecutionContext, warehouse: WarehouseResource
) -> dg.AssetCheckResult:
    requested = partition_days(context)
    with warehouse.reader() as con:
        days = daily_plans.recorded_days(con, requested[0], requested[-1])
        missing = pd.concat(
            [
                daily_plans.missing_plans(con, day, warehouse.models, warehouse.methods).assign(day=day)
                for day in days
            ]
            or [pd.DataFrame(columns=["day", "model", "method", "ranking"])],
            ignore_index=True,
        )
    return dg.AssetCheckResult(
        passed=bool(days) and missing.empty,
        description=None if days else f"no crawl recorded for {requested[0]}..{requested[-1]}: no plans",
        metadata={
            "day": str(requested[0]) if len(requested) == 1 else f"{requested[0]}..{requested[-1]}",
            "days_checked": len(days),
            "missing": len(missing),
            "rows": dg.MetadataValue.md(markdown.table(missing, ["day", "model", "method", "ranking"])),
        },
    )


@dg.asset_check(
    asset="job_plans",
    description="Passes when every job of the jobs file (GPUPLAN_JOBS) has a plan or a stated reason for "
    "each day of the run with crawls recorded; fails when the jobs file cannot be read, naming the line.",
)
def every_job_has_a_plan(
    context: dg.AssetCheckExecutionContext, warehouse: WarehouseResource
) -> dg.AssetCheckResult:
    requested = partition_days(context)
    where = str(requested[0]) if len(requested) == 1 else f"{requested[0]}..{requested[-1]}"
    try:
        read = read_job_file(warehouse)
    except UserFileError as exc:
        return dg.AssetCheckResult(passed=False, description=str(exc), metadata={"day": where})
    if read.refused:
        return dg.AssetCheckResult(
            passed=False,
            description=refused_text(read),
            metadata={"day": where, "refused": len(read.refused)},
        )
    jobs = read.jobs
    if not jobs:
        return dg.AssetCheckResult(
            passed=True, metadata={"day": where, "jobs": 0, "jobs_file": warehouse.jobs_file or "unset"}
        )
    with warehouse.reader() as con:
        days = daily_plans.recorded_days(con, requested[0], requested[-1])
        missing = [
            (day, job)
            for day in days
            for job in job_plans.jobs_without_plan(con, day, [job.name for job in jobs])
        ]
    return dg.AssetCheckResult(
        passed=bool(days) and not missing,
        description=(
            None
            if days and not missing
            else f"no plan and no reason for {', '.join(f'{job} ({day})' for day, job in missing[:5])}"
            if missing
            else f"no crawl recorded for {where}: no job plans"
        ),
        metadata={"day": where, "jobs": len(jobs), "days_checked": len(days), "missing": len(missing)},
    )


def build_checks(platforms: Sequence[str]) -> list[dg.AssetChecksDefinition]:
    """The checks on offers (freshness of each of `platforms`), cheapest plans and job plans.

    Checks are not partitioned (that is a preview feature in Dagster 1.13); each one checks the
    day of the run it runs in and says which in its metadata.
    """
    return [
        prices_believable,
        _freshness_check(platforms),
        every_ask_has_a_plan,
        every_job_has_a_plan,
    ]

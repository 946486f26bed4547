"""The job plans asset: every job of the jobs file (GPUPLAN_JOBS) planned from each day's offers.

The planning is `warehouse.job_plans` (the daily plans' offer and shape rules, billing in full);
this asset reads the jobs file when it runs (a file fixed later needs no reload of the code
location) and stores each day's plans in `job_plans`, and what changed in `plan_changes` (subject
'job', the daily plans' one change detector).
A file that cannot be read fails this asset with the file, line and problem (`gpuplan refresh`
prints it and exits 1); the day's job plans stay as they were, and nothing else waits on this
asset (the digest depends on the daily tables, not on it), so the rest of the run goes on.
"""

from datetime import UTC, date, datetime, time
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import dagster as dg

from config.jobs_file import JobsRead, read_each_job
from config.user_files import UserFileError
from pipelines import markdown
from pipelines.assets.crawls import is_current
from pipelines.partitions import SINGLE_RUN, partition_days
from pipelines.resources import WarehouseResource
from warehouse import daily_plans, job_plans

# Not the plans group: `backfill_plans` rebuilds the daily tables of past days; a job's plan is
# about starting now (its deadline counts from today), and the daily run keeps its history.
GROUP = "jobs"

PREVIEW_COLUMNS = (
    "job",
    "rank",
    "status",
    "platform",
    "gpu_model",
    "gpu_count",
    "billing_period",
    "train_days",
    "total_usd",
    "total_cny",
    "reason",
)


def read_job_file(warehouse: WarehouseResource) -> JobsRead:
    """The jobs of GPUPLAN_JOBS (none when it is unset), each job that cannot be read refused on
    its own; raises UserFileError with the file (and line) when the file cannot be read at all."""
    return read_each_job(Path(warehouse.jobs_file)) if warehouse.jobs_file else JobsRead(())


def refused_text(read: JobsRead) -> str:
    """The refused jobs in one line: the first two said whole, how many more."""
    said = "; ".join(str(problem) for problem in read.refused[:2])
    more = len(read.refused) - 2
    return said + (f"; and {more} more job(s) refused" if more > 0 else "")


def start_of(day: date, timezone: str, now: datetime) -> datetime:
    """When a job planned for `day` would start (UTC, naive): now for the current day, else the
    day's first moment in the schedule's time zone (a backfilled day)."""
    if is_current(day, timezone, now.replace(tzinfo=UTC)):
        return now
    start = datetime.combine(day, time(), ZoneInfo(timezone))
    return start.astimezone(UTC).replace(tzinfo=None)


def build_job_assets(partitions: dg.DailyPartitionsDefinition) -> list[dg.AssetsDefinition]:
    """job_plans, after the day's offers and the GPU catalog."""

    @dg.asset(
        name="job_plans",
        partitions_def=partitions,
        backfill_policy=SINGLE_RUN,
        group_name=GROUP,
        kinds={"duckdb", "python"},
        deps=[dg.AssetKey("offers"), dg.AssetKey("gpus")],
        description=(
            "Your own jobs (GPUPLAN_JOBS): for each, the best plan per GPU model from the day's offers "
            "that meets its deadline, ranked by what it costs in total by the platform's billing (whole "
            "billing periods, at least the minimum term), with train days and finish; a 'no_plan' row "
            "with the reason where none does. `plan_changes` (subject 'job'): a job's best plan moving "
            "platform, GPU, count, or total by at least `price_move_pct`. Same offer and rental rules "
            "as the daily plans."
        ),
    )
    def job_plans_asset(
        context: dg.AssetExecutionContext, warehouse: WarehouseResource
    ) -> dg.MaterializeResult:
        requested = partition_days(context)
        now = datetime.now(UTC).replace(tzinfo=None)
        if not warehouse.jobs_file:
            return dg.MaterializeResult(metadata={"jobs_file": "none (GPUPLAN_JOBS is not set)"})
        try:
            read = read_job_file(warehouse)
        except UserFileError as exc:
            # before the writer opens: the day's job plans stay as they were; nothing downstream
            raise dg.Failure(description=str(exc), metadata={"jobs_file": warehouse.jobs_file}) from None
        # Its own step, publishing its own tables: a bad jobs file fails this step alone, and never
        # keeps the daily plans (published by the `plans` step) unpublished.
        jobs = list(read.jobs)  # a job refused alone: the others are planned, then the step says it
        with warehouse.writer(context) as con:
            days = daily_plans.recorded_days(con, requested[0], requested[-1])
            rows = sum(
                job_plans.compute_job_plans(
                    con, day, jobs, start_of(day, partitions.timezone, now), max_nodes=warehouse.max_nodes
                )
                for day in days
            )
            changes = daily_plans.compute_plan_changes_for_days(
                con, days, warehouse.price_move_pct, subject="job"
            )
            latest = job_plans.job_plans_for_date(con, days[-1]) if days else None
        metadata: dict[str, Any] = {
            "dagster/row_count": rows,
            "jobs_file": warehouse.jobs_file,
            "jobs": len(jobs),
            "days_planned": len(days),
            "changes": changes,
        }
        if latest is not None:
            best = latest[latest["rank"] == 1]
            metadata["jobs_without_plan"] = int((best["status"] != "ok").sum())
            metadata["preview"] = dg.MetadataValue.md(
                f"Best plans of {days[-1]}:\n\n" + markdown.table(best, PREVIEW_COLUMNS)
            )
        if read.refused:  # after the others' plans are stored and published: they stand
            metadata["jobs_refused"] = len(read.refused)
            raise dg.Failure(description=refused_text(read), metadata=metadata)
        return dg.MaterializeResult(metadata=metadata)

    return [job_plans_asset]

"""`gpuplan backfill`: cheapest plans and plan changes for every past day with data.

The CLI equivalent of a Dagster backfill of the plan assets over the daily partitions, run
in-process with the same functions the assets call (`warehouse.plans`), oldest day first so
each day's changes compare with the day before. A day's offers are the crawls the pipeline
recorded for it, and for platforms it has none, the run that stands for the platform that day
(`daily_runs`: our own crawl, else an imported day); crawls are never re-run.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Annotated

import duckdb
import pandas as pd
import typer
from rich.console import Console
from rich.progress import track

from gpuplan.settings import Settings
from sizing.catalog import GpuSpec, load_gpus
from warehouse import connect, history, plans, queries


@dataclass(frozen=True)
class BackfilledDay:
    """One day's outcome: how many platforms fed it, plan rows that fit, plan rows in all, changes."""

    day: dt.date
    platforms: int
    plans_ok: int
    plans: int
    changes: int


def register(app: typer.Typer) -> None:
    app.command(
        "backfill",
        help="Compute cheapest plans and plan changes for every past day with offers (our crawls or "
        "imported history) in [--from, --to], oldest first: a Dagster backfill of the plan assets, run here.",
    )(backfill_command)


def backfill_command(
    ctx: typer.Context,
    first: Annotated[
        dt.datetime | None,
        typer.Option("--from", formats=["%Y-%m-%d"], help="First day (default: the earliest day with data)."),
    ] = None,
    last: Annotated[
        dt.datetime | None,
        typer.Option("--to", formats=["%Y-%m-%d"], help="Last day (default: the latest day with data)."),
    ] = None,
) -> None:
    settings: Settings = ctx.obj
    first_day, last_day = (first.date() if first else None), (last.date() if last else None)
    if first_day and last_day and first_day > last_day:
        raise typer.BadParameter(f"--from {first_day} is after --to {last_day}", param_hint="--from")
    started = time.perf_counter()
    with connect.writer(settings) as con:
        days = backfill_plans(
            con,
            settings,
            first_day,
            last_day,
            progress=lambda items, total: track(items, total=total, description="backfilling plans"),
        )
    console = Console()
    if not days:
        console.print(f"no day with offers between {first_day or 'the start'} and {last_day or 'the end'}")
        raise typer.Exit(1)
    console.print(
        f"{len(days)} day(s) from {days[0].day} to {days[-1].day} in {time.perf_counter() - started:.1f} s: "
        f"{sum(day.plans for day in days)} plan rows ({sum(day.plans_ok for day in days)} that fit), "
        f"{sum(day.changes for day in days)} changes. See `gpuplan plans --date D`."
    )


def backfill_plans(
    con: duckdb.DuckDBPyConnection,
    settings: Settings,
    first: dt.date | None,
    last: dt.date | None,
    progress: Callable[[Sequence[dt.date], int], object] | None = None,
) -> list[BackfilledDay]:
    """Plans and changes for each day with data in [first, last] (None = open), oldest first.

    `con` is the writer. Each day's rows are replaced (re-running a day changes nothing else);
    the first day with plans after `last` gets its changes recomputed, since its previous day
    may be new. `progress(days, total)` may wrap the day sequence (a progress bar).
    """
    # Imported here: pipelines imports Dagster (slow), and every `gpuplan` start imports all commands.
    from pipelines.assets.plans import plan_gpu_counts, requirements_frame

    crawls = history.backfill_crawls(con, first, last)
    if crawls.empty:
        return []
    platforms_per_day = crawls.groupby("day").size()
    days = sorted(platforms_per_day.index)
    for day, new in crawls[~crawls["already_recorded"]].groupby("day"):
        plans.record_plan_crawls(con, day, new)
    units = {day: queries.frame(con, "plan_unit_sizes", plan_date=day) for day in days}
    gpus = load_gpus()
    # A requirement depends on (model, method, GPU, count) only, not on the day: size every count
    # any day offers once, then give each day the rows requirements_frame would give it alone.
    union = pd.concat(units.values(), ignore_index=True).drop_duplicates()
    everything = requirements_frame(settings.models, settings.methods, gpus, union)
    for day in progress(days, len(days)) if progress else days:
        allowed = _job_sizes(gpus, units[day], plan_gpu_counts)
        day_requirements = everything.merge(allowed, on=["gpu_model", "gpu_count"])
        plans.store_requirements(con, day, day_requirements)
        plans.compute_candidates(con, day)
        plans.compute_cheapest_plans(con, day)
        plans.compute_plan_changes(con, day, settings.price_move_pct)
    following = history.next_plan_day(con, days[-1])
    if following is not None:
        plans.compute_plan_changes(con, following, settings.price_move_pct)
    outcome = history.plan_days(con, days[0], days[-1]).set_index("plan_date")
    return [
        BackfilledDay(
            day=day,
            platforms=int(platforms_per_day[day]),
            plans_ok=int(outcome.at[day, "plans_ok"]),
            plans=int(outcome.at[day, "plans"]),
            changes=int(outcome.at[day, "changes"]),
        )
        for day in days
    ]


def _job_sizes(
    gpus: Sequence[GpuSpec], units: pd.DataFrame, plan_gpu_counts: Callable[[int, list[int]], list[int]]
) -> pd.DataFrame:
    """(gpu_model, gpu_count) pairs the pipeline sizes for a day whose offers come in `units`."""
    offered = units.groupby("gpu_model")["gpu_count"].agg(list).to_dict()
    return pd.DataFrame(
        [
            (gpu.gpu_model, count)
            for gpu in gpus
            for count in plan_gpu_counts(gpu.gpus_per_node, offered.get(gpu.gpu_model, []))
        ],
        columns=["gpu_model", "gpu_count"],
    )

"""`gpuplan backfill`: cheapest plans and plan changes for every past day with data.

The CLI equivalent of the Dagster `backfill_plans` job over a range of daily partitions, run
in-process with the same functions (`warehouse.backfill.backfill_plans`), oldest day first so
each day's changes compare with the day before. A day's offers are the crawls the pipeline
recorded for it, and for platforms it has none, the run that stands for the platform that day
(`daily_runs`: our own crawl, else an imported day); crawls are never re-run. Unlike the Dagster
job it also reaches days before the first daily partition.
"""

from __future__ import annotations

import datetime as dt
import time
from typing import Annotated

import typer

from config.days import today
from config.settings import Settings
from gpuplan import display
from warehouse import backfill
from warehouse.engine import connect
from warehouse.plan_sequence import PlanOptions


def register(app: typer.Typer) -> None:
    app.command(
        "backfill",
        help="Compute cheapest plans and plan changes for every past day with offers (our crawls or "
        "imported history) in [--from, --to], oldest first: the Dagster `backfill_plans` job, run here.",
    )(backfill_command)


def backfill_command(
    ctx: typer.Context,
    first: Annotated[
        dt.datetime | None,
        typer.Option("--from", formats=["%Y-%m-%d"], help="First day (default: the earliest day with data)."),
    ] = None,
    last: Annotated[
        dt.datetime | None,
        typer.Option(
            "--to",
            formats=["%Y-%m-%d"],
            help="Last day (default: the latest day with data; never after today in GPUPLAN_SCHEDULE_TZ).",
        ),
    ] = None,
) -> None:
    settings: Settings = ctx.obj
    first_day, last_day = (first.date() if first else None), (last.date() if last else None)
    if first_day and last_day and first_day > last_day:
        raise typer.BadParameter(f"--from {first_day} is after --to {last_day}", param_hint="--from")
    # No day after today in the schedule's zone, as the Dagster job's partitions end there.
    last_day = min(last_day or dt.date.max, today(settings.schedule_timezone))
    started = time.perf_counter()
    out = display.console()
    with connect.writer(settings.warehouse) as con:
        days = backfill.backfill_plans(
            con,
            PlanOptions.from_settings(settings),
            first_day,
            last_day,
            progress=display.tracker(out, "backfilling plans", unit="days"),
        )
    if not days:
        out.print(f"no day with offers between {first_day or 'the start'} and {last_day or 'the end'}")
        raise typer.Exit(1)
    out.print(
        f"{len(days)} day(s) from {days[0].day} to {days[-1].day} in {time.perf_counter() - started:.1f} s: "
        f"{sum(day.plans for day in days)} plan rows ({sum(day.plans_ok for day in days)} that fit), "
        f"{sum(day.changes for day in days)} changes. See `gpuplan plans --date D`."
    )
    excluded = sum(day.offers_excluded for day in days)
    if excluded:
        out.print(
            f"{excluded} offer(s) left out of plans as implausibly cheap against the other platforms "
            "(table plan_excluded_offers)."
        )

"""`gpuplan refresh`: run the whole Dagster graph for one day, headless, then print the plans.

The same job the schedule runs (`daily_refresh`), executed in this process by
`pipelines.runs.execute_day` (on the instance in $DAGSTER_HOME when set, so the run shows in the
UI; else on a throwaway one). Dagster and Scrapy are imported only when this command runs, so
the other commands start fast. Another run holding the day's crawls or the writer slot for
longer than `--wait` is one line naming it (`RunBlocked`, printed by the CLI's error handler).
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated
from zoneinfo import ZoneInfo

import typer
from rich.console import Console

from gpuplan.commands.plans import excluded_note, plans_table
from gpuplan.settings import Settings
from warehouse import connect, plans

# Long enough for another run's crawls (one crawl's timeout) and its writing steps to finish.
WAIT_S = 600.0


def register(app: typer.Typer) -> None:
    app.command(
        "refresh",
        help="Crawl every platform (or --platform ones), load the warehouse and compute the day's "
        "cheapest plans and changes: the daily Dagster job, run here. Prints the plans.",
    )(refresh_command)


def refresh_command(
    ctx: typer.Context,
    offline: Annotated[
        bool, typer.Option("--offline", help="Replay each platform's bundled snapshot; no network needed.")
    ] = False,
    day: Annotated[
        dt.datetime | None,
        typer.Option(
            "--date",
            formats=["%Y-%m-%d"],
            help="Day to plan (YYYY-MM-DD); default: today in the schedule's time zone. A past day "
            "keeps its crawls (live) and recomputes its plans.",
        ),
    ] = None,
    only: Annotated[
        list[str] | None,
        typer.Option(
            "--platform", "-p", help="Crawl only this platform (repeatable); the others keep today's crawl."
        ),
    ] = None,
    wait_s: Annotated[
        float,
        typer.Option(
            "--wait",
            min=0.0,
            help="Seconds to wait for another run holding the day's crawls or the warehouse writer, "
            "then stop saying which run it is.",
        ),
    ] = WAIT_S,
) -> None:
    from pipelines.partitions import FIRST_DAY
    from pipelines.runs import execute_day
    from scrapers.registry import platforms

    settings: Settings = ctx.obj
    known = platforms()
    unknown = sorted(set(only or ()) - set(known))
    if unknown:
        raise typer.BadParameter(
            f"unknown platform(s) {', '.join(unknown)}; known: {', '.join(known)}", param_hint="--platform"
        )
    today = dt.datetime.now(ZoneInfo(settings.schedule_timezone)).date()
    plan_day = day.date() if day else today
    if not dt.date.fromisoformat(FIRST_DAY) <= plan_day <= today:
        raise typer.BadParameter(
            f"{plan_day} is not a day gpuplan can plan: from {FIRST_DAY} to today ({today}, "
            f"{settings.schedule_timezone})",
            param_hint="--date",
        )
    console = Console()
    failures = execute_day(
        settings, plan_day, offline=offline, platforms=only or None, wait_s=wait_s
    ).failures
    if settings.warehouse.exists():  # a run that failed before the first write published nothing
        _print_day(console, settings, plan_day)
    for failure in failures:
        console.print(f"[red]step failed[/red]: {failure}", highlight=False)
    if failures:
        raise typer.Exit(1)


def _print_day(console: Console, settings: Settings, day: dt.date) -> None:
    """The platforms that did not crawl cleanly, the day's plans, and how many changes."""
    with connect.reader(settings.warehouse) as con:
        crawls = plans.day_crawls(con, day)
        frame = plans.plans_for_date(con, day)
        changes = plans.changes_for_date(con, day)
        excluded = plans.excluded_offers(con, day)
    for row in crawls.to_dict("records"):
        if row["status"] in ("failed", "partial", "skipped"):
            console.print(
                f"[yellow]{row['platform']}: {row['status']}[/yellow]: {row['error']}", highlight=False
            )
    if not frame.empty:
        console.print(plans_table(frame))
        if len(excluded):
            console.print(excluded_note(excluded), highlight=False)
        console.print(f"{len(changes)} change(s) since the previous day with plans; see `gpuplan plans`.")

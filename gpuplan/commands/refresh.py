"""`gpuplan refresh`: run the whole Dagster graph for one day, headless, then print the plans.

The same job the schedule runs (`daily_refresh`), executed in this process: on the instance in
$DAGSTER_HOME when set (the run then shows in the UI), else on a throwaway one. Dagster and
Scrapy are imported only when this command runs, so the other commands start fast.
"""

from __future__ import annotations

import datetime as dt
import os
from typing import TYPE_CHECKING, Annotated
from zoneinfo import ZoneInfo

import typer
from rich.console import Console

from gpuplan.commands.plans import excluded_note, plans_table
from gpuplan.settings import Settings
from warehouse import connect, drift, plans

if TYPE_CHECKING:
    from dagster._utils.error import SerializableErrorInfo


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
) -> None:
    from pipelines.partitions import FIRST_DAY
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
    failures = _run(settings, plan_day, offline, only or [])
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
        drifted = drift.day_drift(con, day)
    for row in crawls.to_dict("records"):
        if row["status"] in ("failed", "partial", "skipped"):
            console.print(
                f"[yellow]{row['platform']}: {row['status']}[/yellow]: {row['error']}", highlight=False
            )
    for d in drifted:
        console.print(
            f"[yellow]{d.check_name} check failed[/yellow]: {'; '.join(d.problems)}", highlight=False
        )
    if not frame.empty:
        console.print(plans_table(frame))
        if len(excluded):
            console.print(excluded_note(excluded), highlight=False)
        console.print(f"{len(changes)} change(s) since the previous day with plans; see `gpuplan plans`.")


def _run(settings: Settings, day: dt.date, offline: bool, only: list[str]) -> list[str]:
    """Execute `daily_refresh` for `day`; returns "step: error" for each failed step."""
    import dagster as dg

    from pipelines.assets.crawls import GROUP as CRAWLS
    from pipelines.assets.crawls import crawl_key
    from pipelines.definitions import build_defs, policy_warnings_silenced

    defs = build_defs(settings, offline=offline)
    job = defs.resolve_job_def("daily_refresh")
    selection = None
    if only:
        graph = defs.resolve_asset_graph()
        selected = (dg.AssetSelection.all() - dg.AssetSelection.groups(CRAWLS)) | dg.AssetSelection.assets(
            *(crawl_key(platform) for platform in only)
        )
        selection = list(selected.resolve(graph))
    # Dagster's own setting: with it the run is recorded where the UI reads; without, nothing is kept
    instance = dg.DagsterInstance.get() if os.environ.get("DAGSTER_HOME") else dg.DagsterInstance.ephemeral()
    with instance, policy_warnings_silenced():
        result = job.execute_in_process(
            instance=instance,
            partition_key=day.isoformat(),
            asset_selection=selection,
            raise_on_error=False,
            # the CLI prints its own summary; Dagster's event log stays in the instance
            run_config={"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}},
        )
    return [
        f"{event.step_key}: {_root_cause(event.step_failure_data.error)}"
        for event in result.all_events
        if event.is_step_failure
    ]


def _root_cause(error: SerializableErrorInfo | None) -> str:
    """The innermost error's message: Dagster wraps the asset's exception in its own."""
    if error is None:
        return "failed"
    while error.cause is not None:
        error = error.cause
    return error.message.strip()

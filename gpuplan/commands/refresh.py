"""`gpuplan refresh`: run the whole Dagster graph for one day, headless, then print the plans.

The same job the schedule runs (`daily_refresh`), executed in this process by
`pipelines.runs.execute_day` (on the instance in $DAGSTER_HOME when set, so the run shows in the
UI; else on a throwaway one). Dagster and Scrapy are imported only when this command runs, so
the other commands start fast. Another run holding the day's crawls or the warehouse writer for
longer than `--wait` is one line naming it (`RunBlocked`, printed by the CLI's error handler).
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Collection
from typing import Annotated

import pandas as pd
import typer
from rich.console import Console
from rich.text import Text

from config import days
from config.settings import Settings
from config.shown_text import one_line
from gpuplan import display
from gpuplan.crawl_display import CrawlBoard, offline_note, outcome_line
from gpuplan.plan_tables import print_plans
from scrapers.registry import platform_tokens
from scrapers.spiders.quotes import QuotesSpider
from warehouse import daily_plans, drift
from warehouse.engine import connect

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
    legend: Annotated[
        bool,
        typer.Option("--legend", help="Explain every column of the plans table (default: the marks shown)."),
    ] = False,
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
    today = days.today(settings.schedule_timezone)
    plan_day = day.date() if day else today
    if not dt.date.fromisoformat(FIRST_DAY) <= plan_day <= today:
        raise typer.BadParameter(
            f"{plan_day} is not a day gpuplan can plan: from {FIRST_DAY} to today ({today}, "
            f"{settings.schedule_timezone})",
            param_hint="--date",
        )
    out = display.console()
    if offline and os.environ.get(QuotesSpider.file_env):
        # The quotes spider replays its bundled example offline, like every spider its snapshot.
        display.say(
            out,
            f"offline: {QuotesSpider.file_env} is not read; the bundled example quotes are replayed "
            "(a live refresh reads your file)",
        )
    started = dt.datetime.now(dt.UTC).replace(tzinfo=None)  # naive UTC, as the digest's send records
    with CrawlBoard(out, only or known, platform_tokens(), offline=offline) as board:
        failures = execute_day(
            settings,
            plan_day,
            offline=offline,
            platforms=only or None,
            on_crawl=board.update,
            on_day=board.day,
            wait_s=wait_s,
        ).failures
    summary: list[Text] = []
    if settings.warehouse.exists():  # a run that failed before the first write published nothing
        shown = {summary.platform for summary in board.summaries}
        summary = _print_day(out, settings, plan_day, offline, started, shown, legend)
    for failure in failures:
        # one line each, however long: a wrapped line put the path on the next one
        out.print(Text("step failed", style="red").append(f": {one_line(failure)}"), soft_wrap=True)
    # the answer last: what failed, what changed, where the digest went, below the table
    for line in summary:
        out.print(line)
    if failures:
        raise typer.Exit(1)


def _print_day(
    out: Console,
    settings: Settings,
    day: dt.date,
    offline: bool,
    started: dt.datetime,
    shown: Collection[str] = (),
    legend: bool = False,
) -> list[Text]:
    """After the run (begun at `started`, naive UTC), from the warehouse: each platform's crawl not
    `shown` live (one line each: status and offers) and the load, then the day's plans (`legend`:
    explaining every column, else the marks shown). Returns the run's summary, the lines the
    command ends with: the platforms that failed, by name; the plans and how many changed (one per
    changed plan, as the digest counts them); what the run did with the digest."""
    from digest.mailer import SmtpConfigError, check_settings
    from digest.sending import run_outcome

    with connect.reader(settings.warehouse) as con:
        crawls = daily_plans.day_crawls(con, day)
        frame = daily_plans.plans_for_date(con, day)
        changes = daily_plans.count_changed_plans(con, day)
        excluded = daily_plans.excluded_offers(con, day)
        sent = None if offline else run_outcome(con, day, started)
        drifted = drift.day_drift(con, day)
    tokens = platform_tokens()
    for row in crawls.to_dict("records"):
        if row["platform"] not in shown:
            line = outcome_line(
                str(row["platform"]),
                str(row["status"]),
                int(row["items_yielded"] or 0),
                None if pd.isna(row["error"]) else str(row["error"]),
                token=tokens.get(str(row["platform"])),
            )
            display.say(out, line + ("" if row["source"] == "crawl" else f" ({row['source']})"))
    note = offline_note(tokens) if offline else None
    if note:
        out.print(note, highlight=False)
    loaded = int(crawls["offers_loaded"].fillna(0).sum())
    with_offers = int((crawls["offers_loaded"].fillna(0) > 0).sum())
    out.print(f"load: {loaded} offers from {with_offers} of {len(crawls)} platforms", highlight=False)
    fitting = int((frame["status"] == "ok").sum()) if "status" in frame else len(frame)
    if offline:
        digest = "not sent (offline run); `gpuplan digest --preview FILE.html` shows it"
    elif sent:
        digest = sent
    else:
        try:
            check_settings(settings.smtp)
            digest = "not sent"
        except SmtpConfigError as exc:
            digest = f"not sent: {exc}"
    for d in drifted:
        heading = Text(f"{d.check_name} check failed", style="yellow")
        out.print(heading.append(f": {one_line('; '.join(d.problems))}"), soft_wrap=True)
    if not frame.empty:
        print_plans(out, frame, excluded, legend=legend)
    failed = [
        row["platform"] if row["status"] == "failed" else f"{row['platform']} ({row['status']})"
        for row in crawls.to_dict("records")
        if row["status"] != "ok"
    ]
    crawled = f"{len(crawls) - len(failed)} of {len(crawls)} platforms ok"
    return [
        Text(f"failed: {', '.join(failed)}; {crawled}", style="red")
        if failed
        else Text(f"failed: none; {crawled}"),
        Text(
            f"plans: {len(frame)} ({fitting} fit), {len(settings.models)} models x "
            f"{len(settings.methods)} methods; {changes} plan changes since the day before"
        ),
        Text(f"digest: {one_line(digest)}"),
    ]

"""`gpuplan watch`: the intraday watches in the foreground, for people without Dagster."""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from config.settings import Settings, parse_minutes
from config.shown_text import one_line

if TYPE_CHECKING:
    from pipelines.intraday import Cycle


def register(app: typer.Typer) -> None:
    app.command(
        "watch",
        help="Every GPUPLAN_WATCH_EVERY minutes (default 15): crawl only the platforms the watches of "
        "GPUPLAN_WATCHES need, load the crawls, check the watches against them and push each watch "
        "that starts to hold to the channels of GPUPLAN_NOTIFY. --once runs one cycle; Ctrl-C stops.",
    )(watch_command)


def _every(text: str | None) -> int | None:
    if text is None:
        return None
    try:
        minutes = parse_minutes(text)
    except ValueError:
        minutes = 0
    if minutes < 1:
        raise typer.BadParameter(f"--every takes whole minutes (10, 10m, 1h), not {text!r}")
    return minutes


def watch_command(
    ctx: typer.Context,
    every: Annotated[
        str | None,
        typer.Option("--every", help="Minutes between cycles: 10, 10m or 1h (default GPUPLAN_WATCH_EVERY)."),
    ] = None,
    once: Annotated[bool, typer.Option("--once", help="Run one cycle and stop.")] = False,
    origin_override: Annotated[
        str | None,
        typer.Option(
            "--origin-override",
            hidden=True,
            help="Send every crawl request to this URL instead of the platform (tests, recordings).",
        ),
    ] = None,
) -> None:
    from config.jobs_file import read_jobs
    from config.notify_file import read_channels
    from config.watches_file import read_watches
    from gpuplan.cli import Terminated
    from pipelines.intraday import run_cycle
    from scrapers.crawl.runner import CrawlJob, CrawlSummary, crawl
    from scrapers.middlewares import CONTACT_SETTING
    from scrapers.platform import ORIGIN_OVERRIDE_SETTING
    from scrapers.registry import platforms

    settings: Settings = ctx.obj
    minutes = _every(every) or settings.watch_every_minutes
    known = platforms()
    listed = read_watches(settings.watches_file, known)
    if listed.error:
        raise typer.BadParameter(listed.error)
    if not listed.watches:
        raise typer.BadParameter(
            "no watches: set GPUPLAN_WATCHES to a YAML file of watches (README, Watches)"
        )
    jobs = {job.name: job for job in read_jobs(settings.jobs_file)} if settings.jobs_file else {}
    channels = read_channels(settings.notify_file) if settings.notify_file else []

    def crawl_now(names: Sequence[str], out_dir: Path) -> list[CrawlSummary]:
        return crawl(
            [CrawlJob(name) for name in names],
            out_dir,
            settings={
                CONTACT_SETTING: settings.crawler_contact or "",
                **({ORIGIN_OVERRIDE_SETTING: origin_override} if origin_override else {}),
            },
        )

    typer.echo(
        f"watching {len(listed.watches)} watches every {minutes} min; {len(channels)} push channels "
        "(Ctrl-C stops)"
    )
    try:
        while True:
            started = time.monotonic()
            stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
            cycle = run_cycle(
                settings.warehouse,
                settings.crawl_dir / "intraday" / stamp,
                listed.watches,
                jobs,
                known,
                crawl_now,
                channels,
                stale_hours=settings.stale_hours,
                max_nodes=settings.max_nodes,
            )
            _show(cycle, time.monotonic() - started)
            if once:
                return
            time.sleep(max(0.0, minutes * 60 - (time.monotonic() - started)))
    except (KeyboardInterrupt, Terminated):
        typer.echo("stopped")


def _show(cycle: Cycle, seconds: float) -> None:
    """What the cycle checked and when, and what fired (English: the terminal's language)."""
    from digest.intraday import fired_line
    from digest.watches import WatchResult
    from digest.wording import Wording

    wording = Wording.of("en")
    when = cycle.checked_at.strftime("%Y-%m-%d %H:%M:%S UTC")
    crawled = ", ".join(f"{load.platform} {load.status}" for load in cycle.loads) or "nothing"
    typer.echo(one_line(f"{when} ({seconds:.1f} s): crawled {crawled}"))
    for check in cycle.checks:
        if check.fired:
            state = "FIRED"
        elif not check.known:
            state = f"unknown ({check.problem})"
        else:
            state = "holds" if check.holding else "does not hold"
        asks = wording.watch(WatchResult(check.watch, check.reading, None))
        typer.echo("  " + one_line(f"line {check.watch.line}: {asks}: {state}"))
        if check.fired:
            typer.echo("    " + one_line(fired_line(wording, check)))
    for result in cycle.pushed:
        said = f"{result.channel} {result.event_key}: {result.status}"
        typer.echo("  push " + one_line(said + (f": {result.error}" if result.error else "")))

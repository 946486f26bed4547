"""`gpuplan crawl`: run platform spiders (live, or replaying their snapshots) and show what they got.

Exit status: 0 when at least one crawled platform produced offers (status ok or
partial), 1 when none did (every platform failed or was skipped). One broken
platform must not fail a daily run; all of them broken must.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Annotated, Any
from zoneinfo import ZoneInfo

import typer
from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from gpuplan.settings import Settings
from scrapers.summary import CrawlSummary

EXIT_NO_OFFERS = 1
STATUS_STYLE = {"ok": "green", "partial": "yellow", "failed": "red", "skipped": "dim"}


def register(app: typer.Typer) -> None:
    app.command(
        "crawl",
        help="Crawl one platform (or --all) into JSONL feeds with a summary each; "
        "--offline replays the spiders' recorded snapshots instead of the network.",
    )(crawl_command)


def crawl_command(
    ctx: typer.Context,
    platform: Annotated[
        str | None, typer.Argument(help="Platform slug (a spider name), e.g. vastai. Omit with --all.")
    ] = None,
    all_platforms: Annotated[
        bool, typer.Option("--all", help="Crawl every platform, one after another.")
    ] = False,
    offline: Annotated[
        bool, typer.Option("--offline", help="Replay each spider's bundled snapshot; no network.")
    ] = False,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output", "-o", help="Write the offers JSONL here (one platform only); summary beside it."
        ),
    ] = None,
    out_dir: Annotated[
        Path | None,
        typer.Option(
            "--out-dir",
            help="Folder for feeds and summaries (default: GPUPLAN_CRAWL_DIR/<today>, "
            "or GPUPLAN_CRAWL_DIR/offline/<today> with --offline).",
        ),
    ] = None,
    record: Annotated[
        Path | None,
        typer.Option("--record", help="Also record every response into this new folder as a snapshot."),
    ] = None,
    timeout_s: Annotated[
        float | None,
        typer.Option(
            "--timeout",
            min=1.0,
            help="Seconds before one platform's crawl is stopped (default: the runner's).",
        ),
    ] = None,
) -> None:
    from scrapers.registry import UnknownPlatform
    from scrapers.runner import DEFAULT_TIMEOUT_S

    settings: Settings = ctx.obj
    if all_platforms == (platform is not None):
        raise typer.BadParameter("give one PLATFORM or --all")
    if all_platforms and (output is not None or record is not None):
        raise typer.BadParameter("--output and --record take one platform, not --all")
    names = platforms() if all_platforms or platform is None else [platform]
    folder = output.parent if output is not None else out_dir or _default_dir(settings, offline)
    console = Console()
    summaries: list[CrawlSummary] = []
    with Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    ) as progress:
        for name in names:
            task = progress.add_task(f"crawling {name}{' (offline)' if offline else ''}")
            try:
                summary = run_crawl(
                    name,
                    folder,
                    offline=offline,
                    timeout_s=DEFAULT_TIMEOUT_S if timeout_s is None else timeout_s,
                    feed=output,
                    record_dir=record,
                )
            except UnknownPlatform as exc:
                raise typer.BadParameter(str(exc), param_hint="PLATFORM") from None
            progress.remove_task(task)
            style = STATUS_STYLE[summary.status]
            console.print(f"{name}: [{style}]{summary.status}[/] ({summary.items_yielded} offers)")
            summaries.append(summary)
    console.print(summary_table(summaries))
    for summary in summaries:
        if summary.error:
            # Errors are whole sentences: below the table, where they need not wrap into a cell.
            console.print(f"{summary.platform} {summary.status}: {summary.error}", highlight=False)
    console.print(f"feeds and summaries in {folder}", highlight=False)
    if not any(s.status in ("ok", "partial") for s in summaries):
        raise typer.Exit(EXIT_NO_OFFERS)


# Scrapy is imported only when a crawl runs (these two), so every other command starts without it
# (about 0.4 s of CPU).
def platforms() -> list[str]:
    from scrapers import registry

    return registry.platforms()


def run_crawl(platform: str, out_dir: Path, **options: Any) -> CrawlSummary:
    from scrapers import runner

    return runner.run_crawl(platform, out_dir, **options)


def _default_dir(settings: Settings, offline: bool) -> Path:
    # The same day the daily pipeline files crawls under: today in its schedule's timezone.
    day = dt.datetime.now(ZoneInfo(settings.schedule_timezone)).date().isoformat()
    return settings.crawl_dir / "offline" / day if offline else settings.crawl_dir / day


def summary_table(summaries: list[CrawlSummary]) -> Table:
    table = Table(title="crawl summary")
    for column in ("platform", "status", "offers", "rejected", "stock known", "stock unknown", "duration"):
        table.add_column(column, justify="left" if column in ("platform", "status") else "right")
    for summary in summaries:
        stats = summary.stats
        table.add_row(
            summary.platform,
            f"[{STATUS_STYLE[summary.status]}]{summary.status}[/]",
            str(summary.items_yielded),
            str(stats.get("rejected", 0)),
            str(stats.get("stock_known", 0)),
            str(stats.get("stock_unknown", 0)),
            f"{stats.get('duration_s', 0):.1f} s",
        )
    return table

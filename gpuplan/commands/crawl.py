"""`gpuplan crawl`: run platform spiders (live, or replaying their snapshots) and show what they got.

The crawls run in one child process (`scrapers.crawl.runner`); SIGTERM and Ctrl-C end it with this
command (the CLI turns SIGTERM into an exception, and the runner kills its child on the way out),
and it ends by itself if this process is killed outright.

Exit status: 0 when at least one crawled platform produced offers (status ok or
partial), 1 when none did (every platform failed or was skipped). One broken
platform must not fail a daily run; all of them broken must.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from config.days import today
from config.settings import Settings
from gpuplan import display
from gpuplan.crawl_display import STATUS_STYLE, CrawlBoard
from scrapers.crawl.runner import DEFAULT_TIMEOUT_S, CrawlJob, CrawlSummary, crawl
from scrapers.crawl.summary import WORKED_STATUSES
from scrapers.middlewares import CONTACT_SETTING
from scrapers.registry import UnknownPlatform, platform_tokens, platforms

EXIT_NO_OFFERS = 1


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
        bool, typer.Option("--all", help="Crawl every platform, all at once in one crawl process.")
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
    replay: Annotated[
        Path | None,
        typer.Option(
            "--replay",
            help="Replay this snapshot folder (one recorded with --record, yours or a bug report's) "
            "instead of the network; the run is marked offline.",
        ),
    ] = None,
    timeout_s: Annotated[
        float, typer.Option("--timeout", min=1.0, help="Seconds before one platform's crawl is stopped.")
    ] = DEFAULT_TIMEOUT_S,
    wide: Annotated[bool, typer.Option("--wide", help="Every column of the table, however wide.")] = False,
) -> None:
    settings: Settings = ctx.obj
    if all_platforms == (platform is not None):
        raise typer.BadParameter("give one PLATFORM or --all")
    if all_platforms and (output is not None or record is not None or replay is not None):
        raise typer.BadParameter("--output, --record and --replay take one platform, not --all")
    offline = offline or replay is not None
    names = platforms() if all_platforms or platform is None else [platform]
    folder = output.parent if output is not None else out_dir or _default_dir(settings, offline)
    out = display.console()
    # Every platform at once, in one crawl process; each platform's line as it ends (with the
    # reason and, for a refused token, the variable to set), then the table.
    jobs = [CrawlJob(name, feed=output, record_dir=record, replay_dir=replay) for name in names]
    with CrawlBoard(out, names, platform_tokens(), offline=offline) as board:
        try:
            summaries = crawl(
                jobs,
                folder,
                offline=offline,
                timeout_s=timeout_s,
                settings={CONTACT_SETTING: settings.crawler_contact or ""},
                on_progress=board.update,
            )
        except UnknownPlatform as exc:
            raise typer.BadParameter(str(exc), param_hint="PLATFORM") from None
    display.print_table(out, SUMMARY_COLUMNS, [_row(s) for s in summaries], wide=wide, title="crawl summary")
    out.print(f"feeds and summaries in {folder}", highlight=False)
    if not any(s.status in WORKED_STATUSES for s in summaries):
        raise typer.Exit(EXIT_NO_OFFERS)


def _default_dir(settings: Settings, offline: bool) -> Path:
    # The same day the daily pipeline files crawls under: today in its schedule's timezone.
    day = today(settings.schedule_timezone).isoformat()
    return settings.crawl_dir / "offline" / day if offline else settings.crawl_dir / day


SUMMARY_COLUMNS = (
    display.Column("platform"),
    display.Column("status"),
    display.Column("offers", "right"),
    display.Column("rejected", "right"),
    display.Column("stock known", "right", drop=2),
    display.Column("stock unknown", "right", drop=1),
    display.Column("duration", "right"),
)


def _row(summary: CrawlSummary) -> list[str | Text]:
    stats = summary.stats
    return [
        summary.platform,
        Text(summary.status, style=STATUS_STYLE[summary.status]),
        str(summary.items_yielded),
        str(stats.get("rejected", 0)),
        str(stats.get("stock_known", 0)),
        str(stats.get("stock_unknown", 0)),
        f"{stats.get('duration_s', 0):.1f} s",
    ]

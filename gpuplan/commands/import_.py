"""`gpuplan import FORMAT FILE...`: load public price history into the warehouse, marked as imported."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from config.settings import Settings
from config.shown_text import one_line
from gpuplan import display
from scrapers.crawl.summary import WORKED_STATUSES
from scrapers.history import formats
from warehouse.engine import connect
from warehouse.imports import FileReport, import_file


def register(app: typer.Typer) -> None:
    known = "; ".join(f"{name}: {fmt.description}" for name, fmt in formats.formats().items())
    app.command(
        "import",
        help="Load historical prices from public trackers into the offers history, one run per "
        f"platform and day with source import:FORMAT (never mixed up with our crawls). Formats: {known}.",
    )(import_command)


def import_command(
    ctx: typer.Context,
    file_format: Annotated[
        str, typer.Argument(metavar="FORMAT", help=f"One of: {', '.join(formats.formats())}.")
    ],
    files: Annotated[list[Path], typer.Argument(metavar="FILE...", help="Files to import, in any order.")],
    date: Annotated[
        dt.datetime | None,
        typer.Option(
            "--date",
            formats=["%Y-%m-%d"],
            help="Observation day of every file (default: from each file or its name).",
        ),
    ] = None,
    platform: Annotated[
        str | None,
        typer.Option(
            "--platform",
            "-p",
            help="Platform slug of a catalog file (default: from its name, e.g. lambda_vms_*.csv, "
            "runpod.csv); for a multi-platform file (observations), import only this platform.",
        ),
    ] = None,
    wide: Annotated[bool, typer.Option("--wide", help="Every column, however wide the terminal.")] = False,
) -> None:
    settings: Settings = ctx.obj
    try:
        chosen = formats.get(file_format)
    except KeyError as exc:
        raise typer.BadParameter(exc.args[0], param_hint="FORMAT") from None
    observed_on = date.date() if date else None
    out = display.console()
    with connect.writer(settings.warehouse) as con, _progress(out, files) as advance:
        reports = []
        for path in files:
            reports.append(import_file(con, chosen, path, observed_on=observed_on, platform=platform))
            advance(path)
    display.print_table(out, COLUMNS, [_row(report) for report in reports], wide=wide, title="import")
    for report in reports:
        for line in _problems(report):
            display.say(out, line, style="red")
    if not all(report.ok for report in reports):  # the rest is loaded; the exit status says not all of it
        raise typer.Exit(1)


COLUMNS = (
    display.Column("file", shrink=True),
    display.Column("runs", "right", legend="(platform, day) runs with offers"),
    display.Column("failed", "right"),
    display.Column("before", "right", drop=2, legend="runs an earlier import loaded"),
    display.Column("offers", "right"),
    display.Column("refused", "right", legend="rows"),
    display.Column("not GPU", "right", drop=1),
)


def _row(report: FileReport) -> list[str]:
    runs = report.runs
    if runs is None:
        return [report.path.name, "-", "-", "-", "-", "-", "-"]
    return [
        report.path.name,
        str(int(runs["status"].isin(WORKED_STATUSES).sum())),
        str(len(report.failed_runs)),
        str(int(runs["already_loaded"].sum())),
        str(report.offers_loaded),
        str(report.rows_refused),
        str(report.rows_not_gpu),
    ]


@contextmanager
def _progress(out: Console, files: list[Path]) -> Iterator[Callable[[Path], None]]:
    """A bar by bytes on a terminal (an observations file is megabytes and seconds to load); in a
    log, the table that follows says it all. Yields `advance(path)`, called when a file is done."""
    sizes = {path: path.stat().st_size if path.is_file() else 0 for path in files}
    if not display.is_live(out):
        yield lambda path: None
        return
    with Progress(
        SpinnerColumn(),
        TextColumn("importing {task.fields[name]}", markup=False),
        BarColumn(),
        DownloadColumn(),
        TimeElapsedColumn(),
        console=out,
        transient=True,
    ) as bar:
        # the file imported after each one, cut so the bar keeps its room at 80 columns
        names = [_short(path.name) for path in files[1:]] + [""]
        task = bar.add_task("import", total=sum(sizes.values()), name=_short(files[0].name))
        done = iter(names)

        def advance(path: Path) -> None:
            bar.update(task, advance=sizes[path], name=next(done))

        yield advance


def _short(name: str, cells: int = 28) -> str:
    name = one_line(name)
    return name if len(name) <= cells else f"{name[: cells - 1]}…"


def _problems(report: FileReport) -> list[str]:
    """One line per thing that went wrong; the messages name the file themselves."""
    if report.error is not None:
        return [f"not imported: {report.error}"]
    lines = [
        f"failed: {run.platform} {run.day:%Y-%m-%d}: {run.error}" for run in report.failed_runs.itertuples()
    ]
    lines += [f"refused rows of {report.path.name}: {reason}" for reason in report.refusals]
    return lines

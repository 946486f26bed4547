"""`gpuplan import FORMAT FILE...`: load public price history into the warehouse, marked as imported."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from gpuplan.settings import Settings
from scrapers.history import formats
from warehouse import connect
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
) -> None:
    settings: Settings = ctx.obj
    try:
        chosen = formats.get(file_format)
    except KeyError as exc:
        raise typer.BadParameter(exc.args[0], param_hint="FORMAT") from None
    observed_on = date.date() if date else None
    with connect.writer(settings.warehouse) as con:
        reports = [
            import_file(con, chosen, path, observed_on=observed_on, platform=platform) for path in files
        ]
    console = Console()
    console.print(_table(reports))
    for report in reports:
        for line in _problems(report):
            console.print(Text(line, style="red"))
    if not all(report.ok for report in reports):  # the rest is loaded; the exit status says not all of it
        raise typer.Exit(1)


def _table(reports: list[FileReport]) -> Table:
    table = Table(title="import")
    table.add_column("file", overflow="fold")
    for column in ("runs ok", "failed", "loaded before", "offers", "refused", "not GPU"):
        table.add_column(column, justify="right")
    for report in reports:
        runs = report.runs
        if runs is None:
            table.add_row(report.path.name, "-", "-", "-", "-", "-", "-")
            continue
        table.add_row(
            report.path.name,
            str(int(runs["status"].isin(["ok", "partial"]).sum())),
            str(len(report.failed_runs)),
            str(int(runs["already_loaded"].sum())),
            str(report.offers_loaded),
            str(report.rows_refused),
            str(report.rows_not_gpu),
        )
    return table


def _problems(report: FileReport) -> list[str]:
    """One line per thing that went wrong; the messages name the file themselves."""
    if report.error is not None:
        return [f"not imported: {report.error}"]
    lines = [
        f"failed: {run.platform} {run.day:%Y-%m-%d}: {run.error}" for run in report.failed_runs.itertuples()
    ]
    lines += [f"refused rows of {report.path.name}: {reason}" for reason in report.refusals]
    return lines

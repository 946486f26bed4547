"""`gpuplan export DIR`: the open daily dataset (warehouse.export), and `--verify DIR` of its hashes."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Annotated

import typer

from config.settings import Settings

EXIT_DAMAGED = 1  # --verify found a file that is not its manifest's


def register(app: typer.Typer) -> None:
    app.command(
        "export",
        help="Write the warehouse's days as an open dataset in DIR: Parquet per table and day (hive "
        "partitions), the day's offers as CSV, and a manifest per day with row counts and sha256. A day "
        "already exported is rewritten only when it changed, as a new version. --verify checks every hash.",
    )(export_command)


def export_command(
    ctx: typer.Context,
    folder: Annotated[Path, typer.Argument(help="The dataset's folder (made if missing).")],
    day: Annotated[
        list[str] | None,
        typer.Option("--day", help="Only this day (YYYY-MM-DD); repeat for more. Default: every day."),
    ] = None,
    verify_only: Annotated[
        bool, typer.Option("--verify", help="Write nothing: check every file against its manifest.")
    ] = False,
) -> None:
    from warehouse import export
    from warehouse.engine import connect

    settings: Settings = ctx.obj
    if verify_only:
        problems = export.verify(folder)
        for problem in problems:
            typer.echo(problem)
        if problems:
            raise typer.Exit(EXIT_DAMAGED)
        typer.echo(f"{folder}: every file matches its manifest")
        return
    days = None
    if day:
        try:
            days = [dt.date.fromisoformat(text) for text in day]
        except ValueError as exc:
            raise typer.BadParameter(f"--day takes a date as YYYY-MM-DD ({exc})") from exc
    with connect.reader(settings.warehouse) as con:
        exported = export.export_days(con, folder, days)
    for item in exported:
        rows = ", ".join(f"{table} {count:,}" for table, count in item.rows.items())
        state = f"v{item.version} written" if item.changed else f"unchanged (v{item.version})"
        typer.echo(f"{item.day}: {state}: {rows}")
    if not exported:
        typer.echo("nothing to export: the warehouse holds no offers or plans yet")

"""`gpuplan load SUMMARY.json...`: load crawl files into the warehouse by hand."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from config.settings import Settings
from warehouse import connect
from warehouse.loading import LoadResult, SummaryError, load_crawl


def register(app: typer.Typer) -> None:
    app.command(
        "load",
        help="Load crawls into the warehouse from their summary files (<platform>.summary.json, which name "
        "the JSONL feed). A crawl already loaded is skipped; failed and empty crawls are recorded as such.",
    )(load_command)


def load_command(
    ctx: typer.Context,
    summaries: Annotated[
        list[Path], typer.Argument(help="Crawl summary files, e.g. crawls/2026-11-30/*.summary.json.")
    ],
) -> None:
    settings: Settings = ctx.obj
    results: list[LoadResult] = []
    unreadable: list[str] = []
    with connect.writer(settings.warehouse) as con:
        for path in summaries:
            try:
                results.append(load_crawl(con, path))
            except SummaryError as exc:
                unreadable.append(str(exc))  # the others still load
    if results:
        Console().print(_table(results))
    for message in unreadable:
        typer.echo(f"error: {message}", err=True)
    if unreadable:
        raise typer.Exit(1)


def _table(results: list[LoadResult]) -> Table:
    table = Table("platform", "status", "offers", "rejected", "note")
    for result in results:
        note = "already loaded, unchanged" if result.already_loaded else (result.error or "")
        table.add_row(
            result.platform, result.status, str(result.offers_loaded), str(result.items_rejected), Text(note)
        )
    return table

"""`gpuplan load SUMMARY.json...`: load crawl files into the warehouse by hand."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from config.settings import Settings
from config.shown_text import one_line
from gpuplan import display
from warehouse.engine import connect
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
        out = display.console()
        display.print_table(out, LOAD_COLUMNS, [_row(result) for result in results])
        # below the table, whole: a crawl's error is what the reader needs, and a cell would cut it
        for result in results:
            note = "already loaded, unchanged" if result.already_loaded else result.error
            if note:
                display.say(out, f"{result.platform}: {note}")
    for message in unreadable:
        typer.echo(f"error: {one_line(message)}", err=True)
    if unreadable:
        raise typer.Exit(1)


LOAD_COLUMNS = (
    display.Column("platform"),
    display.Column("status"),
    display.Column("offers", "right"),
    display.Column("rejected", "right"),
)


def _row(result: LoadResult) -> list[str]:
    return [result.platform, result.status, str(result.offers_loaded), str(result.items_rejected)]

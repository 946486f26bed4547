"""`gpuplan sql "QUERY"`: ask the published warehouse anything, read-only."""

from __future__ import annotations

import csv
import datetime as dt
import decimal
import json
import sys
import uuid
from enum import StrEnum
from typing import Annotated, Any

import duckdb
import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from gpuplan.settings import Settings
from warehouse import connect


class OutputFormat(StrEnum):
    table = "table"
    csv = "csv"
    json = "json"


def register(app: typer.Typer) -> None:
    app.command(
        "sql",
        help="Run SQL on the published warehouse, read-only (tables: offers, crawl_runs, fx_rates, gpus, "
        "cheapest_plans, ...; views: latest_offers, price_history_daily).",
    )(sql_command)


def sql_command(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help='The SQL to run, e.g. "SELECT * FROM latest_offers LIMIT 5".')],
    output: Annotated[
        OutputFormat, typer.Option("--format", help="table (rich, for people), csv or json (for programs).")
    ] = OutputFormat.table,
    max_rows: Annotated[
        int, typer.Option("--max-rows", min=1, help="Rows shown in table format; csv and json print all.")
    ] = 1000,
) -> None:
    settings: Settings = ctx.obj
    with connect.reader(settings.warehouse) as con:
        # Read-only goes beyond the warehouse file: no COPY TO, ATTACH or reading other files,
        # and the setting cannot be turned back on from the query.
        con.execute("SET enable_external_access = false")
        con.execute("SET lock_configuration = true")
        try:
            result = con.execute(query)
            columns = [column[0] for column in result.description or []]
            rows = result.fetchall() if columns else []
        except duckdb.Error as exc:
            typer.echo(f"error: {_one_line(exc)}", err=True)
            raise typer.Exit(1) from None
    if not columns:
        return
    if output is OutputFormat.csv:
        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows([[_csv_value(value) for value in row] for row in rows])
    elif output is OutputFormat.json:
        records = [dict(zip(columns, row, strict=True)) for row in rows]
        typer.echo(json.dumps(records, default=_json_value, ensure_ascii=False, indent=1))
    else:
        Console().print(_table(columns, rows, max_rows))


def _one_line(exc: duckdb.Error) -> str:
    first = str(exc).strip().splitlines()[0]
    if "read-only mode" in first or "file system operations are disabled" in first:
        return f"gpuplan sql is read-only: {first}"
    return first


def _json_value(value: Any) -> Any:
    """JSON for the values DuckDB returns that json cannot write by itself."""
    if isinstance(value, dt.date | dt.time):  # datetime is a date
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, uuid.UUID | dt.timedelta):
        return str(value)
    if isinstance(value, bytes):
        return value.hex()
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


def _csv_value(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, list | dict):
        return json.dumps(value, default=_json_value, ensure_ascii=False)
    return value


def _table(columns: list[str], rows: list[tuple[Any, ...]], max_rows: int) -> Table:
    table = Table(*columns, caption=f"{len(rows)} row(s)")
    for row in rows[:max_rows]:
        # Text, not str: data such as "[U] 71" must not be read as rich markup
        table.add_row(*(Text("" if value is None else str(value)) for value in row))
    if len(rows) > max_rows:
        table.caption = f"{len(rows)} rows, first {max_rows} shown (--max-rows, or --format csv for all)"
    return table

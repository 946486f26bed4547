"""`gpuplan sql "QUERY"`: ask the published warehouse anything, read-only and bounded.

The query comes from the argument or from `-f FILE` (`-f -` is stdin), so a query of any length
can be passed. With neither, `gpuplan sql` is a shell (`gpuplan.sql_shell`): a prompt on a
terminal, else the statements on stdin, each run and answered in turn. Every statement runs in
`warehouse.sandbox`: read-only, interrupted after `--timeout` seconds, within a memory limit,
spilling only to a private temp folder, fetching no more than `--max-rows`. People's formats
(table: DuckDB's own box; columns; line) are `gpuplan.sql_tables`'s. Output is made safe
to look at and to open: control characters (terminal escape sequences, a carriage return that
rewrites a line, bidi overrides) in crawled text are shown as `\\x1b`-style escapes in the people's
formats and in CSV, and a CSV text cell that a spreadsheet would run as a formula (`=`, `+`, `-`, `@`
first) gets a leading `'` (OWASP's CSV-injection advice). JSON is for programs: it escapes
control characters itself.

`run_query` is the whole path from text to output; the shell runs one statement at a time through it.
"""

from __future__ import annotations

import csv
import datetime as dt
import decimal
import json
import sys
import uuid
from enum import StrEnum
from pathlib import Path
from typing import IO, Annotated, Any

import typer

from config.settings import Settings
from config.shown_text import one_line, visible
from gpuplan import sql_tables
from warehouse.sandbox import Answer, Sandbox, SqlError, sandbox

TABLE_MAX_ROWS = 1000  # rows a table shows unless --max-rows says otherwise
MAX_QUERY_BYTES = 16 * 1024 * 1024  # far past any query a person writes; stops `-f /dev/zero`
_FORMULA_START = ("=", "+", "-", "@")


class OutputFormat(StrEnum):
    table = "table"
    line = "line"
    columns = "columns"
    csv = "csv"
    json = "json"


# What people read: fetched up to TABLE_MAX_ROWS, shown by gpuplan.sql_tables.
FOR_PEOPLE = frozenset({OutputFormat.table, OutputFormat.line, OutputFormat.columns})


def register(app: typer.Typer) -> None:
    app.command(
        "sql",
        help="Run SQL on the published warehouse, read-only and bounded in time and memory (tables: offers, "
        "crawl_runs, fx_rates, gpus, cheapest_plans, ...; views: latest_offers, price_history_daily).",
    )(sql_command)


def sql_command(
    ctx: typer.Context,
    query: Annotated[
        str | None,
        typer.Argument(
            help='The SQL to run, e.g. "SELECT * FROM latest_offers LIMIT 5" (or -f). None: a shell '
            "(a prompt with history on a terminal; else the statements on stdin, one after another)."
        ),
    ] = None,
    file: Annotated[
        Path | None,
        typer.Option("-f", "--file", help="Read the query from this file ('-' for stdin): any length."),
    ] = None,
    output: Annotated[
        OutputFormat,
        typer.Option(
            "--format",
            help="For people: table (DuckDB's box, floats to 4 figures), line (one column a line, every "
            "column) or columns (the box on its side); for programs: csv or json (exact).",
        ),
    ] = OutputFormat.table,
    max_rows: Annotated[
        int | None,
        typer.Option(
            "--max-rows",
            min=1,
            help=f"Fetch at most this many rows (table, line, columns: {TABLE_MAX_ROWS} unless given, the "
            f"table showing {sql_tables.SHOWN_ROWS}; csv and json: all).",
        ),
    ] = None,
    timeout: Annotated[
        float | None,
        typer.Option(
            "--timeout",
            min=0.001,
            help="Stop the query after this many seconds (default GPUPLAN_SQL_TIMEOUT_S, 300).",
        ),
    ] = None,
    memory_limit: Annotated[
        str | None,
        typer.Option(
            "--memory-limit",
            help="DuckDB memory limit, e.g. 4GB (default GPUPLAN_SQL_MEMORY_LIMIT, a quarter of RAM).",
        ),
    ] = None,
) -> None:
    settings: Settings = ctx.obj
    shell = query is None and file is None
    # the prompt reads stdin itself; anything else is read whole (and bounded) first
    text = None if shell and sys.stdin.isatty() else _query_text(query, file)
    limit = memory_limit or settings.sql_memory_limit
    timeout_s = timeout or settings.sql_timeout_s
    try:
        with sandbox(settings.warehouse, memory_limit=limit) as box:
            if not shell:
                run_query(box, text or "", output, max_rows, timeout_s, sys.stdout)
                return
            from gpuplan import sql_shell  # it imports this module: here, not at the top

            session = sql_shell.Session(box, output, max_rows, timeout_s, sys.stdout, sys.stderr)
            if text is None:
                sql_shell.interactive(session, settings.warehouse.with_name(sql_shell.HISTORY_FILE))
            elif not sql_shell.run_script(session, text):
                raise typer.Exit(1)
    except SqlError as error:
        typer.echo(f"error: {one_line(str(error))}", err=True)  # DuckDB may quote the data
        raise typer.Exit(1) from None
    except BrokenPipeError:  # `gpuplan sql ... | head`: the reader has all it wants
        sys.stderr.close()
        raise typer.Exit(0) from None


def run_query(
    box: Sandbox, query: str, output: OutputFormat, max_rows: int | None, timeout_s: float, out: IO[str]
) -> None:
    """Run one query in `box` and write its answer to `out` as `output`; raises SqlError."""
    fetched = max_rows if max_rows is not None or output not in FOR_PEOPLE else TABLE_MAX_ROWS
    answer = box.rows(query, timeout_s=timeout_s, max_rows=fetched)
    if not answer.columns:
        return
    if output is OutputFormat.csv:
        _write_csv(answer, out)
        return
    if output is OutputFormat.json:
        _write_json(answer, out)
        return
    rows = [row for batch in answer.batches for row in batch]
    if output is OutputFormat.line:
        sql_tables.write_lines(out, answer.columns, rows)
    else:
        shown = max_rows if max_rows is not None else sql_tables.SHOWN_ROWS
        transposed = output is OutputFormat.columns
        sql_tables.write_box(out, answer.columns, answer.types, rows, shown_rows=shown, transposed=transposed)
    if answer.more:
        out.write(f"first {len(rows)} rows fetched, more not fetched (--max-rows, or --format csv for all)\n")


def _query_text(query: str | None, file: Path | None) -> str:
    if query is not None and file is not None:
        raise typer.BadParameter("give the query or -f FILE, not both", param_hint="-f")
    if query is not None:
        return query
    if file is None and sys.stdin.isatty():
        raise typer.BadParameter(
            'give a query: gpuplan sql "SELECT ...", -f FILE, or on stdin', param_hint="QUERY"
        )
    where = "stdin" if file is None or str(file) == "-" else str(file)
    try:
        if where == "stdin":
            data = sys.stdin.buffer.read(MAX_QUERY_BYTES + 1)
        else:
            with open(file or "", "rb") as handle:  # a FIFO is fine here: <(make_query) is one
                data = handle.read(MAX_QUERY_BYTES + 1)
    except OSError as error:
        raise typer.BadParameter(f"cannot read {where}: {error.strerror or error}", param_hint="-f") from None
    if len(data) > MAX_QUERY_BYTES:
        raise typer.BadParameter(f"the query in {where} is over {MAX_QUERY_BYTES:,} bytes", param_hint="-f")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise typer.BadParameter(f"{where} is not UTF-8 text (byte {error.start})", param_hint="-f") from None


def _csv_cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, list | dict):
        value = json.dumps(value, default=_json_value, ensure_ascii=False)
    if not isinstance(value, str):
        return value
    text = visible(value)
    return "'" + text if text.startswith(_FORMULA_START) and not _is_number(text) else text


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _write_csv(answer: Answer, out: IO[str]) -> None:
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([_csv_cell(name) for name in answer.columns])
    for batch in answer.batches:
        writer.writerows([[_csv_cell(value) for value in row] for row in batch])


def _write_json(answer: Answer, out: IO[str]) -> None:
    """A JSON array of objects, written a batch at a time."""
    first = True
    out.write("[")
    for batch in answer.batches:
        for row in batch:
            record = json.dumps(
                dict(zip(answer.columns, row, strict=True)), default=_json_value, ensure_ascii=False
            )
            out.write(("\n" if first else ",\n") + record)
            first = False
    out.write("\n]\n" if not first else "]\n")


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

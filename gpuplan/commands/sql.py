"""`gpuplan sql "QUERY"`: ask the published warehouse anything, read-only and bounded.

The query comes from the argument or from `-f FILE` (`-f -` is stdin), so a query of any length
can be passed. With neither, `gpuplan sql` is a shell (`gpuplan.sql_shell`): a prompt on a
terminal, else the statements on stdin, each run and answered in turn. Every statement runs in
`warehouse.engine.sandbox`: read-only, interrupted after `--timeout` seconds, within a memory limit,
spilling only to a private temp folder, fetching no more than `--max-rows`. The answer's formats,
and what makes them safe to look at, are `gpuplan.sql_answers`'s.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from config.settings import Settings
from config.shown_text import one_line
from gpuplan import sql_shell, sql_tables
from gpuplan.sql_answers import TABLE_MAX_ROWS, OutputFormat, run_query
from warehouse.engine.sandbox import SqlError, sandbox

MAX_QUERY_BYTES = 16 * 1024 * 1024  # far past any query a person writes; stops `-f /dev/zero`


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

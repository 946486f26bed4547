"""One query's answer in each of `gpuplan sql`'s formats: the path from text to output.

People's formats (table: DuckDB's own box; columns; line) are `gpuplan.sql_tables`'s. Output is
made safe to look at and to open: control characters (terminal escape sequences, a carriage return
that rewrites a line, bidi overrides) in crawled text are shown as `\\x1b`-style escapes in the
people's formats and in CSV, and a CSV text cell that a spreadsheet would run as a formula (`=`,
`+`, `-`, `@` first) gets a leading `'` (OWASP's CSV-injection advice). JSON is for programs: it
escapes control characters itself.

`run_query` is used by the command (`gpuplan.commands.sql`) and, a statement at a time, by the
shell (`gpuplan.sql_shell`).
"""

from __future__ import annotations

import csv
import datetime as dt
import decimal
import json
import uuid
from enum import StrEnum
from typing import IO, Any

from config.shown_text import visible
from gpuplan import sql_tables
from warehouse.engine.sandbox import Answer, Sandbox

TABLE_MAX_ROWS = 1000  # rows a table shows unless --max-rows says otherwise
_FORMULA_START = ("=", "+", "-", "@")


class OutputFormat(StrEnum):
    table = "table"
    line = "line"
    columns = "columns"
    csv = "csv"
    json = "json"


# What people read: fetched up to TABLE_MAX_ROWS, shown by gpuplan.sql_tables.
FOR_PEOPLE = frozenset({OutputFormat.table, OutputFormat.line, OutputFormat.columns})


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

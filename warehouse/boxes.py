"""Rows drawn as DuckDB's own shell draws them: a box that fits a width, by DuckDB's renderer.

Public API:
    box(columns, types, rows, *, width, max_rows, transposed=False) -> str

DuckDB's renderer (`DuckDBPyRelation.show`) keeps the columns that fit at their width, elides the
middle ones (`…`) and the middle rows (`·`), and ends with what it left out ("5 rows  33 columns
(4 shown)"). It draws a relation, so the rows (already fetched, bounded and made safe by the
caller) become one on a private in-memory connection, each column cast back to its type (`types`,
as DuckDB names them) so the box shows the types and aligns numbers as the query's own answer
would. That connection reads nothing but these rows: external access is off before it is used.
DuckDB draws no box narrower than 80 columns, whatever `width` says (a narrower terminal wraps).
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Sequence
from typing import Any

import duckdb


def box(
    columns: Sequence[str],
    types: Sequence[str],
    rows: Sequence[tuple[Any, ...]],
    *,
    width: int,
    max_rows: int,
    transposed: bool = False,
) -> str:
    """`rows` under `columns` (of `types`) as DuckDB draws them within `width` cells, showing at
    most `max_rows` rows; `transposed`: one line per column, rows side by side (DuckDB's
    column-wise rendering, for a few wide rows)."""
    con = duckdb.connect()
    try:
        con.execute("SET enable_external_access = false")
        con.execute("SET lock_configuration = true")
        relation = _relation(con, columns, types, rows)
        drawn = io.StringIO()
        with contextlib.redirect_stdout(drawn):  # show() prints; it is the renderer's public door
            relation.show(max_width=width, max_rows=max_rows, render_mode="columns" if transposed else "rows")
        return drawn.getvalue().rstrip("\n")
    finally:
        con.close()


def _relation(
    con: duckdb.DuckDBPyConnection,
    columns: Sequence[str],
    types: Sequence[str],
    rows: Sequence[tuple[Any, ...]],
) -> duckdb.DuckDBPyRelation:
    """The rows as a relation of the given column names and types."""
    if rows:
        values = con.values(*rows)
    else:  # VALUES needs a row: one of NULLs, filtered out
        nulls = [duckdb.ConstantExpression(None) for _ in columns]
        values = con.values(*nulls).filter(duckdb.ConstantExpression(False))
    inferred = values.columns
    typed = [
        duckdb.ColumnExpression(name).cast(duckdb.sqltype(kind)).alias(column)
        for name, kind, column in zip(inferred, types, columns, strict=True)
    ]
    try:
        relation = values.project(*typed)
        relation.limit(1).fetchall()  # a cast that cannot be made fails here, not while drawing
    except duckdb.Error:
        # a type Python values do not come back to (a UNION, say): as inferred, under its name
        relation = values.project(
            *(
                duckdb.ColumnExpression(name).alias(column)
                for name, column in zip(inferred, columns, strict=True)
            )
        )
    return relation

"""Named queries: one `.sql` file per question in `warehouse/queries/<area>/`, named for its answer.

A query's name is its path without `.sql`: `queries.sql("load/insert_offers")`. Areas: `load/` (a
crawl's feed into the warehouse), `history/` (imports, trends, backfills), `fx/`, `gpus/`, `plans/`
(the daily plans), `jobs/` (the user's jobs), `digest/`, `drift/` and `checks/` (the asset checks),
`stamp/` (the writer's session stamp). Each file is one whole statement: a statement is never built
by joining files. Values are always bound parameters (`$name` in the SQL), never formatted in.
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

import duckdb

if TYPE_CHECKING:  # DuckDB imports pandas when a frame is asked for; a plain query needs none
    import pandas as pd


_NAME = re.compile(r"^[a-z]+/[a-z0-9_]+$")


@cache
def sql(name: str) -> str:
    """The text of `warehouse/queries/<area>/<name>.sql`, named "area/name"."""
    if _NAME.match(name) is None:
        raise KeyError(f"no named query {name!r}: names are 'area/name' (warehouse/queries/area/name.sql)")
    area, leaf = name.split("/")
    path = resources.files("warehouse").joinpath("queries", area, f"{leaf}.sql")
    if not path.is_file():
        raise KeyError(f"no named query {name!r} in warehouse/queries/")
    return path.read_text(encoding="utf-8")


def frame(con: duckdb.DuckDBPyConnection, name: str, **params: Any) -> pd.DataFrame:
    """Run a named query with bound parameters and return its rows as a DataFrame."""
    return con.execute(sql(name), params or None).df()


def records(con: duckdb.DuckDBPyConnection, name: str, **params: Any) -> list[dict[str, Any]]:
    """Run a named query with bound parameters and return its rows as dicts (column -> plain
    Python value: DATE a `date`, TIMESTAMP a naive `datetime`, NULL None), without pandas."""
    cursor = con.execute(sql(name), params or None)
    columns = [column[0] for column in cursor.description or ()]
    return [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]


def execute(con: duckdb.DuckDBPyConnection, name: str, **params: Any) -> None:
    """Run a named statement (no result) with bound parameters."""
    con.execute(sql(name), params or None)

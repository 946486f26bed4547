"""Markdown tables for asset and check metadata (the Dagster UI renders them)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd


def _cell(value: object) -> str:
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float):
        return f"{value:,.2f}"
    # a pipe would end the cell; a newline would end the row
    return str(value).replace("|", "\\|").replace("\n", " ")


def table(frame: pd.DataFrame, columns: Sequence[str], limit: int = 40) -> str:
    """The first `limit` rows of `frame` as a Markdown table of `columns`, saying how many were left out."""
    head = "| " + " | ".join(columns) + " |\n|" + "---|" * len(columns) + "\n"
    rows = "".join(
        "| " + " | ".join(_cell(value) for value in row) + " |\n"
        for row in frame.loc[:, list(columns)].head(limit).itertuples(index=False)
    )
    more = f"\n_{len(frame) - limit} more rows not shown._\n" if len(frame) > limit else ""
    return head + rows + more


def grid(
    headers: Sequence[str], rows: Sequence[Sequence[object]], right: Sequence[bool] = (), limit: int = 40
) -> str:
    """Rows already worded (what the CLI prints) as a Markdown table under `headers`; `right`: which
    columns are right-aligned (numbers)."""
    aligns = ["---:" if index < len(right) and right[index] else "---" for index in range(len(headers))]
    head = "| " + " | ".join(_cell(header) for header in headers) + " |\n| " + " | ".join(aligns) + " |\n"
    body = "".join("| " + " | ".join(_cell(str(value)) for value in row) + " |\n" for row in rows[:limit])
    more = f"\n_{len(rows) - limit} more rows not shown._\n" if len(rows) > limit else ""
    return head + body + more

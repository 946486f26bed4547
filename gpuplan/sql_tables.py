"""How `gpuplan sql` shows an answer to people: DuckDB's box, DuckDB's line mode.

- `table`: DuckDB's own renderer (`warehouse.boxes`), as its shell draws: the columns that fit at
  their width, the middle ones elided, and a footer saying what was left out ("5 rows  33 columns
  (4 shown)"); then, when columns were left out, where to see them all (`.mode line`). Floats and
  decimals are rounded to `SIGNIFICANT` figures, as a person reads them; csv and json stay exact.
- `columns`: the same box turned on its side (one line per column, the rows side by side).
- `line`: one `column = value` line each, a blank line between rows, values whole and exact.

Every value, and every column name, is made safe first (`config.shown_text.visible`): crawled text
drives no terminal.
"""

from __future__ import annotations

import decimal
import math
import re
from collections.abc import Sequence
from typing import IO, Any

from rich.console import Console

from config.shown_text import visible
from warehouse.boxes import box

SIGNIFICANT = 4  # figures of a float or decimal in a table
SHOWN_ROWS = 40  # rows a box shows (DuckDB's shell's default), the middle ones elided past that
WIDE_HINT = "wide rows: `.mode line` in the shell, or --format line, shows every column"
_HIDDEN = re.compile(r"(\d+) columns \((\d+) shown\)")


def write_box(
    out: IO[str],
    columns: Sequence[str],
    types: Sequence[str],
    rows: Sequence[tuple[Any, ...]],
    *,
    shown_rows: int = SHOWN_ROWS,
    transposed: bool = False,
) -> None:
    """The rows as DuckDB draws them, within the width of `out` (COLUMNS, the terminal, else 80)."""
    width = Console(file=out).width
    drawn = box(
        [visible(name) for name in columns],
        [_shown_type(kind) for kind in types],
        [tuple(_shown(value) for value in row) for row in rows],
        width=width,
        max_rows=max(shown_rows, 1),
        transposed=transposed,
    )
    out.write(drawn + "\n")
    hidden = _HIDDEN.search(drawn.rsplit("┘", 1)[-1])
    if hidden and int(hidden[2]) < int(hidden[1]):
        out.write(WIDE_HINT + "\n")


def write_lines(out: IO[str], columns: Sequence[str], rows: Sequence[tuple[Any, ...]]) -> None:
    """DuckDB's line mode: each value on a line of its own under its column's name."""
    names = [visible(name) for name in columns]
    width = max((len(name) for name in names), default=0)
    for index, row in enumerate(rows):
        if index:
            out.write("\n")
        for name, value in zip(names, row, strict=True):
            out.write(f"{name:>{width}} = {'NULL' if value is None else visible(str(value))}\n")


def round_figure(value: float) -> float:
    """`value` to SIGNIFICANT significant figures (12345.678 -> 12350.0, 0.0012345 -> 0.001234)."""
    return float(f"{value:.{SIGNIFICANT}g}") if math.isfinite(value) else value


def _shown(value: Any) -> Any:
    """A value as the box shows it: text made safe, floats and decimals rounded, inside lists too."""
    if isinstance(value, str):
        return visible(value)
    if isinstance(value, float):
        return round_figure(value)
    if isinstance(value, decimal.Decimal):
        return round_figure(float(value))
    if isinstance(value, list | tuple):
        return type(value)(_shown(item) for item in value)
    if isinstance(value, dict):
        return {_shown(key): _shown(item) for key, item in value.items()}
    return value


def _shown_type(kind: str) -> str:
    """The type a column is shown as: a rounded decimal is a double (DECIMAL(18,3) would pad
    1.235 to 1.235000's scale), inside a list or struct too."""
    return re.sub(r"\bDECIMAL\(\d+,\s*\d+\)|\bFLOAT\b|\bREAL\b", "DOUBLE", kind)

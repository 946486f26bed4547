"""Tables that fit the terminal (issue 20): one row per line at 80 columns, every column when the
terminal is wide enough or when asked (`--wide`), only the flexible text cut short, never a number
before it; and the short names a table gives GPUs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache

import pandas as pd
from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from sizing import gpu_names


@cache
def short_gpu(gpu_model: str) -> str:
    """The shortest name people write that means this card (`910B`, `4090 48G`, `H100`)."""
    names = [gpu_model, *gpu_names.aliases(gpu_model)]
    names += [name.split(" ", 1)[1] for name in names if name.startswith(("RTX ", "Ascend "))]
    return min((name for name in names if _means(name, gpu_model)), key=lambda name: (len(name), name))


def _means(name: str, gpu_model: str) -> bool:
    try:
        return gpu_names.resolve(name).gpu_model == gpu_model
    except gpu_names.UnknownGpu:
        return False


def money(value: float | None, digits: int = 0) -> str:
    return "" if value is None or pd.isna(value) else f"{value:,.{digits}f}"


def show_table(console: Console, build: Callable[[bool, int | None], Table], wide: bool) -> None:
    """Print `build(every_column, max_width)`: every column when they fit the terminal or when asked
    (`--wide`: as wide as it takes, the terminal wraps), else the columns that fit in 80, one plan
    per line, the plan text cut short if it must."""
    full = build(True, None)
    needed = console.measure(full, options=console.options.update(max_width=10_000)).maximum
    if needed <= console.width:
        console.print(full)
    elif wide:
        Console(width=needed, force_terminal=console.is_terminal, no_color=console.no_color).print(full)
    else:
        console.print(build(False, console.width))


def _width(cell: str) -> int:
    return len(Text.from_markup(cell).plain)


MIN_FLEXIBLE = 8


def fitted_table(
    title: str,
    caption: str,
    columns: Sequence[Column],
    rows: Sequence[Sequence[str]],
    max_width: int | None = None,
) -> Table:
    """A table of one line per row. Within `max_width` the flexible columns (plan, offer, region)
    are cut short first, with an ellipsis, down to MIN_FLEXIBLE; numbers only after them."""
    widths = [
        max(
            [
                len(column.header),
                *(len(Text.from_markup(row[index]).plain) for row in rows if index < len(row)),
            ]
        )
        for index, column in enumerate(columns)
    ]
    # each cell has one space of right padding, and the (blank) column rule sits between cells
    excess = sum(widths) + 2 * len(widths) - 1 - (max_width or 10**9)
    for index in sorted(range(len(columns)), key=lambda i: -widths[i]):
        if excess <= 0:
            break
        if columns[index].flexible:
            cut = min(excess, widths[index] - MIN_FLEXIBLE)
            if cut > 0:
                widths[index] -= cut
                excess -= cut
    table = Table(
        title=title,
        title_justify="left",
        box=box.SIMPLE_HEAD,
        show_edge=False,
        padding=(0, 1, 0, 0),
        caption=caption,
        caption_justify="left",
    )
    for column, width in zip(columns, widths, strict=True):
        table.add_column(
            column.header,
            justify="right" if column.right and not column.flexible else "left",
            no_wrap=True,
            overflow="ellipsis",
            width=width,
        )
    for row in rows:
        table.add_row(*row)
    return table


@dataclass(frozen=True)
class Column:
    header: str
    right: bool = True  # numbers
    flexible: bool = False  # may be cut short

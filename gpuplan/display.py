"""How every command shows things: tables that fit the terminal, and live or plain progress.

Two rules, one home:
- **Tables fit.** A table prints one row per line within the console's width (`COLUMNS`, else the
  terminal's, else 80). Columns that do not fit are left out in a stated order, the ones that may
  shrink are cut with an ellipsis, and a legend below says what the short headers mean and what
  was left out. `wide=True` shows every column at full width, however long the lines get.
  Figures in cells read one way everywhere (`number`: thousands separated, blank when missing).
  Machine formats (`--json`, `--format csv`) never come through here.
- **Crawled text drives nothing.** Every cell, title and legend of a table is made safe by
  `config.shown_text` (an ESC, a carriage return or a bidi override is shown as `\x1b`, `\r`,
  `\u202e`), and a line that may carry crawled or imported text is printed with `say`: made safe,
  on one line, never read as rich markup (`[link=...]` would plant a hyperlink).
- **Live on a terminal, plain lines otherwise.** On a terminal, progress is a rich live display
  that redraws in place; in logs, CI and pipes it is a few plain lines that read well afterwards
  (`is_live`).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Literal, TypeVar

from rich import box
from rich.console import Console
from rich.measure import Measurement
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Span, Text

from config.shown_text import is_safe, one_line, visible

T = TypeVar("T")

# Plain progress: one line each time this share of the work is done more (10 lines for a long job).
PLAIN_PROGRESS_STEP = 0.1
# Names shrink to this many cells before a droppable column is left out.
SHRINK_TO = 24
# A shrunk name keeps this many cells ("H100 SXM…"): less says nothing.
MIN_SHRUNK_WIDTH = 8
# A measuring width no table reaches: the natural width of a table is its width on this console.
_UNBOUNDED = 10_000

Cell = str | Text


def number(value: float | None, digits: int = 0) -> str:
    """A figure in a table cell: `12,345` or `4.3` (`digits` after the point), blank when missing
    (None, NaN, pandas' NA: no pandas import, most commands never load it)."""
    if value is None:
        return ""
    try:
        figure = float(value)
    except TypeError:  # pandas' NA
        return ""
    return "" if math.isnan(figure) else f"{figure:,.{digits}f}"


def safe(cell: Cell) -> Text:
    """`cell` as a Text that drives no terminal (`config.shown_text.visible`), its styles kept."""
    if isinstance(cell, str):
        return Text(visible(cell))
    if is_safe(cell.plain):
        return cell
    shown = Text(style=cell.style, justify=cell.justify, overflow=cell.overflow, no_wrap=cell.no_wrap)
    for piece in cell.divide(range(1, len(cell.plain))):  # one character a piece: only when unsafe
        plain = visible(piece.plain)
        spans = [Span(0, len(plain), span.style) for span in piece.spans]
        shown.append_text(Text(plain, spans=spans))
    return shown


def say(out: Console, text: str, *, style: str = "") -> None:
    """Print `text`, which may carry crawled or imported text, as one safe line (module doc)."""
    out.print(Text(one_line(text), style=style), highlight=False, soft_wrap=True)


def console(*, stderr: bool = False) -> Console:
    """The console a command prints on: rich's width rule (COLUMNS, the terminal, else 80).

    Not on a terminal and without COLUMNS (a log, a pipe, cron mail), text is not wrapped at that
    80: a sentence stays one line for grep and for the reader. Tables still fit the width (their
    columns cut, never wrap); COLUMNS set asks for its width, as a terminal's would.
    """
    out = Console(stderr=stderr)
    if not out.is_terminal and not os.environ.get("COLUMNS"):
        out.soft_wrap = True
    return out


def is_live(out: Console) -> bool:
    """True when `out` is a terminal that can redraw in place (not a pipe, a log or a dumb terminal)."""
    return out.is_terminal and not out.is_dumb_terminal


@dataclass(frozen=True)
class Column:
    """One column of a fitted table.

    `drop`: 0 = always shown; otherwise the column may be left out at narrow widths, the highest
    number first. `shrink`: the column may be cut with an ellipsis (names; never numbers) when the
    kept columns are still too wide. `legend`: what a short header means, printed below the table.
    """

    header: str
    justify: Literal["left", "right"] = "left"
    drop: int = 0
    shrink: bool = False
    legend: str | None = None


@dataclass(frozen=True)
class Fitted:
    """A table laid out for one width: the table, the lines below it, and the width to print at."""

    title: str | None  # printed above the table, whole: never wrapped into the table's width
    table: Table
    legend: tuple[str, ...]
    width: int


def fit_table(
    out: Console,
    columns: Sequence[Column],
    rows: Iterable[Sequence[Cell]],
    *,
    wide: bool = False,
    title: str | None = None,
    caption: str | None = None,
    meanings: str | None = None,
) -> Fitted:
    """Lay out `rows` under `columns` so each row is one line within `out.width` (see module doc).
    `meanings`: a legend line of the caller's in place of the columns' own (a short one)."""
    texts = [[safe(cell) for cell in row] for row in rows]
    shown = list(range(len(columns)))
    if not wide:
        # A name cut to SHRINK_TO cells is still read; past that, columns go before names shrink more.
        for index in sorted(
            (i for i, column in enumerate(columns) if column.drop), key=lambda i: -columns[i].drop
        ):
            trial = _table(columns, texts, shown, caption)
            for position, shown_index in enumerate(shown):
                if columns[shown_index].shrink:
                    trial.columns[position].max_width = SHRINK_TO
            if _natural_width(out, trial) <= out.width:
                break
            shown.remove(index)
    table = _table(columns, texts, shown, caption)
    natural = _natural_width(out, table)
    if not wide and natural > out.width:
        _shrink(columns, texts, shown, table, natural - out.width)
    if meanings is None:
        meanings = "; ".join(f"{columns[i].header}: {columns[i].legend}" for i in shown if columns[i].legend)
    hidden = [columns[i].header for i in range(len(columns)) if i not in shown]
    legend = [meanings] if meanings else []
    if hidden:
        legend.append(f"hidden at this width: {', '.join(hidden)}; --wide shows all")
    return Fitted(
        None if title is None else one_line(title),
        table,
        tuple(one_line(line) for line in legend),
        natural if wide else min(natural, out.width),
    )


def print_table(
    out: Console,
    columns: Sequence[Column],
    rows: Iterable[Sequence[Cell]],
    *,
    wide: bool = False,
    title: str | None = None,
    caption: str | None = None,
    meanings: str | None = None,
) -> None:
    """`fit_table`, printed: the table, then its legend lines (dim), each one line."""
    fitted = fit_table(out, columns, rows, wide=wide, title=title, caption=caption, meanings=meanings)
    width = out.width
    out.width = max(width, fitted.width)  # rich never prints wider than its console
    try:
        if fitted.title:
            out.print(Text(fitted.title, style="bold"))
        out.print(fitted.table, width=fitted.width)
        for line in fitted.legend:
            out.print(Text(line, style="dim"))
    finally:
        out.width = width


def _table(
    columns: Sequence[Column],
    rows: list[list[Text]],
    shown: list[int],
    caption: str | None,
) -> Table:
    # No vertical rules: two spaces between columns (the blank rule and one cell of padding on the
    # right) are worth more than lines at 80 columns.
    table = Table(
        caption=None if caption is None else one_line(caption),
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
        padding=(0, 1, 0, 0),
        caption_justify="left",
    )
    for index in shown:
        column = columns[index]
        table.add_column(safe(column.header), justify=column.justify, no_wrap=True, overflow="ellipsis")
    for row in rows:
        table.add_row(*(row[index] for index in shown))
    return table


def _shrink(
    columns: Sequence[Column], rows: list[list[Text]], shown: list[int], table: Table, excess: int
) -> None:
    """Take `excess` cells of width from the shrinkable columns, the widest first: names give way,
    numbers never."""
    widths = {
        position: max([safe(columns[index].header).cell_len, *(row[index].cell_len for row in rows)])
        for position, index in enumerate(shown)
        if columns[index].shrink
    }
    while excess > 0 and widths:
        widest = max(widths, key=lambda position: widths[position])
        if widths[widest] <= MIN_SHRUNK_WIDTH:
            break
        widths[widest] -= 1
        excess -= 1
    for position, width in widths.items():
        table.columns[position].max_width = width


def _natural_width(out: Console, table: Table) -> int:
    return Measurement.get(out, out.options.update_width(_UNBOUNDED), table).maximum


def track(
    items: Iterable[T], total: int, description: str, out: Console, *, unit: str = "done"
) -> Iterator[T]:
    """Yield `items`, showing how many of `total` are done: a live bar on a terminal, else a plain
    line at every tenth (and the last) so a log shows the pace without a line per item."""
    if is_live(out):
        with _bar(out) as bar:
            task = bar.add_task(description, total=total)
            for item in items:
                yield item
                bar.advance(task)
        return
    step = max(1, math.ceil(total * PLAIN_PROGRESS_STEP))
    for done, item in enumerate(items, start=1):
        yield item
        if done % step == 0 or done == total:
            out.print(f"{description}: {done}/{total} {unit}", highlight=False)


def _bar(out: Console) -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=out,
        transient=True,
    )


def tracker(
    out: Console, description: str, *, unit: str = "done"
) -> Callable[[Iterable[T], int], Iterable[T]]:
    """`track` as the `progress(items, total)` hook the warehouse's long loops take."""

    def progress(items: Iterable[T], total: int) -> Iterable[T]:
        return track(items, total, description, out, unit=unit)

    return progress

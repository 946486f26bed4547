"""The digest's small chart: lowest price per GPU-hour per day for the main GPU models, as PNG bytes."""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from itertools import groupby
from operator import attrgetter
from typing import Any

from digest.catalogue import PRIMARY_CURRENCY
from digest.content import CHART_DAYS, PricePoint

# Inches at 100 dpi are the CSS pixels the mail shows (640 x 300 fits a mail column); drawn at 2x
# for high-density screens (1280 x 600 pixels, ~60 KB).
WIDTH_IN, HEIGHT_IN, DPI = 6.4, 3.0, 200
# The price axis' ticks: 1-2-5 steps, so a narrow range has labels and a wide one is not crowded.
TICK_STEPS = (1.0, 2.0, 5.0)
MAX_DAY_TICKS = 8


def log_bounds(low: float, high: float) -> tuple[float, float]:
    """The 1-2-5 ticks just below `low` and just above `high`: the log axis starts and ends on a
    labelled tick, so no price sits in unlabelled space above the top label."""
    ladder = [step * 10.0**exponent for exponent in range(-4, 7) for step in TICK_STEPS]
    bottom = max((tick for tick in ladder if tick <= low), default=ladder[0])
    top = min((tick for tick in ladder if tick >= high), default=ladder[-1])
    return bottom, top if top > bottom else bottom * 2


def style_price_axes(
    axes: Any,
    days: tuple[date, date],
    prices: tuple[float, float],
    *,
    symbol: str,
    axis_label: str,
    date_format: str = "%b %d",
) -> None:
    """The price charts' axes (the digest's and `gpuplan history --chart`): days from the first
    with data to the last, ticked on whole days (at most MAX_DAY_TICKS labels); prices on a log
    axis from the 1-2-5 tick below the lowest to the one above the highest, both labelled.

    `axes`: a matplotlib Axes; `days`: (first, last); `prices`: (lowest, highest)."""
    from matplotlib.dates import DateFormatter, DayLocator, date2num
    from matplotlib.ticker import LogLocator, NullFormatter, StrMethodFormatter

    first, last = days
    span = (last - first).days + 1
    axes.set_xlim(date2num(first) - 0.5, date2num(last) + 0.5)
    axes.xaxis.set_major_locator(DayLocator(interval=max(1, math.ceil(span / MAX_DAY_TICKS))))
    axes.xaxis.set_major_formatter(DateFormatter(date_format))
    axes.set_yscale("log")
    axes.set_ylim(*log_bounds(*prices))
    axes.yaxis.set_major_locator(LogLocator(base=10, subs=TICK_STEPS))
    axes.yaxis.set_major_formatter(StrMethodFormatter(symbol + "{x:.2f}"))
    axes.yaxis.set_minor_formatter(NullFormatter())
    axes.set_ylabel(axis_label, fontsize=8)
    axes.tick_params(labelsize=7, which="both")
    axes.grid(True, which="major", linewidth=0.4, alpha=0.5)


def legend_below(figure: Any, axes: Any) -> None:
    """The lines' legend under the plot, in columns: beside it, it takes a phone's width from the plot."""
    handles, labels = axes.get_legend_handles_labels()
    figure.legend(
        handles, labels, loc="outside lower center", ncols=min(len(labels), 4), fontsize=7, frameon=False
    )


@dataclass(frozen=True)
class ChartLine:
    """What a chart line says, for readers of the text version: last value, 30-day low and high,
    in the reader's currency (`PricePoint` prices: USD, and CNY where known)."""

    gpu_model: str
    last_day: date
    last_usd_per_gpu_hour: float
    last_cny_per_gpu_hour: float | None
    low_usd_per_gpu_hour: float
    low_cny_per_gpu_hour: float | None
    high_usd_per_gpu_hour: float
    high_cny_per_gpu_hour: float | None


def chart_currency(history: tuple[PricePoint, ...], lang: str) -> str:
    """The chart's currency: the reader's, where every point has it (CNY is missing for a day
    without an exchange rate), else USD."""
    wanted = PRIMARY_CURRENCY[lang]
    if wanted == "CNY" and any(point.min_cny_per_gpu_hour is None for point in history):
        return "USD"
    return wanted


def chart_lines_of(history: tuple[PricePoint, ...]) -> tuple[ChartLine, ...]:
    """One ChartLine per GPU model of `history`, in name order."""
    lines = []
    for gpu_model, points in groupby(
        sorted(history, key=attrgetter("gpu_model", "day")), attrgetter("gpu_model")
    ):
        series = list(points)
        low = min(series, key=attrgetter("min_usd_per_gpu_hour"))
        high = max(series, key=attrgetter("min_usd_per_gpu_hour"))
        last = series[-1]
        lines.append(
            ChartLine(
                gpu_model,
                last.day,
                last.min_usd_per_gpu_hour,
                last.min_cny_per_gpu_hour,
                low.min_usd_per_gpu_hour,
                low.min_cny_per_gpu_hour,
                high.min_usd_per_gpu_hour,
                high.min_cny_per_gpu_hour,
            )
        )
    return tuple(lines)


def price_chart_png(
    history: Sequence[PricePoint],
    last_day: date,
    *,
    currency: str = "USD",
    axis_label: str = "USD per GPU-hour",
    date_format: str = "%b %d",
) -> bytes:
    """Draw `history` (one line per GPU model) from its first day (at most CHART_DAYS days back) to
    `last_day`, in
    `currency` ('USD' | 'CNY': every point must have that price), the y axis titled `axis_label`.

    The y axis is logarithmic so a 0.3 USD card and a 3 USD card both show their moves. Labels
    must be Latin script: matplotlib's bundled font has no CJK glyphs, and a mail server has none.
    """
    # Imported here: matplotlib takes about a second to import, and every `gpuplan` start imports
    # all commands. The Figure API (no pyplot) keeps no global state and always renders with Agg.
    from matplotlib.dates import date2num
    from matplotlib.figure import Figure

    figure = Figure(figsize=(WIDTH_IN, HEIGHT_IN), dpi=DPI, layout="constrained")
    axes = figure.subplots()
    ordered = sorted(history, key=attrgetter("gpu_model", "day"))
    for gpu_model, points in groupby(ordered, key=attrgetter("gpu_model")):
        series = list(points)
        axes.plot(
            [date2num(point.day) for point in series],
            [_price(point, currency) for point in series],
            marker="o",
            markersize=2.5,
            linewidth=1.4,
            label=gpu_model,
        )
    # from the first day with data (a new install has a day or two), never more than CHART_DAYS
    first = max(min(point.day for point in ordered), last_day - timedelta(days=CHART_DAYS - 1))
    prices = [_price(point, currency) for point in ordered]
    style_price_axes(
        axes,
        (first, last_day),
        (min(prices), max(prices)),
        symbol="¥" if currency == "CNY" else "$",
        axis_label=axis_label,
        date_format=date_format,
    )
    legend_below(figure, axes)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return buffer.getvalue()


def _price(point: PricePoint, currency: str) -> float:
    if currency == "CNY":
        if point.min_cny_per_gpu_hour is None:
            raise ValueError(f"{point.gpu_model} on {point.day} has no CNY price to chart")
        return point.min_cny_per_gpu_hour
    return point.min_usd_per_gpu_hour

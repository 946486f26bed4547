"""The digest's small chart: lowest price per GPU-hour per day for the main GPU models, as PNG bytes."""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from itertools import groupby
from operator import attrgetter

from digest.catalogue import PRIMARY_CURRENCY
from digest.content import CHART_DAYS, PricePoint

# Pixels = inches x dpi: 640 x 280 fits a mail column without scaling and stays ~30 KB.
WIDTH_IN, HEIGHT_IN, DPI = 6.4, 2.8, 100


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
    """Draw `history` (one line per GPU model) over the CHART_DAYS days ending `last_day`, in
    `currency` ('USD' | 'CNY': every point must have that price), the y axis titled `axis_label`.

    The y axis is logarithmic so a 0.3 USD card and a 3 USD card both show their moves. Labels
    must be Latin script: matplotlib's bundled font has no CJK glyphs, and a mail server has none.
    """
    # Imported here: matplotlib takes about a second to import, and every `gpuplan` start imports
    # all commands. The Figure API (no pyplot) keeps no global state and always renders with Agg.
    from matplotlib.dates import DateFormatter, DayLocator, date2num
    from matplotlib.figure import Figure
    from matplotlib.ticker import LogLocator, NullFormatter, StrMethodFormatter

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
    axes.set_xlim(date2num(last_day - timedelta(days=CHART_DAYS - 1)), date2num(last_day))
    axes.xaxis.set_major_locator(DayLocator(interval=7))
    axes.xaxis.set_major_formatter(DateFormatter(date_format))
    axes.set_yscale("log")
    # Ticks at 1-2-5 steps: labelled often enough for a narrow range, never crowded for a wide one.
    axes.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    axes.yaxis.set_major_formatter(StrMethodFormatter(("¥" if currency == "CNY" else "$") + "{x:.2f}"))
    axes.yaxis.set_minor_formatter(NullFormatter())
    axes.set_ylabel(axis_label, fontsize=8)
    axes.tick_params(labelsize=7, which="both")
    axes.grid(True, which="major", linewidth=0.4, alpha=0.5)
    axes.legend(fontsize=7, frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return buffer.getvalue()


def _price(point: PricePoint, currency: str) -> float:
    if currency == "CNY":
        if point.min_cny_per_gpu_hour is None:
            raise ValueError(f"{point.gpu_model} on {point.day} has no CNY price to chart")
        return point.min_cny_per_gpu_hour
    return point.min_usd_per_gpu_hour

"""The digest's small chart: lowest USD per GPU-hour per day for the main GPU models, as PNG bytes."""

from __future__ import annotations

import io
from collections.abc import Sequence
from datetime import date, timedelta
from itertools import groupby
from operator import attrgetter

from digest.content import CHART_DAYS, PricePoint

# Pixels = inches x dpi: 640 x 280 fits a mail column without scaling and stays ~30 KB.
WIDTH_IN, HEIGHT_IN, DPI = 6.4, 2.8, 100


def price_chart_png(history: Sequence[PricePoint], last_day: date) -> bytes:
    """Draw `history` (one line per GPU model) over the CHART_DAYS days ending `last_day`.

    The y axis is logarithmic so a 0.3 USD card and a 3 USD card both show their moves.
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
            [point.min_usd_per_gpu_hour for point in series],
            marker="o",
            markersize=2.5,
            linewidth=1.4,
            label=gpu_model,
        )
    axes.set_xlim(date2num(last_day - timedelta(days=CHART_DAYS - 1)), date2num(last_day))
    axes.xaxis.set_major_locator(DayLocator(interval=7))
    axes.xaxis.set_major_formatter(DateFormatter("%b %d"))
    axes.set_yscale("log")
    # Ticks at 1-2-5 steps: labelled often enough for a narrow range, never crowded for a wide one.
    axes.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    axes.yaxis.set_major_formatter(StrMethodFormatter("${x:.2f}"))
    axes.yaxis.set_minor_formatter(NullFormatter())
    axes.set_ylabel("USD per GPU-hour", fontsize=8)
    axes.tick_params(labelsize=7, which="both")
    axes.grid(True, which="major", linewidth=0.4, alpha=0.5)
    axes.legend(fontsize=7, frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return buffer.getvalue()

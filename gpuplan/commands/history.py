"""`gpuplan history GPU`: min and median price per GPU-hour of a GPU over time, table and chart.

The GPU is named as people write it; a family name ("H100") answers for each of its cards with prices.
"""

from __future__ import annotations

import datetime as dt
import io
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated

import pandas as pd
import typer
from rich.console import Console

from config.days import today
from config.settings import Settings
from digest.chart import legend_below, style_price_axes
from gpuplan import display
from scrapers.history.platforms import platform_slug
from sizing import gpu_names
from warehouse import history
from warehouse.engine import connect

PRICING_CHOICES = ("on_demand", "spot", "any")
# Pixels = inches x dpi: 1000 x 450, wide enough for a year of daily points.
# More days than this (or --chart, which shows them) print a row per week instead of one per day.
MAX_DAILY_ROWS = 31
CHART_WIDTH_IN, CHART_HEIGHT_IN, CHART_DPI = 10.0, 4.5, 200  # 2x: sharp on high-density screens


def register(app: typer.Typer) -> None:
    app.command(
        "history",
        help="Min and median price per GPU-hour of one GPU model over time (crawls and imports), "
        "as a table and optionally a PNG chart.",
    )(history_command)


def history_command(
    ctx: typer.Context,
    gpu: Annotated[
        str,
        typer.Argument(
            help='GPU as people write it: "H100", "A100-80GB", "4090", "H100 SXM 80GB" (`gpuplan gpus` '
            "lists the names). A family name answers for each of its cards with prices."
        ),
    ],
    platform: Annotated[
        str | None,
        typer.Option("--platform", "-p", help="Only this platform (lambda, vastai; vast.ai works too)."),
    ] = None,
    days: Annotated[
        int, typer.Option("--days", min=1, help="How many days back from today (GPUPLAN_SCHEDULE_TZ).")
    ] = 90,
    pricing: Annotated[
        str,
        typer.Option("--pricing", help="on_demand, spot, or any (both together)."),
    ] = "on_demand",
    gpus_per_offer: Annotated[
        int | None, typer.Option("--gpus", min=1, help="Only offers of exactly this many GPUs (e.g. 1).")
    ] = None,
    chart: Annotated[
        Path | None, typer.Option("--chart", help="Also draw the min and median lines into this PNG file.")
    ] = None,
    daily: Annotated[
        bool,
        typer.Option(
            "--daily",
            help=f"A row per day even with --chart or over {MAX_DAILY_ROWS} days (otherwise a row per week).",
        ),
    ] = False,
    wide: Annotated[bool, typer.Option("--wide", help="Every column, however wide the terminal.")] = False,
) -> None:
    settings: Settings = ctx.obj
    if pricing not in PRICING_CHOICES:
        raise typer.BadParameter(
            f"--pricing must be one of {', '.join(PRICING_CHOICES)}", param_hint="--pricing"
        )
    platform = platform_slug(platform) if platform else None
    until = today(settings.schedule_timezone)
    since = until - dt.timedelta(days=days - 1)
    try:
        models = list(gpu_names.family_models(gpu))
        unknown = None
    except gpu_names.UnknownGpu as error:
        models, unknown = [gpu], error  # unless the warehouse prices a model the catalog lacks
    try:
        con = connect.reader(settings.warehouse)
    except connect.NoWarehouseError:
        if unknown is not None:  # the name is the first thing to fix
            raise typer.BadParameter(str(unknown), param_hint="GPU") from None
        raise
    with con:
        if unknown is not None and gpu not in history.priced_gpu_models(con)["gpu_model"].tolist():
            raise typer.BadParameter(str(unknown), param_hint="GPU")
        trends = {
            model: history.price_trend(
                con,
                model,
                since,
                until,
                platform=platform,
                pricing_type=None if pricing == "any" else pricing,
                gpu_count=gpus_per_offer,
            )
            for model in models
        }
    priced = {model: trend for model, trend in trends.items() if not trend.empty}
    if not priced:
        scope = _scope(" or ".join(models), platform, pricing, gpus_per_offer)
        typer.echo(f"no {scope} prices between {since} and {until}", err=True)
        raise typer.Exit(1)
    out = display.console()
    if len(models) > 1:
        unpriced = [model for model in models if model not in priced]
        out.print(
            f"{gpu!r} is {len(models)} cards; one table each"
            + (f" (no prices for {', '.join(unpriced)})" if unpriced else ""),
            highlight=False,
        )
    for model, trend in priced.items():
        scope = _scope(model, platform, pricing, gpus_per_offer)
        if daily or (chart is None and len(trend) <= MAX_DAILY_ROWS):
            _print_trend(out, trend, scope, wide)
        else:
            _print_weeks(out, trend, scope, wide)
    if chart is not None:
        chart.write_bytes(trend_chart_png(priced, _scope("", platform, pricing, gpus_per_offer)))
        typer.echo(f"chart: {chart}")


def _scope(gpu_model: str, platform: str | None, pricing: str, gpus_per_offer: int | None) -> str:
    parts = [gpu_model] if gpu_model else []
    parts.append(pricing.replace("_", "-") if pricing != "any" else "on-demand+spot")
    if gpus_per_offer is not None:
        parts.append(f"{gpus_per_offer}-GPU offers")
    if platform is not None:
        parts.append(f"on {platform}")
    return " ".join(parts)


COLUMNS = (
    display.Column("day"),
    display.Column("min", "right"),
    display.Column("median", "right"),
    display.Column("cheapest", shrink=True, legend="platform of the min"),
    display.Column("offers", "right"),
    display.Column("platforms", "right", drop=1),
    display.Column("sources", shrink=True, drop=2),
)


def _print_trend(out: Console, trend: pd.DataFrame, scope: str, wide: bool) -> None:
    rows = [
        [
            f"{row.day:%Y-%m-%d}",
            f"{row.min_usd_per_gpu_hour:.2f}",
            f"{row.median_usd_per_gpu_hour:.2f}",
            str(row.cheapest_platform),
            str(row.offers),
            str(row.platforms),
            str(row.sources),
        ]
        for row in trend.itertuples(index=False)
    ]
    display.print_table(out, COLUMNS, rows, wide=wide, title=f"{scope}: USD per GPU-hour")


WEEK_COLUMNS = (
    display.Column("week of"),
    display.Column("min", "right", legend="the week's lowest daily min"),
    display.Column("on", legend="day of that min"),
    display.Column("median", "right", legend="median of the daily medians"),
    display.Column("cheapest", shrink=True, legend="platform of the min"),
    display.Column("days", "right", drop=1, legend="days with prices"),
)


def _print_weeks(out: Console, trend: pd.DataFrame, scope: str, wide: bool) -> None:
    """A row per week (Monday to Sunday) of the daily trend: what the chart shows, in a screen."""
    days = pd.to_datetime(trend["day"])
    weeks = trend.assign(day=days, week=days.dt.to_period("W-SUN").dt.start_time)
    rows = []
    for week, group in weeks.groupby("week", sort=True):
        low = group.sort_values(["min_usd_per_gpu_hour", "day"]).iloc[0]
        rows.append(
            [
                f"{week:%Y-%m-%d}",
                f"{low.min_usd_per_gpu_hour:.2f}",
                f"{low.day:%m-%d}",
                f"{group['median_usd_per_gpu_hour'].median():.2f}",
                str(low.cheapest_platform),
                str(len(group)),
            ]
        )
    display.print_table(out, WEEK_COLUMNS, rows, wide=wide, title=f"{scope}: USD per GPU-hour, by week")
    display.say(out, "--daily shows every day")


def trend_chart_png(trends: Mapping[str, pd.DataFrame], scope: str) -> bytes:
    """Min and median USD per GPU-hour per day of each GPU model as a PNG; days without data are
    gaps, not zeros. One model: its min and median lines; several: both lines of each, labelled."""
    # Imported here: matplotlib takes about a second to import and every `gpuplan` start imports all
    # commands. The Figure API (no pyplot) keeps no global state and renders with Agg.
    from matplotlib.figure import Figure

    figure = Figure(figsize=(CHART_WIDTH_IN, CHART_HEIGHT_IN), dpi=CHART_DPI, layout="constrained")
    axes = figure.subplots()
    for model, trend in trends.items():
        daily = trend.set_index(pd.to_datetime(trend["day"])).asfreq("D")  # missing days: NaN, gaps
        label = "" if len(trends) == 1 else f"{model} "
        (line,) = axes.plot(
            daily.index,
            daily["min_usd_per_gpu_hour"],
            marker="o",
            markersize=2,
            linewidth=1.4,
            label=f"{label}min",
        )
        (median,) = axes.plot(
            daily.index,
            daily["median_usd_per_gpu_hour"],
            marker="o",
            markersize=2,
            linewidth=1.0,
            label=f"{label}median",
        )
        if len(trends) > 1:  # one colour per model: min solid, median dashed
            median.set_color(line.get_color())
            median.set_linestyle("--")
    frames = list(trends.values())
    days = pd.concat([pd.to_datetime(frame["day"]) for frame in frames])
    prices = pd.concat(
        [frame[column] for frame in frames for column in ("min_usd_per_gpu_hour", "median_usd_per_gpu_hour")]
    ).dropna()
    style_price_axes(
        axes,
        (days.min().date(), days.max().date()),
        (float(prices.min()), float(prices.max())),
        symbol="$",
        axis_label="USD per GPU-hour (log scale)",
    )
    title = next(iter(trends)) if len(trends) == 1 else ", ".join(trends)
    axes.set_title(f"{title} {scope}", fontsize=10)
    legend_below(figure, axes)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return buffer.getvalue()

"""`gpuplan history GPU`: min and median price per GPU-hour of one GPU model over time, table and chart."""

from __future__ import annotations

import datetime as dt
import difflib
import io
from pathlib import Path
from typing import Annotated, Literal

import pandas as pd
import typer
from rich.console import Console
from rich.table import Table

from gpuplan.settings import Settings
from scrapers.history.platforms import platform_slug
from sizing import gpu_names
from warehouse import connect, history

PRICING_CHOICES = ("on_demand", "spot", "any")
# Pixels = inches x dpi: 1000 x 450, wide enough for a year of daily points.
CHART_WIDTH_IN, CHART_HEIGHT_IN, CHART_DPI = 10.0, 4.5, 100


def register(app: typer.Typer) -> None:
    app.command(
        "history",
        help="Min and median price per GPU-hour of one GPU model over time (crawls and imports), "
        "as a table and optionally a PNG chart.",
    )(history_command)


def history_command(
    ctx: typer.Context,
    gpu: Annotated[str, typer.Argument(help='GPU model, e.g. "H100 SXM 80GB" (matched forgivingly).')],
    platform: Annotated[
        str | None,
        typer.Option("--platform", "-p", help="Only this platform (lambda, vastai; vast.ai works too)."),
    ] = None,
    days: Annotated[int, typer.Option("--days", min=1, help="How many days back from today (UTC).")] = 90,
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
) -> None:
    settings: Settings = ctx.obj
    if pricing not in PRICING_CHOICES:
        raise typer.BadParameter(
            f"--pricing must be one of {', '.join(PRICING_CHOICES)}", param_hint="--pricing"
        )
    platform = platform_slug(platform) if platform else None
    until = dt.datetime.now(dt.UTC).date()
    since = until - dt.timedelta(days=days - 1)
    with connect.reader(settings.warehouse) as con:
        gpu_model = _resolve_gpu(gpu, history.priced_gpu_models(con)["gpu_model"].tolist())
        trend = history.price_trend(
            con,
            gpu_model,
            since,
            until,
            platform=platform,
            pricing_type=None if pricing == "any" else pricing,
            gpu_count=gpus_per_offer,
        )
    scope = _scope(gpu_model, platform, pricing, gpus_per_offer)
    if trend.empty:
        typer.echo(f"no {scope} prices between {since} and {until}", err=True)
        raise typer.Exit(1)
    Console().print(_table(trend, scope))
    if chart is not None:
        chart.write_bytes(trend_chart_png(trend, scope))
        typer.echo(f"chart: {chart}")


def _resolve_gpu(name: str, known: list[str]) -> str:
    """The canonical model in `known` that `name` means: exact, then as people write GPU names
    (`sizing.gpu_names.resolve`: "H100", "A100-80GB", "4090"), the first of its variants priced."""
    if name in known:
        return name
    try:
        match = gpu_names.resolve(name)
    except gpu_names.UnknownGpu as exc:
        raise typer.BadParameter(str(exc), param_hint="GPU") from None
    priced = [model for model in match.variants if model in known]
    if not priced:
        close = difflib.get_close_matches(name, known, n=3, cutoff=0.4)
        hint = f"; did you mean {', '.join(repr(model) for model in close)}?" if close else ""
        raise typer.BadParameter(
            f"no priced offers for GPU {name!r} ({match.gpu_model}){hint}", param_hint="GPU"
        )
    if match.note:
        typer.echo(match.note, err=True)
    return priced[0]


def _scope(gpu_model: str, platform: str | None, pricing: str, gpus_per_offer: int | None) -> str:
    parts = [gpu_model, pricing.replace("_", "-") if pricing != "any" else "on-demand+spot"]
    if gpus_per_offer is not None:
        parts.append(f"{gpus_per_offer}-GPU offers")
    if platform is not None:
        parts.append(f"on {platform}")
    return " ".join(parts)


def _table(trend: pd.DataFrame, scope: str) -> Table:
    table = Table(title=f"{scope}: USD per GPU-hour")
    columns: tuple[tuple[str, Literal["left", "right"]], ...] = (
        ("day", "left"),
        ("min", "right"),
        ("median", "right"),
        ("cheapest", "left"),
        ("offers", "right"),
        ("platforms", "right"),
        ("sources", "left"),
    )
    for column, justify in columns:
        table.add_column(column, justify=justify)
    for row in trend.itertuples(index=False):
        table.add_row(
            f"{row.day:%Y-%m-%d}",
            f"{row.min_usd_per_gpu_hour:.2f}",
            f"{row.median_usd_per_gpu_hour:.2f}",
            str(row.cheapest_platform),
            str(row.offers),
            str(row.platforms),
            str(row.sources),
        )
    return table


def trend_chart_png(trend: pd.DataFrame, scope: str) -> bytes:
    """Min and median USD per GPU-hour per day as a PNG; days without data are gaps, not zeros."""
    # Imported here: matplotlib takes about a second to import and every `gpuplan` start imports all
    # commands. The Figure API (no pyplot) keeps no global state and renders with Agg.
    from matplotlib.dates import AutoDateLocator, ConciseDateFormatter
    from matplotlib.figure import Figure

    figure = Figure(figsize=(CHART_WIDTH_IN, CHART_HEIGHT_IN), dpi=CHART_DPI, layout="constrained")
    axes = figure.subplots()
    daily = trend.set_index(pd.to_datetime(trend["day"])).asfreq("D")  # missing days become NaN: gaps
    axes.plot(
        daily.index, daily["min_usd_per_gpu_hour"], marker="o", markersize=2, linewidth=1.4, label="min"
    )
    axes.plot(
        daily.index, daily["median_usd_per_gpu_hour"], marker="o", markersize=2, linewidth=1.0, label="median"
    )
    locator = AutoDateLocator()
    axes.xaxis.set_major_locator(locator)
    axes.xaxis.set_major_formatter(ConciseDateFormatter(locator))
    axes.set_ylim(bottom=0)
    axes.set_ylabel("USD per GPU-hour")
    axes.set_title(scope, fontsize=10)
    axes.grid(True, linewidth=0.4, alpha=0.5)
    axes.legend(frameon=False)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return buffer.getvalue()

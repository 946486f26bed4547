"""`gpuplan gpus`: the GPU catalog, the names each card answers to, and its cheapest price now.

The names are `sizing.gpu_names.aliases` (derived from the catalog, each resolving back to the
card); the price is the cheapest plannable offer of each platform's latest crawl
(`judged_offers(..., latest := TRUE)`, the one rule for "the day's offers"); the GPUs free are
those crawls' stock, each unit of stock once (`free_gpus`: a machine listed whole and in slices,
or on demand and at a spot bid, is one machine; a platform's sizes of one stock count, RunPod's pods
of a GPU type and cloud, are one pool).
"""

from __future__ import annotations

import json
import math
from typing import Annotated, Any

import pandas as pd
import typer

from config.settings import Settings
from gpuplan import display
from sizing import gpu_names
from sizing.catalog import GpuSpec, load_gpus
from warehouse import queries
from warehouse.engine import connect


def register(app: typer.Typer) -> None:
    app.command(
        "gpus",
        help="The GPU catalog: memory, form, the names each card answers to (what --gpu, history and "
        "the jobs file accept) and today's cheapest plannable price per GPU-hour.",
    )(gpus_command)


def gpus_command(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON records instead of a table.")] = False,
    wide: Annotated[bool, typer.Option("--wide", help="Every column and name, at full width.")] = False,
) -> None:
    settings: Settings = ctx.obj
    prices, missing = _prices(settings)
    records = [_record(gpu, prices.get(gpu.gpu_model)) for gpu in load_gpus()]
    if as_json:
        typer.echo(json.dumps(records, ensure_ascii=False, indent=1))
        return
    out = display.console()
    display.print_table(out, COLUMNS, [_row(record) for record in records], wide=wide, title="GPUs")
    for line in stale_lines(records):
        display.say(out, line)
    if missing:
        display.say(out, missing)


COLUMNS = (
    display.Column("GPU"),
    display.Column("GB", "right", legend="memory per GPU"),
    display.Column("form", drop=3),
    display.Column("names", shrink=True, drop=1, legend="what --gpu and history accept"),
    # the count of every platform, before the price: beside the cheapest platform it read as that one's
    display.Column(
        "all free",
        "right",
        drop=4,
        legend="GPUs free now on all platforms, each machine once; blank: not said",
    ),
    display.Column("USD/h", "right", legend="cheapest plannable offer now, per GPU-hour"),
    display.Column("platform", shrink=True),
    display.Column("crawled", drop=2, legend="day of its crawl, ~ stale: a later crawl failed"),
)


def _prices(settings: Settings) -> tuple[dict[str, dict[str, Any]], str | None]:
    """The cheapest offer per GPU model, and a line saying why there are none when there is no
    warehouse yet (the catalog is worth listing without prices)."""
    try:
        con = connect.reader(settings.warehouse)
    except connect.NoWarehouseError as exc:
        return {}, f"no prices: {exc}"
    with con:
        frame = queries.frame(con, "gpus/cheapest_offers", max_stale_hours=settings.stale_hours)
    return {
        str(row["gpu_model"]): {str(k): v for k, v in row.items()} for row in frame.to_dict("records")
    }, None


def _record(gpu: GpuSpec, price: dict[str, Any] | None) -> dict[str, Any]:
    def known(key: str) -> Any:
        value = None if price is None else price[key]
        return None if value is None or (isinstance(value, float) and math.isnan(value)) else value

    day = known("cheapest_run_day")
    return {
        "gpu_model": gpu.gpu_model,
        "family": gpu.family,
        "form": gpu.form,
        "memory_gb": gpu.memory_gb,
        "aliases": list(gpu_names.aliases(gpu.gpu_model)),
        "min_usd_per_gpu_hour": known("min_usd_per_gpu_hour"),
        "cheapest_platform": known("cheapest_platform"),
        "cheapest_run_day": pd.Timestamp(day).date().isoformat() if day is not None else None,
        "platforms": int(known("platforms") or 0),
        "offers": int(known("offers") or 0),
        "gpus_free": None if known("gpus_free") is None else int(known("gpus_free")),
        "stale": bool(known("cheapest_stale")),
        "crawled_at": None if (at := known("cheapest_crawled_at")) is None else pd.Timestamp(at).isoformat(),
    }


def stale_lines(records: list[dict[str, Any]]) -> list[str]:
    """One line per platform whose cheapest offers are stale: its price as of when, its stock unknown."""
    stale = sorted({(r["cheapest_platform"], r["crawled_at"]) for r in records if r["stale"]})
    return [
        f"~ {platform}: its latest crawl failed; prices as of its last good crawl, {at[:16]} UTC, "
        "stock unknown"
        for platform, at in stale
    ]


def _row(record: dict[str, Any]) -> list[str]:
    price = record["min_usd_per_gpu_hour"]
    return [
        record["gpu_model"],
        f"{record['memory_gb']:g}",
        record["form"] or "",
        # shortest first: at 80 columns the names people type most ("A100", "A100-80GB") show
        ", ".join(sorted((n for n in record["aliases"] if n != record["gpu_model"]), key=len)),
        "" if record["gpus_free"] is None else str(record["gpus_free"]),
        "" if price is None else f"{price:.2f}",
        record["cheapest_platform"] or "",
        (record["cheapest_run_day"] or "") + ("~" if record["stale"] else ""),
    ]

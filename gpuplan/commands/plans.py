"""`gpuplan plans`: the day's cheapest plans from the published warehouse (no Dagster needed)."""

from __future__ import annotations

import datetime as dt
import json
import math
from typing import Annotated

import pandas as pd
import typer
from rich import box
from rich.console import Console
from rich.table import Table

from gpuplan.settings import Settings
from warehouse import connect, plans

RANKING_LABELS = {"lowest_rent": "rent", "lowest_cost_per_btoken": "tokens"}
BILLING_LABELS = {
    "monthly_plan": "monthly",
    "weekly_plan": "weekly",
    "daily_plan": "daily",
    "reserved": "reserved",
}


def register(app: typer.Typer) -> None:
    app.command(
        "plans",
        help="The cheapest way to train each model size with each method on a day: lowest rent for a "
        "month of training and lowest cost per billion tokens, from the published warehouse.",
    )(plans_command)


def plans_command(
    ctx: typer.Context,
    day: Annotated[
        dt.datetime | None,
        typer.Option(
            "--date", formats=["%Y-%m-%d"], help="Day of the plans (YYYY-MM-DD); default: the latest."
        ),
    ] = None,
    model: Annotated[
        str | None, typer.Option("--model", help="Only this model size or preset, e.g. 70B.")
    ] = None,
    method: Annotated[
        str | None, typer.Option("--method", help="Only this method: full, lora or qlora.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON records instead of a table.")] = False,
) -> None:
    settings: Settings = ctx.obj
    with connect.reader(settings.warehouse) as con:
        frame = plans.plans_for_date(con, day.date() if day else None, model, method)
        excluded = plans.excluded_offers(con, frame["plan_date"].iloc[0]) if len(frame) else None
    if frame.empty:
        wanted = " ".join(filter(None, [model, method])) or "any model"
        when = day.date().isoformat() if day else "any day"
        typer.echo(
            f"no plans for {wanted} on {when} in {settings.warehouse}; run `gpuplan refresh`", err=True
        )
        raise typer.Exit(1)
    if as_json:
        typer.echo(plans_json(frame))
    else:
        console = Console()
        console.print(plans_table(frame))
        if excluded is not None and len(excluded):
            console.print(excluded_note(excluded), highlight=False)


def plans_json(frame: pd.DataFrame) -> str:
    """The plans as a JSON array of objects (column names as keys, null for missing)."""

    def plain(value: object) -> object:
        if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
            return None
        if isinstance(value, pd.Timestamp):
            # DuckDB DATE columns arrive as midnight timestamps
            return value.date().isoformat() if value == value.normalize() else value.isoformat()
        if isinstance(value, dt.date):
            return value.isoformat()
        return value.item() if hasattr(value, "item") else value

    records = [{key: plain(value) for key, value in row.items()} for row in frame.to_dict("records")]
    return json.dumps(records, ensure_ascii=False, indent=1)


def excluded_note(excluded: pd.DataFrame, shown: int = 5) -> str:
    """One line on the offers a day's plans left out as implausibly cheap (plans.excluded_offers)."""
    items = [
        f"{row.platform} {row.gpu_model} at {row.price_usd_per_gpu_hour:.2f} USD/GPU-h "
        f"(median {row.reference_usd_per_gpu_hour:.2f})"
        for row in excluded.drop_duplicates(["platform", "gpu_model", "price_usd_per_gpu_hour"])
        .head(shown)
        .itertuples()
    ]
    return (
        f"{len(excluded)} offer(s) left out as implausibly cheap (placeholders?): {'; '.join(items)}"
        f"{' ...' if len(excluded) > len(items) else ''}. All in table plan_excluded_offers."
    )


def _money(value: float | None) -> str:
    return "" if value is None or pd.isna(value) else f"{value:,.0f}"


def _plan(row: pd.Series) -> str:
    nodes = f" on {row['nodes']} nodes" if row["multi_node"] else ""
    stock = "" if row["stock_known"] else "*"
    billing = (
        ""
        if row["pricing_type"] == "on_demand"
        else f", {BILLING_LABELS.get(row['pricing_type'], row['pricing_type'])}"
    )
    return f"{row['platform']}: {row['gpu_model']} x{row['gpu_count']}{stock}{nodes}{billing}"


def plans_table(frame: pd.DataFrame) -> Table:
    """A table of plans: one line per (model, method, ranking); money rounded to whole units."""
    table = Table(
        title=f"Cheapest plans, {pd.Timestamp(frame['plan_date'].iloc[0]).date()}",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        caption="rent: least for a month of training; tokens: least per billion tokens. "
        "* the platform does not say how many are free",
        caption_justify="left",
    )
    table.add_column("model", no_wrap=True)
    table.add_column("for", no_wrap=True)
    table.add_column("plan", ratio=1)
    for header in ("CNY/mo", "USD/mo", "Mtok/day", "USD/Btok"):
        table.add_column(header, justify="right", no_wrap=True)
    for _, row in frame.iterrows():
        ask = f"{row['model']} {row['method']}"
        if row["status"] != "ok":
            table.add_row(ask, RANKING_LABELS[row["ranking"]], "[yellow]no offer fits[/yellow]")
            continue
        table.add_row(
            ask,
            RANKING_LABELS[row["ranking"]],
            _plan(row),
            _money(row["rent_cny_per_month"]),
            _money(row["rent_usd_per_month"]),
            _money(row["tokens_per_day"] / 1e6),
            _money(row["cost_usd_per_billion_tokens"]),
        )
    return table

"""`gpuplan plans`: the day's cheapest plans, or with --tokens the plans for one job of yours.

Without --tokens: the daily model-size tables from the published warehouse (no Dagster needed).
With --tokens: your job planned on the fly from each platform's latest good crawl, priced in full by
each platform's billing (`warehouse.job_plans`); nothing is written and no refresh is needed.
Tables fit the terminal (`gpuplan.display`): one plan per line at 80 columns with a legend below,
more columns on a wider terminal, every column with --wide.
A job's plans come as plain rows: that path imports no pandas (half its process's start); the
daily tables' frames import it where they are built.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any, NoReturn
from zoneinfo import ZoneInfo

import typer
from rich.console import Console
from rich.text import Text

from gpuplan import display
from gpuplan.display import Column
from gpuplan.settings import Settings
from sizing import assumptions, gpu_names
from sizing.jobs import Job, job_sizing, parse_duration, parse_tokens
from warehouse import connect, job_plans, plans

if TYPE_CHECKING:
    import pandas as pd

RANKING_LABELS = {"lowest_rent": "rent", "lowest_cost_per_btoken": "tok"}
BILLING_LABELS = {"hour": "h", "day": "d", "week": "wk", "month": "mo"}
PLAN_BILLING = {"monthly_plan": "mo", "weekly_plan": "wk", "daily_plan": "d", "reserved": "res"}
PLAN_LEGEND = "GPU×count platform, * stock unknown, [N nodes] a cluster"
TERMS_LEGEND = "(mo)/(wk)/(d)/(res) monthly, weekly, daily or reserved terms"
BILLED_LEGEND = "in whole billing periods, at least the minimum term"


class Currency(StrEnum):
    CNY = "CNY"
    USD = "USD"


def register(app: typer.Typer) -> None:
    app.command(
        "plans",
        help="The cheapest way to train each model size with each method on a day (lowest rent for a "
        "month, lowest cost per billion tokens, days and total for a default run), or with --tokens the "
        "plans for your own job from the latest offers: where, how many GPUs, when it finishes, what it "
        "costs in total.",
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
        str | None,
        typer.Option("--model", help="Model size, preset or config.json, e.g. 70B or qwen2.5-14b."),
    ] = None,
    method: Annotated[
        str | None, typer.Option("--method", help="Training method: full, full-bf16, lora, qlora, freeze.")
    ] = None,
    gpu: Annotated[
        list[str] | None,
        typer.Option(
            "--gpu", help="Only plans on this GPU, as people write it: H100, 4090, 910B (repeatable)."
        ),
    ] = None,
    tokens: Annotated[
        str | None, typer.Option("--tokens", help="Plan your job: tokens of one epoch, e.g. 500M, 2B, 1.5e9.")
    ] = None,
    epochs: Annotated[
        float | None, typer.Option("--epochs", help="Epochs over the tokens (default 1).")
    ] = None,
    within: Annotated[
        str | None,
        typer.Option("--within", help="Deadline: 36h, 3d, 2w, or a date (YYYY-MM-DD, by its end)."),
    ] = None,
    seq_len: Annotated[int | None, typer.Option("--seq-len", help="Tokens per sequence (sizing).")] = None,
    batch: Annotated[int | None, typer.Option("--batch", help="Micro-batch (sequences) per GPU.")] = None,
    max_gpus: Annotated[int | None, typer.Option("--max-gpus", help="The most GPUs a plan may use.")] = None,
    framework: Annotated[
        str | None,
        typer.Option(
            "--framework",
            "-f",
            help="Training framework whose defaults the sizing takes (default: llamafactory).",
        ),
    ] = None,
    platform: Annotated[
        list[str] | None, typer.Option("--platform", "-p", help="Only this platform's offers (repeatable).")
    ] = None,
    currency: Annotated[
        Currency, typer.Option("--currency", help="Currency of the job table's prices and totals.")
    ] = Currency.USD,
    fastest: Annotated[bool, typer.Option("--fastest", help="Rank job plans by finish time.")] = False,
    wide: Annotated[bool, typer.Option("--wide", help="Show every column, whatever the width.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON records instead of a table.")] = False,
) -> None:
    settings: Settings = ctx.obj
    job_options: dict[str, object] = {
        "--epochs": epochs,
        "--within": within,
        "--seq-len": seq_len,
        "--batch": batch,
    }
    job_options |= {"--max-gpus": max_gpus, "--platform": platform, "--fastest": fastest or None}
    try:
        gpus = [_resolve_gpu(name) for name in gpu or []]
        if tokens is None:
            given = [name for name, value in job_options.items() if value is not None]
            if given:
                raise ValueError(f"{', '.join(given)} plan a job: give --tokens too")
            _daily(settings, day.date() if day else None, model, method, gpus, wide, as_json)
            return
        if model is None or method is None:
            raise ValueError("--tokens plans a job: give --model and --method too")
        now = dt.datetime.now(dt.UTC).replace(tzinfo=None)
        job = Job(
            name="ad hoc",
            model=model,
            method=method,
            tokens=parse_tokens(tokens),
            epochs=1.0 if epochs is None else epochs,
            within_days=None if within is None else _within_days(within, now, settings.schedule_timezone),
            seq_len=seq_len,
            batch=batch,
            max_gpus=max_gpus,
            platforms=tuple(platform or ()),
            gpus=tuple(gpus),
            framework=framework,
        )
        _job(settings, job, day.date() if day else None, now, currency, fastest, wide, as_json)
    except (ValueError, connect.NoWarehouseError, connect.OutdatedWarehouseError) as exc:
        _fail(str(exc))


def _fail(message: str) -> NoReturn:
    typer.echo(f"error: {' '.join(message.split())}", err=True)
    raise typer.Exit(1)


def _resolve_gpu(name: str) -> str:
    match = gpu_names.resolve(name)
    if match.note:
        typer.echo(match.note, err=True)
    return match.gpu_model


def _within_days(text: str, now: dt.datetime, timezone: str) -> float:
    """--within as days from `now` (UTC): a duration, or a date meaning the end of that day in `timezone`."""
    try:
        deadline = now + parse_duration(text)
    except ValueError:
        try:
            date = dt.date.fromisoformat(text)
        except ValueError:
            raise ValueError(f"--within takes 36h, 3d, 2w or a date (YYYY-MM-DD), got {text!r}") from None
        end = dt.datetime.combine(date + dt.timedelta(days=1), dt.time(), ZoneInfo(timezone))
        deadline = end.astimezone(dt.UTC).replace(tzinfo=None)
        if deadline <= now:
            raise ValueError(f"the deadline {text} ({timezone}) is in the past") from None
    return (deadline - now) / dt.timedelta(days=1)


# --- the daily tables ------------------------------------------------------------------------------


def _daily(
    settings: Settings,
    day: dt.date | None,
    model: str | None,
    method: str | None,
    gpus: list[str],
    wide: bool,
    as_json: bool,
) -> None:
    import pandas as pd  # the daily tables are frames

    with connect.reader(settings.warehouse) as con:
        if gpus:
            frame = pd.concat(
                [plans.plans_for_gpu(con, g, day, model, method) for g in gpus], ignore_index=True
            )
        else:
            frame = plans.plans_for_date(con, day, model, method)
        excluded = plans.excluded_offers(con, frame["plan_date"].iloc[0]) if len(frame) else None
    if frame.empty:
        wanted = " ".join(filter(None, [model, method, *gpus])) or "any model"
        when = day.isoformat() if day else "any day"
        _fail(f"no plans for {wanted} on {when} in {settings.warehouse}; run `gpuplan refresh`")
    if as_json:
        typer.echo(plans_json(frame))
        return
    print_plans(display.console(), frame, excluded, wide=wide)


def plans_json(frame: pd.DataFrame) -> str:
    """The plans as a JSON array of objects (column names as keys, null for missing)."""
    return json.dumps(plain_records(frame.to_dict("records")), ensure_ascii=False, indent=1)


def plain_records(records: Iterable[Mapping[Any, object]]) -> list[dict[str, object]]:
    """Rows (of a frame or of DuckDB) as JSON-ready objects: dates and times in ISO 8601, None
    for missing (NULL, NaN, pandas' NA and NaT), numpy scalars as Python numbers."""
    return [{str(key): _plain(value) for key, value in row.items()} for row in records]


def _plain(value: object) -> object:
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if type(value).__module__.startswith("pandas"):
        return _plain_pandas(value)
    if isinstance(value, dt.date):
        return value.isoformat()
    return value.item() if hasattr(value, "item") else value


def _plain_pandas(value: object) -> object:
    import pandas as pd  # loaded already: the value came from a frame

    if value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, pd.Timestamp):
        # DuckDB DATE columns arrive as midnight timestamps
        return value.date().isoformat() if value == value.normalize() else value.isoformat()
    return value


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


def plan_label(row: pd.Series | Mapping[str, Any], billing: str | None) -> str:
    """A plan in a few characters: `910B×2 quotes (mo)`, `H100×16 lambda [2 nodes]`, `4090×1 vastai*`."""
    stock = "" if row["stock_known"] else "*"
    term = f" ({billing})" if billing else ""
    nodes = f" [{row['nodes']} nodes]" if row["nodes"] and row["nodes"] > 1 else ""
    gpus = f"{gpu_names.short_name(row['gpu_model'])}×{row['gpu_count']}"
    return f"{gpus} {row['platform']}{stock}{term}{nodes}"


def print_plans(
    out: Console, frame: pd.DataFrame, excluded: pd.DataFrame | None = None, *, wide: bool = False
) -> None:
    """The daily plans as a table that fits `out` (one line per model, method and ranking; money in
    whole units), then a line on the offers left out as implausibly cheap. `gpuplan plans` and
    `gpuplan refresh` both print them so."""
    import pandas as pd  # the daily plans are a frame

    tokens = frame["job_tokens"].dropna()
    budget = f"{tokens.iloc[0] / 1e9:g}B" if len(tokens) else "?"
    day = pd.Timestamp(frame["plan_date"].iloc[0]).date()
    figures = _daily_figures(budget)
    columns = [
        Column("model"),
        Column("by", legend="rent least rent for a month, tok least cost per billion tokens"),
        Column("plan", shrink=True, legend=f"{PLAN_LEGEND}, {TERMS_LEGEND}"),
        *(column for column, _, _ in figures),
    ]
    rows: list[list[display.Cell]] = []
    for _, row in frame.iterrows():
        ask = [f"{row['model']} {row['method']}", RANKING_LABELS[row["ranking"]]]
        if row["status"] != "ok":
            rows.append([*ask, Text("no offer fits", style="yellow"), *("" for _ in figures)])
            continue
        cells = [_figure(row[field], scale, digits) for _, field, (scale, digits) in figures]
        rows.append([*ask, plan_label(row, PLAN_BILLING.get(row["pricing_type"])), *cells])
    display.print_table(out, columns, rows, wide=wide, title=f"Cheapest plans, {day}")
    if excluded is not None and len(excluded):
        out.print(excluded_note(excluded), highlight=False)


def _figure(value: float | None, scale: float, digits: int) -> str:
    return display.number(None if value is None else value * scale, digits)


def _daily_figures(budget: str) -> list[tuple[Column, str, tuple[float, int]]]:
    """The daily table's figures: (column, field, (scale, digits)); the ones left out first at
    narrow widths have the highest `drop`."""
    run = f"one run of {budget} tokens (GPUPLAN_DEFAULT_TOKENS)"
    return [
        (Column("CNY/mo", "right", legend="a month's rent"), "rent_cny_per_month", (1, 0)),
        (Column("USD/mo", "right", drop=3), "rent_usd_per_month", (1, 0)),
        (Column("Mtok/day", "right", drop=4, legend="million tokens a day"), "tokens_per_day", (1e-6, 0)),
        (
            Column("USD/Btok", "right", legend="cost per billion tokens"),
            "cost_usd_per_billion_tokens",
            (1, 0),
        ),
        (Column("days", "right", legend=f"to train {run}"), "train_days", (1, 1)),
        (
            Column(f"USD/{budget}", "right", legend=f"that run in total as billed ({BILLED_LEGEND})"),
            "total_usd",
            (1, 0),
        ),
        (Column(f"CNY/{budget}", "right", drop=2), "total_cny", (1, 0)),
        (Column("GB/GPU", "right", drop=1, legend="memory per GPU"), "per_gpu_memory_gb", (1, 1)),
    ]


# --- a job of yours ------------------------------------------------------------------------------


def _job(
    settings: Settings,
    job: Job,
    day: dt.date | None,
    now: dt.datetime,
    currency: Currency,
    fastest: bool,
    wide: bool,
    as_json: bool,
) -> None:
    with connect.reader(settings.warehouse) as con:
        answer = job_plans.plan_job(con, job, start_at=now, plan_date=day, fastest=fastest)
    zone = ZoneInfo(settings.schedule_timezone)
    if answer.reason is not None:
        if answer.fastest is not None and job.within_days is not None:
            best, deadline = answer.fastest, now + dt.timedelta(days=job.within_days)
            _fail(
                f"no plan finishes by {_local(deadline, zone)}: the fastest is "
                f"{job_plans.plan_text(best)}, {job_plans.duration_text(best['train_days'])}, finishing "
                f"{_local(best['finish'], zone)} ({settings.schedule_timezone})"
            )
        _fail(answer.reason)
    lines = assumptions.describe(job_sizing(job))
    if as_json:
        records = plain_records(answer.plans)
        for record in records:
            record["finish"] = f"{record['finish']}Z" if record["finish"] else None
            record["assumptions"] = lines
        typer.echo(json.dumps(records, ensure_ascii=False, indent=1))
        return
    console = display.console()
    console.print(_job_heading(job, day, now, zone), highlight=False)
    print_job_plans(console, answer.plans, currency, zone, wide=wide)
    console.print("Assumptions:", highlight=False)
    for line in lines:
        console.print(f"  - {line}", highlight=False)


def _local(moment: dt.datetime, zone: ZoneInfo) -> str:
    return _local_time(moment, zone).strftime("%Y-%m-%d %H:%M")


def _local_time(moment: dt.datetime, zone: ZoneInfo) -> dt.datetime:
    """A naive UTC moment (as the warehouse keeps them) in `zone`."""
    return moment.replace(tzinfo=dt.UTC).astimezone(zone)


def tokens_text(tokens: float) -> str:
    """Tokens as people write them: 1.5B, 500M, 750k."""
    for unit, size in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("k", 1e3)):
        if tokens >= size:
            return f"{tokens / size:.4g}{unit}"
    return f"{tokens:.4g}"


def _job_heading(job: Job, day: dt.date | None, now: dt.datetime, zone: ZoneInfo) -> str:
    epochs = f" ({tokens_text(job.tokens)} x {job.epochs:g} epochs)" if job.epochs != 1 else ""
    deadline = (
        f", by {_local(now + dt.timedelta(days=job.within_days), zone)}"
        if job.within_days is not None
        else ""
    )
    source = f"the crawls of {day}" if day else "the latest crawls"
    return (
        f"{job.model} {job.method}, {tokens_text(job.train_tokens)} tokens{epochs}{deadline}; from {source}"
    )


def print_job_plans(
    out: Console,
    found: Sequence[Mapping[str, Any]],
    currency: Currency,
    zone: ZoneInfo,
    *,
    wide: bool = False,
) -> None:
    """A job's plans (`JobPlans.plans`: rows, best first) as a table that fits `out`: one line per
    GPU model."""
    unit, other = currency.value.lower(), "usd" if currency is Currency.CNY else "cny"
    finishes = [_local_time(plan["finish"], zone) for plan in found]
    # month-day when every plan finishes in the same year, said once in the legend; --wide: in full
    years = {finish.year for finish in finishes}
    year = years.pop() if len(years) == 1 and not wide else None
    finish_legend = f"if started now ({zone.key}{f', {year}' if year else ''})"
    fields = [
        (Column("#", "right"), "rank"),
        (Column("plan", shrink=True, legend=PLAN_LEGEND), "plan"),
        (Column("bill", legend=f"billing period (h, d, wk, mo), totals {BILLED_LEGEND}"), "billing_period"),
        (Column("region", shrink=True, drop=3), "region"),
        (Column("offer", shrink=True, drop=4), "offer_id"),
        (Column("MFU", "right"), "mfu"),
        (Column(f"{currency.value}/GPU-h", "right"), f"price_{unit}_per_gpu_hour"),
        (Column("days", "right"), "train_days"),
        (Column("finish", "right", legend=finish_legend), "finish"),
        (Column(f"{currency.value} total", "right"), f"total_{unit}"),
        (Column("billed h", "right", drop=2, legend="hours paid for"), "billed_hours"),
        (Column(f"{other.upper()} total", "right", drop=1), f"total_{other}"),
    ]
    rows = [
        [_job_cell(row, field, finish, year) for _, field in fields]
        for row, finish in zip(found, finishes, strict=True)
    ]
    columns = [column for column, _ in fields]
    display.print_table(out, columns, rows, wide=wide, title="Plans for your job: the best per GPU model")


def _job_cell(row: Mapping[str, Any], field: str, finish: dt.datetime, year: int | None) -> str:
    value = row.get(field)
    if field == "plan":
        return plan_label(row, None)
    if field == "billing_period":
        return BILLING_LABELS.get(str(value), str(value))
    if field == "finish":
        return finish.strftime("%m-%d %H:%M" if year else "%Y-%m-%d %H:%M")
    if field == "mfu":
        return f"{value:.0%}"
    if field in ("rank", "region", "offer_id"):
        return "" if value is None else str(value)
    return display.number(value, 2 if "per_gpu_hour" in field else 1 if field == "train_days" else 0)

"""What the plans commands print: the daily plans table, a job's plans table, their JSON.

Tables fit the terminal through `gpuplan.display` (one plan per line at 80 columns, a legend below,
more columns on a wider terminal, every column with --wide). Used by `gpuplan plans` and by
`gpuplan refresh`, which prints the day's plans the same way. A job's plans are plain rows: that
path imports no pandas; the daily frames' helpers import it only where a frame is read.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from enum import StrEnum
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from rich.console import Console
from rich.text import Text

from gpuplan import display
from gpuplan.display import Column
from sizing import gpu_names
from sizing.jobs import Job

if TYPE_CHECKING:
    import pandas as pd

# The daily rankings' short labels; "tok" is the retired one, on days planned before "run".
RANKING_LABELS = {"lowest_rent": "rent", "lowest_run_total": "run", "lowest_cost_per_btoken": "tok"}
BILLING_LABELS = {"hour": "h", "day": "d", "week": "wk", "month": "mo", "year": "yr"}
PLAN_BILLING = {"monthly_plan": "mo", "weekly_plan": "wk", "daily_plan": "d", "reserved": "res"}
PLAN_LEGEND = (
    "GPU×count platform, * stock unknown, ~ stale (price as of an earlier crawl), [N nodes] cluster "
    "(with its fabric and Gb/s per GPU where nodes are joined)"
)
TERMS_LEGEND = "(mo)/(wk)/(d)/(res) monthly, weekly, daily or reserved terms"
BILLED_LEGEND = "in whole billing periods, at least the minimum term"


class Currency(StrEnum):
    CNY = "CNY"
    USD = "USD"


SYMBOLS = {Currency.USD: "$", Currency.CNY: "¥"}


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
    more = f"; {len(excluded) - len(items)} more" if len(excluded) > len(items) else ""
    return (
        f"{len(excluded)} offer(s) left out as implausibly cheap (placeholders?): {'; '.join(items)}"
        f"{more}. All in table plan_excluded_offers."
    )


def plan_label(row: pd.Series | Mapping[str, Any], billing: str | None) -> str:
    """A plan in a few characters: `910B×2 quotes (mo)`, `H100×16 lambda [2 nodes]`, `4090×1 vastai*`,
    and a cluster joined over a platform's fabric with it: `H100×64 aws [8 nodes, EFA 400]`."""
    stock = ("~" if _truthy(row.get("stale")) else "") + ("" if row["stock_known"] else "*")
    term = f" ({billing})" if billing else ""
    fabric = f", {row['fabric']}" if row.get("fabric") else ""
    nodes = f" [{row['nodes']} nodes{fabric}]" if row["nodes"] and row["nodes"] > 1 else ""
    gpus = f"{gpu_names.short_name(row['gpu_model'])}×{row['gpu_count']}"
    return f"{gpus} {row['platform']}{stock}{term}{nodes}"


def _truthy(value: object) -> bool:
    """A boolean column's value, NULL (None, NaN, NA) as False."""
    return value is True or (value is not None and value == value and bool(value))


def stale_note(rows: Iterable[Mapping[Any, Any]], now: dt.datetime | None = None) -> list[str]:
    """One line per platform whose offers in `rows` (plans: daily frame records or job rows) are
    stale: carried from its last good crawl because a later one failed, with the age of their price
    (against the row's computed_at, else `now`: UTC, naive). Empty when none is."""
    ages: dict[str, tuple[dt.datetime, dt.datetime]] = {}
    for row in rows:
        if not _truthy(row.get("stale")) or row.get("crawled_at") is None:
            continue
        crawled = _naive(row["crawled_at"])
        when = _naive(row.get("computed_at") or now or dt.datetime.now(dt.UTC).replace(tzinfo=None))
        ages.setdefault(str(row["platform"]), (crawled, when))
    return [
        f"~ {platform}: its crawl failed; prices as of its last good crawl, {crawled:%Y-%m-%d %H:%M} UTC "
        f"({(when - crawled) / dt.timedelta(hours=1):.0f} h old), stock unknown"
        for platform, (crawled, when) in sorted(ages.items())
    ]


def _naive(moment: object) -> dt.datetime:
    """A timestamp of a frame or of DuckDB as a naive datetime."""
    value = moment.to_pydatetime() if hasattr(moment, "to_pydatetime") else moment
    assert isinstance(value, dt.datetime), value
    return value


def print_plans(
    out: Console,
    frame: pd.DataFrame,
    excluded: pd.DataFrame | None = None,
    *,
    wide: bool = False,
    legend: bool = True,
) -> None:
    """The daily plans as a table that fits `out` (one line per model, method and ranking; money in
    whole units), then a line on the offers left out as implausibly cheap. `gpuplan plans` and
    `gpuplan refresh` both print them so; `legend` False: the legend names only the marks and
    rankings the table shows (`short_legend`)."""
    title, columns, rows = daily_table(frame)
    meanings = None if legend else short_legend(frame)
    display.print_table(out, columns, rows, wide=wide, title=title, meanings=meanings)
    for line in stale_note(frame[frame["status"] == "ok"].to_dict("records")):
        display.say(out, line)
    if excluded is not None and len(excluded):
        display.say(out, excluded_note(excluded))


def short_legend(frame: pd.DataFrame) -> str:
    """The daily table's legend cut to what it shows: the rankings, and each mark of a plan
    ('* stock unknown', '(mo) monthly terms', '[N nodes] a cluster') only where a plan carries it;
    --legend gives the whole."""
    ok = frame[frame["status"] == "ok"]
    tokens = frame["job_tokens"].dropna()
    budget = tokens_text(tokens.iloc[0]) if len(tokens) else "?"
    said = [f"by: rent least rent a month, run least total for {budget} tokens"]
    if (~ok["stock_known"].astype(bool)).any():
        said.append("* stock unknown")
    if "stale" in ok and ok["stale"].map(_truthy).any():
        said.append("~ stale price")
    terms = {"mo": "monthly", "wk": "weekly", "d": "daily", "res": "reserved"}
    shown = [label for label in terms if label in set(ok["pricing_type"].map(PLAN_BILLING.get))]
    if shown:
        said.append(f"{'/'.join(f'({label})' for label in shown)} {', '.join(terms[t] for t in shown)} terms")
    if (ok["nodes"].fillna(1) > 1).any():
        said.append("[N nodes] a cluster")
    return "; ".join(said) + "; --legend: every column"


def daily_table(frame: pd.DataFrame) -> tuple[str, list[Column], list[list[display.Cell]]]:
    """The daily plans' title, columns and rows (one per model, method and ranking), as every view
    of them shows them: the terminal (`print_plans`) and the Dagster UI's preview."""
    import pandas as pd  # the daily plans are a frame

    tokens = frame["job_tokens"].dropna()
    budget = tokens_text(tokens.iloc[0]) if len(tokens) else "?"
    day = pd.Timestamp(frame["plan_date"].iloc[0]).date()
    figures = _daily_figures(budget)
    columns = [
        Column("model"),
        Column(
            "by",
            legend=f"rent least rent for a month (or minimum term), run least total for one run of {budget} "
            f"tokens as billed (USD/{budget})",
        ),
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
    return f"Cheapest plans, {day}", columns, rows


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
            Column("USD/Btok", "right", legend="hourly rent over tokens per hour, per billion tokens"),
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


def local_text(moment: dt.datetime, zone: ZoneInfo) -> str:
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


def job_heading(job: Job, day: dt.date | None, now: dt.datetime, zone: ZoneInfo) -> str:
    epochs = f" ({tokens_text(job.tokens)} x {job.epochs:g} epochs)" if job.epochs != 1 else ""
    deadline = (
        f", by {local_text(now + dt.timedelta(days=job.within_days), zone)}"
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
    limit: int | None = None,
) -> None:
    """A job's plans (`JobPlans.plans`: rows, best first) as a table that fits `out`: one line per
    GPU model, the first `limit` of them (None: all) and a line saying how many more."""
    more = found[limit:] if limit is not None else []
    found = found[:limit] if limit is not None else found
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
        (Column("region", shrink=True, drop=4), "region"),
        (Column("offer", shrink=True, drop=5), "offer_id"),
        # the last to go: before a long platform name (primeintellect, tencentcloud) is cut
        (Column("MFU", "right", drop=1), "mfu"),
        (Column(f"{currency.value}/GPU-h", "right"), f"price_{unit}_per_gpu_hour"),
        (Column("days", "right"), "train_days"),
        (Column("finish", "right", legend=finish_legend), "finish"),
        (Column(f"{currency.value} total", "right"), f"total_{unit}"),
        (Column("billed h", "right", drop=3, legend="hours paid for"), "billed_hours"),
        (Column(f"{other.upper()} total", "right", drop=2), f"total_{other}"),
    ]
    rows = [
        [_job_cell(row, field, finish, year) for _, field in fields]
        for row, finish in zip(found, finishes, strict=True)
    ]
    columns = [column for column, _ in fields]
    display.print_table(out, columns, rows, wide=wide, title="Plans for your job: the best per GPU model")
    if more:
        display.say(out, f"{len(more)} more GPU models, ranked lower; --all shows them")
    for line in stale_note(found):
        display.say(out, line)


def job_answer(found: Sequence[Mapping[str, Any]], currency: Currency, zone: ZoneInfo) -> list[str]:
    """The job's answer, printed last: the cheapest plan and the fastest, each with its total and
    finish ('cheapest: A4000×7 gpushare, $39, done 12-09 03:32'), whatever the table's ranking;
    one part when one plan is both. `found`: every plan, not only the rows shown."""
    unit = currency.value.lower()
    finishing = [plan for plan in found if plan.get("finish") is not None]
    if not finishing:
        return []

    def said(plan: Mapping[str, Any]) -> str:
        total = f"{SYMBOLS[currency]}{display.number(plan[f'total_{unit}'])}"
        finish = _local_time(plan["finish"], zone).strftime("%m-%d %H:%M")
        label = f"{gpu_names.short_name(plan['gpu_model'])}×{plan['gpu_count']} {plan['platform']}"
        return f"{label}, {total}, done {finish}"

    cheapest = min(finishing, key=lambda plan: (plan[f"total_{unit}"], plan["finish"]))
    fastest = min(finishing, key=lambda plan: (plan["finish"], plan[f"total_{unit}"]))
    if cheapest is fastest:
        return [f"cheapest and fastest: {said(cheapest)}"]
    return [f"cheapest: {said(cheapest)}", f"fastest: {said(fastest)}"]


def print_answer(out: Console, parts: Sequence[str]) -> None:
    """`parts` of an answer as one bold line, or one line each where that would not fit `out`."""
    line = "; ".join(parts)
    for shown in [line] if len(line) <= out.width else parts:
        display.say(out, shown, style="bold")


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

"""Bench: how each cost grows with its input (ingest, plans, price trend), against a naive baseline.

    /work/venv/bin/python bench/bench_growth.py [--quick] [--repeat 3]

- ingest: one SYNTHETIC crawl of 10k, 100k and 1M offers (a JSONL feed from
  bench/synthetic_offers.sql) through `warehouse.loading.load_crawl` into a fresh warehouse file,
  with every loading rule (validation, pricing, FX). Baseline at 10k only (it runs ~1k rows/s):
  the same feed read line by line in Python, priced, and inserted one row per statement.
- plans: 1k, 10k and 100k offers of one day x 12 model sizes x 5 methods into cheapest plans
  (`warehouse.plans`, as bench_plans.py measures it); baseline: bench_plans' per-offer Python loop.
- trend: the 90-day price trend of H100 SXM 80GB (`warehouse.history.price_trend`, fresh read-only
  connection, as bench_history.py) over 1, 6 and 24 months of history at 20k offers a day, built
  by appending to one warehouse; baseline: bench_history's pandas pass over the whole table.

Product timings are medians of --repeat runs; baselines run once per size. For each cost the
growth exponent k (time ~ size^k) is fitted by least squares on log-log over all sizes and over
the two largest alone (fixed costs flatten the small end). The issue asks every cost to grow
linearly or better: the script exits 1 when a last-segment exponent exceeds MAX_EXPONENT.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import chain
from pathlib import Path

import bench_history
import bench_plans
import duckdb
import numpy as np

from gpuplan.settings import Settings
from sizing.catalog import load_gpus
from sizing.setup import METHODS
from warehouse import connect, plans
from warehouse.loading import load_crawl
from warehouse.plan_requirements import requirements_frame

# "Linear or better" (issue 10), with 20 % slack for timing noise on a shared 2-core machine.
MAX_EXPONENT = 1.2
INGEST_SIZES = (10_000, 100_000, 1_000_000)
PLAN_SIZES = (1_000, 10_000, 100_000)
HISTORY_MONTHS = (1, 6, 24)
DAYS_PER_MONTH = 30.4  # 730 days = 24 months, as bench_history's two years
ROW_BY_ROW_MAX = 10_000  # the row-by-row baseline runs only up to here (about 10 s)
INGEST_DAY = dt.date(2026, 11, 30)
OFFER_FIELDS = (
    "platform, offer_id, region, gpu_name_raw, gpu_model, gpu_form, gpu_memory_gb, gpu_count, price_amount, "
    "price_currency, price_per, billing_period, min_term_periods, pricing_type, available_gpus, source_url, "
    "observed_at, extra"
)
FEED_COPY_SQL = (  # the OFFER_FIELDS, spelled out: SQL text is never formatted
    "COPY (SELECT platform, offer_id, region, gpu_name_raw, gpu_model, gpu_form, gpu_memory_gb, gpu_count, "
    "price_amount, price_currency, price_per, billing_period, min_term_periods, pricing_type, "
    "available_gpus, source_url, observed_at, extra FROM bench_feed ORDER BY row_no) TO $feed (FORMAT json)"
)
HOURS_PER_PERIOD = {"hour": 1, "day": 24, "week": 168, "month": 730}  # as load_price_staged.sql
ROW_INSERT_SQL = (
    "INSERT INTO offers (crawl_id, platform, source, offer_id, region, gpu_name_raw, gpu_model, gpu_form, "
    "gpu_memory_gb, gpu_count, price_amount, price_currency, price_per, billing_period, min_term_periods, "
    "pricing_type, hourly_rentable, price_usd_per_gpu_hour, price_cny_per_gpu_hour, available_gpus, "
    "source_url, observed_at, observed_date, extra) VALUES ($crawl_id, $platform, 'crawl', $offer_id, "
    "$region, $gpu_name_raw, $gpu_model, $gpu_form, $gpu_memory_gb, $gpu_count, $price_amount, "
    "$price_currency, $price_per, $billing_period, $min_term_periods, $pricing_type, $hourly_rentable, "
    "$usd, $cny, $available_gpus, $source_url, $observed_at, $observed_date, $extra)"
)
LATEST_RATES_SQL = (
    "SELECT currency, arg_max(units_per_usd, rate_date) FROM fx_rates WHERE rate_date <= $day GROUP BY ALL"
)


@dataclass(frozen=True)
class Measure:
    """One row of the table: a cost at one input size, in seconds (baseline None where not run)."""

    cost: str
    size: int
    unit: str
    product_s: float
    baseline_s: float | None


def median_s(function: Callable[[], object], repeat: int) -> float:
    seconds = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        seconds.append(time.perf_counter() - start)
    return statistics.median(seconds)


def once_s(function: Callable[[], object]) -> float:
    return median_s(function, 1)


# --- ingest -------------------------------------------------------------------------------------


def write_crawl(folder: Path, offers: int) -> Path:
    """A SYNTHETIC crawl of `offers` offers of one platform (feed + summary); returns the summary path."""
    folder.mkdir(parents=True, exist_ok=True)
    feed = folder / "bench-00.jsonl"
    with duckdb.connect() as con:
        relation = bench_history.synthetic_offers(con, INGEST_DAY, 0, 1, offers, platforms=1)
        relation.create_view("bench_feed")
        con.execute(
            FEED_COPY_SQL,
            {"feed": str(feed)},
        )
    summary = folder / "bench-00.summary.json"
    body = {
        "platform": "bench-00",
        "status": "ok",
        "error": None,
        "started_at": f"{INGEST_DAY}T06:00:00Z",
        "finished_at": f"{INGEST_DAY}T06:05:00Z",
        "items_yielded": offers,
        "offline": True,
        "source": "crawl",
        "feed": feed.name,
    }
    summary.write_text(json.dumps(body), encoding="utf-8")
    return summary


def warehouse_settings(folder: Path) -> Settings:
    return Settings.from_env({"GPUPLAN_WAREHOUSE": str(folder / "warehouse.duckdb")})


def load_in_fresh_warehouse(
    folder: Path, summary: Path, load: Callable[[duckdb.DuckDBPyConnection, Path], int]
) -> float:
    """Seconds `load` takes in a new, migrated warehouse file (migrating and publishing not counted)."""
    shutil.rmtree(folder, ignore_errors=True)
    with connect.writer(warehouse_settings(folder).warehouse) as con:
        con.execute("SET memory_limit = $limit", {"limit": bench_history.MEMORY_LIMIT})
        start = time.perf_counter()
        loaded = load(con, summary)
        seconds = time.perf_counter() - start
    shutil.rmtree(folder, ignore_errors=True)
    expected = json.loads(summary.read_text(encoding="utf-8"))["items_yielded"]
    if loaded != expected:
        raise SystemExit(f"{loaded} of {expected} offers loaded from {summary}")
    return seconds


def load_bulk(con: duckdb.DuckDBPyConnection, summary: Path) -> int:
    return load_crawl(con, summary).offers_loaded


def load_row_by_row(con: duckdb.DuckDBPyConnection, summary: Path) -> int:
    """The naive loader: each line parsed, priced and inserted by its own statement, in one transaction.

    FX comes from one query (the day's latest rates), so the per-row cost is the insert itself.
    """
    rates = dict(con.execute(LATEST_RATES_SQL, {"day": INGEST_DAY}).fetchall())
    feed = summary.with_name(json.loads(summary.read_text(encoding="utf-8"))["feed"])
    rows = 0
    con.execute("BEGIN TRANSACTION")
    with feed.open(encoding="utf-8") as lines:
        for line in lines:
            item = json.loads(line)
            per_gpu = item["gpu_count"] if item["price_per"] == "instance" else 1
            usd = (
                item["price_amount"]
                / per_gpu
                / HOURS_PER_PERIOD[item["billing_period"]]
                / rates[item["price_currency"]]
            )
            observed_at = dt.datetime.fromisoformat(item["observed_at"]).replace(tzinfo=None)
            params = {key: item.get(key) for key in OFFER_FIELDS.split(", ")}
            params |= {
                "crawl_id": "row-by-row",
                "hourly_rentable": item["billing_period"] == "hour",
                "usd": usd,
                "cny": usd * rates["CNY"],
                "observed_at": observed_at,
                "observed_date": observed_at.date(),
                "extra": json.dumps(item.get("extra")),
            }
            con.execute(ROW_INSERT_SQL, params)
            rows += 1
    con.execute("COMMIT")
    return rows


def ingest_growth(folder: Path, sizes: tuple[int, ...], repeat: int) -> Iterator[Measure]:
    for offers in sizes:
        summary = write_crawl(folder / f"crawl-{offers}", offers)
        target = folder / "ingest-warehouse"
        baseline = None
        if offers <= ROW_BY_ROW_MAX:
            baseline = load_in_fresh_warehouse(target, summary, load_row_by_row)
        seconds = [load_in_fresh_warehouse(target, summary, load_bulk) for _ in range(repeat)]
        shutil.rmtree(summary.parent, ignore_errors=True)
        yield Measure("ingest", offers, "offers", statistics.median(seconds), baseline)


# --- plans --------------------------------------------------------------------------------------


def plans_growth(sizes: tuple[int, ...], repeat: int) -> Iterator[Measure]:
    for count in sizes:
        offers = bench_plans.synthetic_offers(count, seed=7)
        units = offers[["gpu_model", "gpu_count"]].drop_duplicates()
        requirements = requirements_frame(bench_plans.MODELS, METHODS, load_gpus(), units)
        with connect.in_memory() as con:
            con.register("bench_offers", offers)
            con.execute("INSERT INTO offers BY NAME SELECT * FROM bench_offers")
            crawls = offers[["platform", "crawl_id"]].drop_duplicates().assign(status="ok")
            plans.record_plan_crawls(con, bench_plans.DAY, crawls)
            product = median_s(lambda: bench_plans.sql_plans(con, requirements), repeat)  # noqa: B023
        records = offers.astype(object).where(offers.notna(), None).to_dict("records")
        baseline = once_s(lambda: bench_plans.loop_plans(records, requirements))  # noqa: B023
        yield Measure("plans", count, "offers", product, baseline)


# --- trend --------------------------------------------------------------------------------------


def trend_growth(
    folder: Path, months: tuple[int, ...], offers_per_day: int, repeat: int
) -> Iterator[Measure]:
    """Append history up to each size in `months`, then time the 90-day trend ending on its last day."""
    settings = warehouse_settings(folder / "history")
    total_days = round(max(months) * DAYS_PER_MONTH)
    first_day = bench_history.LAST_DAY - dt.timedelta(days=total_days - 1)
    loaded_days = 0
    for size in months:
        days = round(size * DAYS_PER_MONTH)
        bench_history.build_warehouse(settings, first_day, loaded_days, days - loaded_days, offers_per_day)
        loaded_days = days
        until = first_day + dt.timedelta(days=days - 1)
        since = until - dt.timedelta(days=bench_history.TREND_DAYS - 1)
        fresh = bench_history.timed_fresh(settings, bench_history.trend_product, since, until, repeat)
        with bench_history.open_reader(settings) as con:
            baseline = once_s(lambda: bench_history.trend_naive(con, since, until))  # noqa: B023
        yield Measure("trend 90 d", size, "months", statistics.median(fresh), baseline)
    shutil.rmtree(settings.warehouse.parent, ignore_errors=True)


# --- report -------------------------------------------------------------------------------------


def exponent(points: list[tuple[int, float]]) -> float:
    """k in time ~ size^k: the least-squares slope of log(time) on log(size)."""
    sizes, seconds = zip(*points, strict=True)
    slope, _ = np.polyfit(np.log(sizes), np.log(seconds), 1)
    return float(slope)


def print_header() -> None:
    print(
        f"{'cost':<11} {'size':>10} {'unit':<7} {'product s':>10} {'offers/s':>10} "
        f"{'baseline s':>11} {'speed-up':>9}"
    )


def print_row(m: Measure) -> None:
    rate = f"{m.size / m.product_s:,.0f}" if m.unit == "offers" else "-"
    base = f"{m.baseline_s:.3f}" if m.baseline_s is not None else "-"
    speed = f"{m.baseline_s / m.product_s:.1f}x" if m.baseline_s is not None else "-"
    print(
        f"{m.cost:<11} {m.size:>10,} {m.unit:<7} {m.product_s:>10.3f} {rate:>10} {base:>11} {speed:>9}",
        flush=True,
    )


def print_exponents(measures: list[Measure], judged: bool) -> bool:
    """Print each cost's growth exponents; True when every last segment is linear or better."""
    target = f"last segment <= {MAX_EXPONENT}" if judged else "not judged in --quick"
    print(f"\ngrowth exponent k (time ~ size^k); target: {target}")
    print(f"{'cost':<11} {'k all':>7} {'k last':>7} {'baseline k':>11}")
    ok = True
    for cost in dict.fromkeys(m.cost for m in measures):
        rows = [m for m in measures if m.cost == cost]
        points = [(m.size, m.product_s) for m in rows]
        k_all, k_last = exponent(points), exponent(points[-2:])
        based = [(m.size, m.baseline_s) for m in rows if m.baseline_s is not None]
        k_base = f"{exponent(based):.2f}" if len(based) > 1 else "-"
        holds = k_last <= MAX_EXPONENT
        ok = ok and holds
        verdict = ("ok" if holds else "MISSED") if judged else ""
        print(f"{cost:<11} {k_all:>7.2f} {k_last:>7.2f} {k_base:>11}  {verdict}")
    return ok or not judged


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--repeat", type=int, default=3, help="runs per product timing; the median is reported"
    )
    parser.add_argument("--quick", action="store_true", help="smoke run: tiny sizes, one repeat")
    args = parser.parse_args(argv)
    ingest, plan, months, offers_per_day = INGEST_SIZES, PLAN_SIZES, HISTORY_MONTHS, 20_000
    if args.quick:
        ingest, plan, months, offers_per_day, args.repeat = (100, 300), (100, 300), (1, 2), 400, 1

    folder = Path(tempfile.mkdtemp(prefix="bench_growth."))
    measures: list[Measure] = []
    print_header()
    try:
        for measure in chain(
            ingest_growth(folder, ingest, args.repeat),
            plans_growth(plan, args.repeat),
            trend_growth(folder, months, offers_per_day, args.repeat),
        ):
            print_row(measure)
            measures.append(measure)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return 0 if print_exponents(measures, judged=not args.quick) else 1


if __name__ == "__main__":
    sys.exit(main())

"""Bench: two years of daily price history (about 15M offers) and a 90-day price trend of one GPU model.

    /work/venv/bin/python bench/bench_history.py [--quick] [--days 730] [--offers-per-day 20000]
                                                 [--repeat 7] [--dir DIR] [--keep]

Builds a warehouse file (migrated, published by `warehouse.engine.connect.writer`) holding `--days` days
of SYNTHETIC history (bench/synthetic_offers.sql: every platform of the spider registry, the GPU
catalog, seasonal prices), loaded through the history bulk path `gpuplan import` uses
(`warehouse.imports.load_imported`, one call per CHUNK_OFFERS offers, 30 days at 20k a day:
pricing, FX, duplicate and outlier rules all run). Then, on the published
file, each question with a fresh read-only connection per run, as `gpuplan history` opens one:

- trend (product): `warehouse.history.price_trend` (warehouse/queries/history/price_trend.sql over the
  `daily_run_offers` view) for H100 SXM 80GB on demand over the last 90 days. Target: median
  under 200 ms; the script exits 1 when it is missed.
- trend (view): the `price_history_daily` view (migration 003) for the same model and days.
- GPU list: `warehouse.history.priced_gpu_models`, which `gpuplan history` runs first to resolve
  the name it was given.
- naive baseline, once: the same question in pandas over the whole offers table.

The product and the baseline must agree on every day's cheapest price and offer count, or the
script stops. It prints the warehouse size on disk and the peak RSS of this process.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import resource
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

import duckdb
import pandas as pd

from config.settings import Settings
from scrapers import registry
from sizing.catalog import load_gpus
from warehouse import history, imports
from warehouse.engine import connect

LAST_DAY = dt.date(2026, 11, 30)  # the day bench_plans plans; any fixed day keeps runs comparable
TREND_GPU = "H100 SXM 80GB"
TREND_DAYS = 90  # `gpuplan history --days` default
TREND_PRICING = "on_demand"  # `gpuplan history --pricing` default
TARGET_MS = 200.0  # the history query's target
# One load_imported call per ~600k offers (30 days at 20k a day, 12 at 50k): a few hundred MB of
# frame each, so the build's peak stays ~3 GB whatever the breadth.
CHUNK_OFFERS = 600_000
SEED = 7
IMPORT_SOURCE = "import:bench"
# The models most offers are for, weighted 4x in the synthetic catalog; every other catalog GPU 1x.
# A reading of the vastai and runpod fixtures, where these dominate the listings.
POPULAR_GPUS = {
    "H100 SXM 80GB": 4,
    "RTX 4090 24GB": 4,
    "A100 SXM 80GB": 4,
    "RTX 3090 24GB": 4,
    "H200 SXM 141GB": 2,
}
# DuckDB's default is 80 % of RAM; the dev machine's 24 GB is shared, so cap each connection.
MEMORY_LIMIT = "4GB"
NAIVE_CHUNK_VECTORS = 500  # ~1M rows per pandas chunk in the naive baseline
SYNTHETIC_SQL = Path(__file__).with_name("synthetic_offers.sql").read_text(encoding="utf-8")
VIEW_TREND_SQL = (
    "SELECT * FROM price_history_daily WHERE gpu_model = $gpu_model "
    "AND observed_date BETWEEN $since AND $until ORDER BY observed_date"
)


def gpu_slots() -> pd.DataFrame:
    """The catalog GPUs, each repeated by its weight: `bench_gpu_slots` for synthetic_offers.sql."""
    rows = [
        {"gpu_model": gpu.gpu_model, "gpu_form": gpu.form, "memory_gb": gpu.memory_gb}
        for gpu in load_gpus()
        for _ in range(POPULAR_GPUS.get(gpu.gpu_model, 1))
    ]
    frame = pd.DataFrame(rows)
    frame.insert(0, "slot", range(len(frame)))
    return frame


def fixture_currency(platform: str, index: int) -> str:
    """The currency most of the platform's recorded offers quote (its fixture's expected items).

    A name without a fixture (bench_growth's `bench-NN`) keeps the generator's old shape: 1 in 4
    quotes CNY, as the Chinese platforms do.
    """
    expected = registry.fixture_dir(platform) / "expected.jsonl"
    if not expected.is_file():
        return "CNY" if index % 4 == 3 else "USD"
    lines = expected.read_text(encoding="utf-8").splitlines()
    seen = Counter(json.loads(line).get("price_currency") for line in lines if line.strip())
    return next((currency for currency, _ in seen.most_common() if currency), "USD")


def platform_frame(platforms: Sequence[str] | None = None) -> pd.DataFrame:
    """`bench_platforms` for synthetic_offers.sql: the registry's platforms (`scrapy list`) unless
    named, each with its fixture's currency."""
    names = registry.platforms() if platforms is None else list(platforms)
    return pd.DataFrame(
        {
            "platform_no": range(len(names)),
            "platform": names,
            "price_currency": [fixture_currency(name, index) for index, name in enumerate(names)],
        }
    )


def synthetic_offers(
    con: duckdb.DuckDBPyConnection,
    first_day: dt.date,
    day_offset: int,
    days: int,
    offers_per_day: int,
    platforms: Sequence[str] | None = None,
) -> duckdb.DuckDBPyRelation:
    """SYNTHETIC offers of days [first_day + day_offset, + days) as a relation (see synthetic_offers.sql).

    `offers_per_day` is shared evenly by `platforms` (default: every platform of the spider
    registry), rounded down, at least 1 each.
    """
    frame = platform_frame(platforms)
    con.register("bench_gpu_slots", gpu_slots())
    con.register("bench_platforms", frame)
    params = {
        "first_day": first_day,
        "day_offset": day_offset,
        "days": days,
        "offers_per_platform": max(1, offers_per_day // len(frame)),
        "seed": SEED,
    }
    return con.sql(SYNTHETIC_SQL, params=params)


def load_history(
    con: duckdb.DuckDBPyConnection, first_day: dt.date, day_offset: int, days: int, offers_per_day: int
) -> int:
    """Load SYNTHETIC days [first_day + day_offset, + days) with `imports.load_imported`; returns offers."""
    loaded = 0
    chunk_days = max(1, CHUNK_OFFERS // offers_per_day)
    for start in range(day_offset, day_offset + days, chunk_days):
        chunk = min(chunk_days, day_offset + days - start)
        offers = synthetic_offers(con, first_day, start, chunk, offers_per_day).df()
        offers["item_json"] = '{"extra":' + offers["extra"] + "}"
        runs = (
            offers.groupby(["crawl_id", "platform", "day"], as_index=False)
            .size()
            .rename(columns={"size": "items_yielded"})
            .assign(rows_refused=0, problem=None)
        )
        refused = pd.DataFrame(columns=list(imports.IMPORT_REFUSED_COLUMNS), dtype=object)
        result = imports.load_imported(
            con, IMPORT_SOURCE, "bench/synthetic_offers.sql", runs, offers, refused
        )
        if (result["status"] != "ok").any():
            bad = result[result["status"] != "ok"].iloc[0]
            raise SystemExit(
                f"synthetic run {bad['platform']} {bad['day']} did not load cleanly: {bad['error']}"
            )
        loaded += int(result["offers_loaded"].sum())
    return loaded


def build_warehouse(
    settings: Settings, first_day: dt.date, day_offset: int, days: int, offers_per_day: int
) -> int:
    """Append SYNTHETIC days to the warehouse of `settings` with its writer, which publishes it on exit."""
    with connect.writer(settings.warehouse) as con:
        con.execute("SET memory_limit = $limit", {"limit": MEMORY_LIMIT})
        return load_history(con, first_day, day_offset, days, offers_per_day)


def open_reader(settings: Settings) -> duckdb.DuckDBPyConnection:
    con = connect.reader(settings.warehouse)
    con.execute("SET memory_limit = $limit", {"limit": MEMORY_LIMIT})
    return con


def trend_product(con: duckdb.DuckDBPyConnection, since: dt.date, until: dt.date) -> pd.DataFrame:
    return history.price_trend(con, TREND_GPU, since, until, pricing_type=TREND_PRICING)


def trend_view(con: duckdb.DuckDBPyConnection, since: dt.date, until: dt.date) -> pd.DataFrame:
    return con.execute(VIEW_TREND_SQL, {"gpu_model": TREND_GPU, "since": since, "until": until}).df()


def gpu_list(con: duckdb.DuckDBPyConnection, since: dt.date, until: dt.date) -> pd.DataFrame:
    return history.priced_gpu_models(con)


def trend_naive(con: duckdb.DuckDBPyConnection, since: dt.date, until: dt.date) -> pd.DataFrame:
    """The product's question asked naively: every offer through pandas, then join, filter, group.

    The table streams through in chunks of NAIVE_CHUNK_VECTORS x 2,048 rows, so memory stays
    bounded (15M rows at once would take ~8 GB of Python strings); the work is still all of it.
    """
    result = con.execute(
        "SELECT crawl_id, platform, gpu_model, pricing_type, price_usd_per_gpu_hour FROM offers"
    )
    kept = []
    while not (chunk := result.fetch_df_chunk(NAIVE_CHUNK_VECTORS)).empty:
        kept.append(chunk[(chunk["gpu_model"] == TREND_GPU) & (chunk["pricing_type"] == TREND_PRICING)])
    offers = pd.concat(kept, ignore_index=True)
    runs = con.execute("SELECT day, platform, crawl_id FROM daily_runs").df()
    merged = offers.merge(runs, on=["crawl_id", "platform"])
    merged["day"] = pd.to_datetime(merged["day"]).dt.date
    chosen = merged[
        merged["price_usd_per_gpu_hour"].notna() & (merged["day"] >= since) & (merged["day"] <= until)
    ]
    return (
        chosen.groupby("day")["price_usd_per_gpu_hour"]
        .agg(min_usd_per_gpu_hour="min", median_usd_per_gpu_hour="median", offers="size")
        .reset_index()
    )


Question = Callable[[duckdb.DuckDBPyConnection, dt.date, dt.date], pd.DataFrame]


def timed_fresh(
    settings: Settings, question: Question, since: dt.date, until: dt.date, repeat: int
) -> list[float]:
    """Seconds per run, each on a new reader connection (opening it included), as a CLI call does."""
    seconds = []
    for _ in range(repeat):
        start = time.perf_counter()
        with open_reader(settings) as con:
            question(con, since, until)
        seconds.append(time.perf_counter() - start)
    return seconds


def timed_warm(
    settings: Settings, question: Question, since: dt.date, until: dt.date, repeat: int
) -> list[float]:
    """Seconds per run on one open connection after a first, untimed run: the query alone."""
    with open_reader(settings) as con:
        question(con, since, until)
        seconds = []
        for _ in range(repeat):
            start = time.perf_counter()
            question(con, since, until)
            seconds.append(time.perf_counter() - start)
    return seconds


def same_answer(product: pd.DataFrame, naive: pd.DataFrame) -> None:
    """Stop unless both give the same cheapest price and offer count on the same days."""
    left = product.assign(day=pd.to_datetime(product["day"]).dt.date).set_index("day")
    right = naive.set_index("day")
    if list(left.index) != list(right.index):
        raise SystemExit(f"product and naive trends cover different days: {len(left)} vs {len(right)}")
    if not (left["offers"].to_numpy() == right["offers"].to_numpy()).all():
        raise SystemExit("product and naive trends count different offers")
    gap = (left["min_usd_per_gpu_hour"] - right["min_usd_per_gpu_hour"]).abs().max()
    if gap > 1e-9:
        raise SystemExit(f"product and naive trends disagree on the cheapest price by up to {gap}")


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=730, help="days of history (730: two years)")
    parser.add_argument("--offers-per-day", type=int, default=20_000, help="offers a day over all platforms")
    parser.add_argument("--repeat", type=int, default=7, help="runs per question; the median is reported")
    parser.add_argument("--quick", action="store_true", help="smoke run: 10 days of 800 offers, 2 repeats")
    parser.add_argument("--dir", type=Path, help="folder for the warehouse (default: a temporary one)")
    parser.add_argument("--keep", action="store_true", help="keep the warehouse folder afterwards")
    args = parser.parse_args(argv)
    if args.quick:
        args.days, args.offers_per_day, args.repeat = 10, 800, 2

    folder = args.dir or Path(tempfile.mkdtemp(prefix="bench_history."))
    folder.mkdir(parents=True, exist_ok=True)
    settings = Settings.from_env({"GPUPLAN_WAREHOUSE": str(folder / "warehouse.duckdb")})
    if settings.warehouse.exists() or connect.writer_path(settings.warehouse).exists():
        raise SystemExit(f"{folder} already holds a warehouse; give an empty --dir")
    first_day = LAST_DAY - dt.timedelta(days=args.days - 1)
    since, until = LAST_DAY - dt.timedelta(days=TREND_DAYS - 1), LAST_DAY
    try:
        start = time.perf_counter()
        rows = build_warehouse(settings, first_day, 0, args.days, args.offers_per_day)
        build_s = time.perf_counter() - start
        size_mb = settings.warehouse.stat().st_size / 1e6
        print(
            f"history: {args.days} days x {args.offers_per_day:,} offers = {rows:,} offers loaded, "
            f"{first_day}..{LAST_DAY}"
        )
        print(f"built in {build_s:.1f} s ({rows / build_s:,.0f} offers/s through imports.load_imported)")
        print(
            f"warehouse on disk: {size_mb:,.1f} MB published ({size_mb * 1e6 / max(rows, 1):.0f} bytes/offer)"
        )

        questions: dict[str, Question] = {
            "trend (product)": trend_product,
            "trend (view)": trend_view,
            "GPU list": gpu_list,
        }
        medians = {}
        print(f"\n{TREND_GPU}, {TREND_PRICING}, {since}..{until}; medians of {args.repeat} runs")
        print(
            "fresh: a new read-only connection per run, opening included (as `gpuplan history`); "
            "warm: the query alone"
        )
        print(f"{'question':<18} {'fresh ms':>9} {'(min-max)':>15} {'warm ms':>9}")
        for name, question in questions.items():
            fresh = timed_fresh(settings, question, since, until, args.repeat)
            warm = timed_warm(settings, question, since, until, args.repeat)
            medians[name] = statistics.median(fresh) * 1000
            spread = f"({min(fresh) * 1000:.0f}-{max(fresh) * 1000:.0f})"
            print(f"{name:<18} {medians[name]:>9.1f} {spread:>15} {statistics.median(warm) * 1000:>9.1f}")

        with open_reader(settings) as con:
            product = trend_product(con, since, until)
            start = time.perf_counter()
            naive = trend_naive(con, since, until)
            naive_ms = (time.perf_counter() - start) * 1000
        same_answer(product, naive)
        print(f"{'naive (pandas)':<18} {naive_ms:>9.1f} {'(1 run)':>15} {'':>9}")
        print(
            f"\nspeed-up over naive: {naive_ms / medians['trend (product)']:.0f}x; "
            f"both give the same {len(product)} days"
        )
        print(f"peak RSS of this process: {peak_rss_mb():,.0f} MB")
        ok = medians["trend (product)"] < TARGET_MS or args.quick
        verdict = "not judged in --quick" if args.quick else "ok" if ok else "MISSED"
        print(
            f"90-day trend, fresh connection: median {medians['trend (product)']:.1f} ms; "
            f"target < {TARGET_MS:.0f} ms: {verdict}"
        )
        return 0 if ok else 1
    finally:
        if not args.keep and args.dir is None:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

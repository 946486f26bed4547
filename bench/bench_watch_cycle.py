"""Bench: one intraday watch cycle on a warehouse with a year of history vs on an empty one.

    .venv/bin/python bench/bench_watch_cycle.py [--days 365] [--offers-per-day 4000] [--cycles 5]
                                                [--quick] [--dir DIR]

Builds two warehouses: an empty one (migrated and published) and one holding `--days` days of
SYNTHETIC history (bench_history's builder: every platform of the spider registry, the GPU catalog,
loaded through the history bulk path). On each it runs `--cycles` watch cycles
(`pipelines.intraday.run_cycle`) over five platforms with a price, a stock and a job watch; each
cycle's crawls are SYNTHETIC feeds of 300 offers a platform written just before (the crawl is not
timed: what is timed is what the cycle adds to the crawls: loading them, checking the watches,
recording the state). No push channel: a push is a chat service's latency.

For each cycle it measures the wall time and the bytes the process wrote (`wchar` of
/proc/self/io: every write(2)/pwrite(2), DuckDB's file and WAL included, the crawl files not) and
prints the medians and their ratio, history over empty. The cycles alternate between the two
warehouses, so that a shared machine's changing load falls on both alike. Target: both ratios at
most 1.2 (a cycle's cost does not grow with history); the script exits 1 when one is missed.
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
from collections.abc import Sequence
from pathlib import Path

import bench_history

from config.settings import Settings
from config.watches_file import parse_watches
from pipelines.intraday import run_cycle
from scrapers import registry
from scrapers.crawl.summary import CrawlSummary
from sizing.jobs import Job
from warehouse.engine import connect

TARGET_RATIO = 1.2
PLATFORMS = 5
OFFERS_PER_CRAWL = 300
GPU = ("NVIDIA H100 80GB HBM3", "H100 SXM 80GB", 80, "SXM")
JOB = Job(name="bench", model="7B", method="lora", tokens=1e9, within_days=30)


def _line(platform: str, n: int, price: float, observed: str) -> str:
    raw, model, memory, form = GPU
    return json.dumps(
        {
            "platform": platform,
            "offer_id": f"synthetic-{n}",
            "gpu_name_raw": raw,
            "gpu_model": model,
            "gpu_memory_gb": memory,
            "gpu_form": form,
            "gpu_count": 1 + n % 8,
            "price_amount": price,
            "price_currency": "USD",
            "price_per": "gpu",
            "billing_period": "hour",
            "pricing_type": "on_demand",
            "available_gpus": 1 + n % 8,
            "observed_at": observed,
            "source_url": f"https://{platform}.invalid/offers",
        }
    )


def synthetic_crawl(names: Sequence[str], out_dir: Path) -> list[CrawlSummary]:
    """SYNTHETIC crawls of `names`, observed now: OFFERS_PER_CRAWL offers of one card each."""
    out_dir.mkdir(parents=True, exist_ok=True)
    now = dt.datetime.now(dt.UTC).replace(microsecond=0)
    stamp = now.strftime("%Y-%m-%dT%H:%M:%SZ")
    summaries = []
    for platform in names:
        feed = out_dir / f"{platform}.jsonl"
        lines = [_line(platform, n, round(1.5 + n % 200 / 100, 2), stamp) for n in range(OFFERS_PER_CRAWL)]
        feed.write_text("\n".join(lines) + "\n", "utf-8")
        summary = out_dir / f"{platform}.summary.json"
        summary.write_text(
            json.dumps(
                {
                    "platform": platform,
                    "status": "ok",
                    "error": None,
                    "started_at": stamp,
                    "finished_at": stamp,
                    "items_yielded": OFFERS_PER_CRAWL,
                    "offline": False,
                    "source": "crawl",
                    "feed": feed.name,
                }
            ),
            "utf-8",
        )
        summaries.append(CrawlSummary.read(summary))
    return summaries


def written_bytes() -> int:
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("wchar:"):
            return int(line.split()[1])
    raise SystemExit("no wchar in /proc/self/io")


def cycle(warehouse: Path, out_dir: Path, platforms: list[str]) -> tuple[float, float, int]:
    """Run one cycle: its wall and CPU seconds (every thread of the process) and bytes written, its
    crawl files excluded."""
    watches = parse_watches(
        f"- gpu: H100\n  below_usd_per_gpu_hour: 1.6\n  platforms: [{', '.join(platforms)}]\n"
        f"- gpu: H100\n  min_available_gpus: 8\n  platforms: [{platforms[0]}]\n"
        "- job: bench\n  below_total_usd: 100000\n",
        "bench watches",
        platforms,
    )
    jobs = {JOB.name: JOB.__class__(**{**JOB.__dict__, "platforms": tuple(platforms)})}
    crawled = synthetic_crawl(platforms, out_dir)  # crawled before the timer, as a crawl would be

    def ready(names: Sequence[str], _: Path) -> list[CrawlSummary]:
        assert list(names) == platforms, names
        return crawled

    before, start, cpu = written_bytes(), time.perf_counter(), time.process_time()
    done = run_cycle(warehouse, out_dir, watches, jobs, platforms, ready)
    seconds, cpu, written = time.perf_counter() - start, time.process_time() - cpu, written_bytes() - before
    assert [load.status for load in done.loads] == ["ok"] * len(platforms), done.loads
    assert all(check.known for check in done.checks), done.checks
    return seconds, cpu, written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=365, help="days of history (365: a year)")
    parser.add_argument("--offers-per-day", type=int, default=4000, help="offers a day over all platforms")
    parser.add_argument("--cycles", type=int, default=5, help="cycles per warehouse; medians reported")
    parser.add_argument("--quick", action="store_true", help="smoke run: 10 days of 800 offers, 2 cycles")
    parser.add_argument("--dir", type=Path, help="folder for the warehouses (default: a temporary one)")
    args = parser.parse_args(argv)
    if args.quick:
        args.days, args.offers_per_day, args.cycles = 10, 800, 2
    folder = args.dir or Path(tempfile.mkdtemp(prefix="bench_watch_cycle."))
    platforms = registry.platforms()[:PLATFORMS]
    try:
        empty = Settings.from_env({"GPUPLAN_WAREHOUSE": str(folder / "empty" / "warehouse.duckdb")})
        full = Settings.from_env({"GPUPLAN_WAREHOUSE": str(folder / "history" / "warehouse.duckdb")})
        with connect.writer(empty.warehouse):
            pass
        first_day = bench_history.LAST_DAY - dt.timedelta(days=args.days - 1)
        start = time.perf_counter()
        rows = bench_history.build_warehouse(full, first_day, 0, args.days, args.offers_per_day)
        size_mb = full.warehouse.stat().st_size / 1e6
        print(
            f"history: {args.days} days x {args.offers_per_day:,} offers = {rows:,} offers, "
            f"{size_mb:,.0f} MB published, built in {time.perf_counter() - start:.0f} s"
        )
        print(
            f"one cycle: {PLATFORMS} platforms ({', '.join(platforms)}) x {OFFERS_PER_CRAWL} offers, "
            f"a price, a stock and a job watch; medians of {args.cycles} cycles"
        )
        # interleaved, one cycle on each warehouse in turn: a shared machine's load drifts over minutes
        sides = {"empty": empty.warehouse, "history": full.warehouse}
        measured: dict[str, list[tuple[float, float, int]]] = {name: [] for name in sides}
        for n in range(args.cycles):
            for name, warehouse in sides.items():
                measured[name].append(cycle(warehouse, folder / f"{name}-crawls" / f"cycle{n}", platforms))
        results = {}
        for name, runs in measured.items():
            seconds, cpus, written = ([run[k] for run in runs] for k in range(3))
            results[name] = (statistics.median(seconds), statistics.median(cpus), statistics.median(written))
            print(
                f"{name:<8} {results[name][0] * 1000:>8.0f} ms  CPU {results[name][1] * 1000:>6.0f} ms  "
                f"{results[name][2] / 1e6:>6.2f} MB written  "
                f"(each: {', '.join(f'{s * 1000:.0f}' for s in seconds)} ms; "
                f"{', '.join(f'{w / 1e6:.2f}' for w in written)} MB)"
            )
        time_ratio = results["history"][0] / results["empty"][0]
        cpu_ratio = results["history"][1] / results["empty"][1]
        bytes_ratio = results["history"][2] / results["empty"][2]
        met = time_ratio <= TARGET_RATIO and bytes_ratio <= TARGET_RATIO
        verdict = "not judged in --quick" if args.quick else "met" if met else "MISSED"
        print(
            f"history / empty: time {time_ratio:.2f}x (CPU {cpu_ratio:.2f}x), "
            f"bytes written {bytes_ratio:.2f}x (target <= {TARGET_RATIO}x: {verdict})"
        )
        return 0 if met or args.quick else 1
    finally:
        if args.dir is None:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

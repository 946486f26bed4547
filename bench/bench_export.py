"""Bench: exporting one day of the open dataset costs what that day holds, not the whole history.

    python bench/bench_export.py [--short-days 30] [--long-days 240] [--offers-per-day 20000]
                                 [--repeat 5] [--quick]

Two warehouses of SYNTHETIC history (bench/synthetic_offers.sql through bench_history.build_warehouse,
the registry's platforms): a short one and one with --long-days days. The same last day is exported
from each (`warehouse.export.export_days`, into a fresh folder every time, so every export writes),
alternating, --repeat times. Yardstick, in the same run: the export of that day from the short
warehouse. Target: the long warehouse's median export at most RATIO_TARGET times the short one's.
The synthetic history has offers and no plans, so the plan tables' files are empty here.
"""

from __future__ import annotations

import argparse
import datetime as dt
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import bench_history

from config.settings import Settings
from warehouse import export
from warehouse.engine import connect

RATIO_TARGET = 1.5
FIRST_DAY = dt.date(2026, 1, 1)


def build(root: Path, days: int, long_days: int, offers_per_day: int) -> Settings:
    settings = Settings.from_env({"GPUPLAN_WAREHOUSE": str(root / f"{days}d" / "warehouse.duckdb")})
    settings.warehouse.parent.mkdir(parents=True)
    # The same last day in both: the short history is the long one's last days.
    bench_history.build_warehouse(settings, FIRST_DAY, long_days - days, days, offers_per_day)
    return settings


def timed_export(settings: Settings, day: dt.date, root: Path) -> tuple[float, int]:
    folder = Path(tempfile.mkdtemp(dir=root))
    try:
        started = time.perf_counter()
        with connect.reader(settings.warehouse) as con:
            (exported,) = export.export_days(con, folder, [day])
        return time.perf_counter() - started, exported.rows["offers"]
    finally:
        shutil.rmtree(folder)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--short-days", type=int, default=30)
    parser.add_argument("--long-days", type=int, default=240)
    parser.add_argument("--offers-per-day", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="a tiny smoke run; targets not judged")
    args = parser.parse_args(argv)
    if args.quick:
        args.short_days, args.long_days, args.offers_per_day, args.repeat = 2, 6, 600, 1
    day = FIRST_DAY + dt.timedelta(days=args.long_days - 1)
    root = Path(tempfile.mkdtemp(prefix="bench-export-"))
    try:
        started = time.perf_counter()
        short = build(root, args.short_days, args.long_days, args.offers_per_day)
        long = build(root, args.long_days, args.long_days, args.offers_per_day)
        built_s = time.perf_counter() - started
        print(f"built {args.short_days}- and {args.long_days}-day warehouses in {built_s:.0f} s")
        times: dict[str, list[float]] = {"short": [], "long": []}
        rows = 0
        for _ in range(args.repeat):
            for name, settings in (("short", short), ("long", long)):
                seconds, rows = timed_export(settings, day, root)
                times[name].append(seconds)
        short_s, long_s = statistics.median(times["short"]), statistics.median(times["long"])
        ratio = long_s / short_s
        print(f"{'history':>10} {'days':>6} {'export s (median)':>18}")
        print(f"{'short':>10} {args.short_days:>6} {short_s:>18.3f}")
        print(f"{'long':>10} {args.long_days:>6} {long_s:>18.3f}")
        print(f"one day: {rows:,} offers; long / short = {ratio:.2f}x (target <= {RATIO_TARGET}x)")
        if args.quick:
            print("not judged in --quick")
            return 0
        return 0 if ratio <= RATIO_TARGET else 1
    finally:
        shutil.rmtree(root)


if __name__ == "__main__":
    sys.exit(main())

"""Bench: import the real 159-day observations file, then backfill cheapest plans and changes for every day.

    /work/venv/bin/python bench/bench_backfill.py [--repeat 3] [--baseline] [--file CSV]

The file is ../shared/samples/price_history/cherielilili_observations_2026-02-11_to_2026-07-20.csv
(33,654 rows, 3,305 platform-days, 159 days; real data). Steps, on a warehouse file written by
`warehouse.engine.connect.writer` as `gpuplan import` and `gpuplan backfill` do:

- import: `warehouse.imports.import_file` (read, price, one bulk load of every run), once;
- backfill (product): `gpuplan.commands.backfill.backfill_plans` over all 159 days, `--repeat`
  times, each on a fresh copy of the imported warehouse (plans computed from nothing, as on a
  new user's first day). Target: under 60 s; the script exits 1 when the median misses.
- baseline (`--baseline`, once): the same days as 159 runs of the plan assets would do them,
  the plan sequence (`warehouse.plan_sequence.plan_days`) once per day, so each day's requirements are
  sized from scratch, the rest equal.
  Both must produce the same cheapest plans, or the script stops.

Prints the machine (CPUs, load average) beside the figures: the dev machine is shared.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import duckdb

from config.settings import Settings
from scrapers.history import formats
from warehouse import backfill, daily_plans, plan_sequence
from warehouse.backfill import backfill_plans
from warehouse.engine import connect
from warehouse.imports import import_file
from warehouse.plan_sequence import PlanOptions

OBSERVATIONS = (
    Path(__file__).resolve().parents[1].parent
    / "shared/samples/price_history/cherielilili_observations_2026-02-11_to_2026-07-20.csv"
)
TARGET_S = 60.0  # backfilling the 159 days of the observations file
PLANS_QUERY = (
    "SELECT plan_date, model, method, ranking, status, platform, offer_id, gpu_count, rent_usd_per_month"
    " FROM cheapest_plans ORDER BY ALL"
)


def _backfill_all(con, settings):
    return backfill_plans(con, PlanOptions.from_settings(settings), None, None)


def naive_backfill(con: duckdb.DuckDBPyConnection, settings: Settings) -> None:
    """Every day as its own run of the plan assets: the plan sequence once per day, so requirements
    are sized per day."""
    crawls = backfill.backfill_crawls(con, None, None)
    for day, group in crawls.groupby("day"):
        daily_plans.record_plan_crawls(con, day, group[~group["already_recorded"]])
        plan_sequence.plan_days(con, [day], PlanOptions.from_settings(settings))


def timed_on_copy(template: Settings, folder: Path, run) -> tuple[float, float, list[tuple]]:
    """Run `run(con, settings)` on a fresh copy of the imported warehouse; (wall s, CPU s, cheapest plans).

    CPU time is this process's, all threads (DuckDB's too): on a shared machine the wall clock
    also measures the neighbours.
    """
    settings = Settings.from_env({"GPUPLAN_WAREHOUSE": str(folder / "warehouse.duckdb")})
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    shutil.copyfile(connect.writer_path(template.warehouse), connect.writer_path(settings.warehouse))
    with connect.writer(settings.warehouse) as con:
        started, cpu_started = time.perf_counter(), time.process_time()
        run(con, settings)
        seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu_started
        produced = con.execute(PLANS_QUERY).fetchall()
    return seconds, cpu_seconds, produced


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=3, help="backfill runs to take the median of")
    parser.add_argument(
        "--baseline", action="store_true", help="also time the per-day baseline (about 2x slower)"
    )
    parser.add_argument("--file", type=Path, default=OBSERVATIONS, help="the observations CSV")
    args = parser.parse_args()
    if not args.file.is_file():
        print(f"observations file not found: {args.file} (the shared samples are not there)", file=sys.stderr)
        return 2
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    root = Path(tempfile.mkdtemp(prefix="bench_backfill."))
    try:
        template = Settings.from_env({"GPUPLAN_WAREHOUSE": str(root / "imported" / "warehouse.duckdb")})
        with connect.writer(template.warehouse) as con:
            started = time.perf_counter()
            report = import_file(con, formats.get("observations"), args.file)
            import_s = time.perf_counter() - started
        runs = len(report.runs)
        print(f"import: {report.offers_loaded:,} offers, {runs:,} platform-days in {import_s:.1f} s")

        results = [
            timed_on_copy(template, root / f"run{index}", _backfill_all) for index in range(args.repeat)
        ]
        seconds = [result[0] for result in results]
        produced = results[0][2]
        median_s = statistics.median(seconds)
        print(
            f"backfill: {len({row[0] for row in produced})} days, {len(produced):,} plan rows; median "
            f"{median_s:.1f} s wall, {statistics.median(result[1] for result in results):.1f} s CPU "
            f"(wall per run: {', '.join(f'{s:.1f}' for s in seconds)}; target {TARGET_S:.0f} s)"
        )
        if args.baseline:
            baseline_s, baseline_cpu_s, baseline_plans = timed_on_copy(
                template, root / "baseline", naive_backfill
            )
            if baseline_plans != produced:
                print("baseline and backfill disagree on the cheapest plans", file=sys.stderr)
                return 1
            print(
                f"baseline (requirements sized per day): {baseline_s:.1f} s wall, "
                f"{baseline_cpu_s:.1f} s CPU, same plans"
            )
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(f"finished {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC, load average {os.getloadavg()[0]:.1f}")
    return 0 if median_s < TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())

"""Bench: how fast light commands start, against the imports no Python CLI of this kind can avoid.

    /work/venv/bin/python bench/bench_startup.py [--quick] [--repeat 15]

Pairs, each measured as a whole child process (interpreter start included), interleaved in one
run so both sides see the same machine load; the median of each side and their ratio:

    gpuplan --help            against  python -c 'import typer, rich, duckdb'        target <= 1.6x
    gpuplan sql 'select 1'    against  a bare DuckDB `select 1` on the same file     target <= 2.5x

The warehouse is a fresh, migrated one in a temporary folder (what `gpuplan sql` opens). The
load average is printed before and after. Exits 1 when a target is missed (`--quick`: 2 pairs,
not judged).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from config.settings import Settings
from warehouse.engine import connect

GPUPLAN = Path(sys.executable).with_name("gpuplan")
YARDSTICK_IMPORTS = "import typer, rich, duckdb"
BARE_SELECT = (
    "import duckdb, sys; print(duckdb.connect(sys.argv[1], read_only=True).sql('select 1').fetchall())"
)


def wall_s(command: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} exited {done.returncode}:\n{done.stdout}{done.stderr}")
    return seconds


def load_average() -> str:
    return " ".join(f"{value:.1f}" for value in os.getloadavg())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15, help="pairs per comparison; medians are reported")
    parser.add_argument("--quick", action="store_true", help="smoke run: 2 pairs each, targets not judged")
    args = parser.parse_args(argv)
    repeat = 2 if args.quick else args.repeat
    root = Path(tempfile.mkdtemp(prefix="bench_startup."))
    try:
        warehouse = root / "warehouse.duckdb"
        with connect.writer(Settings.from_env({"GPUPLAN_WAREHOUSE": str(warehouse)}).warehouse):
            pass  # migrated and published, as after a first refresh
        env = {**os.environ, "GPUPLAN_WAREHOUSE": str(warehouse), "GPUPLAN_CRAWL_DIR": str(root / "crawls")}
        pairs = {
            "gpuplan --help": (
                [str(GPUPLAN), "--help"],
                [sys.executable, "-c", YARDSTICK_IMPORTS],
                1.6,
            ),
            "gpuplan sql 'select 1'": (
                [str(GPUPLAN), "sql", "select 1"],
                [sys.executable, "-c", BARE_SELECT, str(warehouse)],
                2.5,
            ),
        }
        before = load_average()
        results = []
        for name, (command, yardstick, target) in pairs.items():
            ours, theirs = [], []
            for index in range(repeat):
                order = [(command, ours), (yardstick, theirs)]
                for argv_, into in order if index % 2 == 0 else reversed(order):
                    into.append(wall_s(argv_, env))
            results.append((name, statistics.median(ours), statistics.median(theirs), target))
        after = load_average()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(f"\n{'command':<24} {'median s':>9} {'yardstick s':>12} {'ratio':>6} {'target':>7}")
    missed = []
    for name, ours_s, theirs_s, target in results:
        ratio = ours_s / theirs_s
        print(f"{name:<24} {ours_s:>9.3f} {theirs_s:>12.3f} {ratio:>5.2f}x {target:>6.1f}x")
        if ratio > target:
            missed.append(name)
    print(f"(median of {repeat} interleaved pairs; load average {before} before, {after} after)")
    if args.quick:
        print("targets not judged in --quick")
        return 0
    print("targets: " + ("missed by " + ", ".join(missed) if missed else "ok"))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())

"""Bench: publishing the warehouse at a year of history, by whole copy (now) and in place (before).

    /work/venv/bin/python bench/bench_publish.py [--quick] [--days 365] [--offers-per-day 50000]
                                                 [--repeat 4] [--template DIR] [--before REV] [--dir DIR]

Builds (or takes, `--template`, a folder `bench_e2e.seed_history` filled) a warehouse holding
`--days` days of SYNTHETIC history at today's breadth (bench/synthetic_offers.sql: every registry
platform, 50,000 offers a day: 365 days are ~1.6 GB), published twice so it has a `.prev`, as a
daily run finds it. Each repeat copies it to a fresh folder, appends one more SYNTHETIC day with
the writer (no publish), then times, on that same state:

- yardstick: a durable copy of the writer file (`warehouse.engine.layout.copy_durably`), the floor of any
  publish that copies;
- now: `warehouse.engine.publishing.publish` of this tree: copy, verify every block of the copy
  (`warehouse.engine.integrity.check_file`), keep the replaced snapshot as `.prev`, rename into place;
- before: `publish` of `--before` (default: the commit before the whole-copy publish), which
  brought the unused `.prev` up to date in place, writing only the blocks that differ, after
  comparing it with the writer file block by block; run on its own copy of the folder;
- full read: a durable copy, then DuckDB reading every column of every table of it read-only
  (`integrity._open_and_read(scan_every_block=True)`), what "let DuckDB verify" would cost. It
  misses a damaged index block (tests/warehouse/test_blocks.py), so it is measured, not used.

The four run in a rotated order (each first once in four repeats). Every timing starts with no
dirty page left (`os.sync`), or the first fsync pays for the setup's copies. Prints each median in
seconds and as a ratio of the yardstick. No target: the figures say what the simpler publish costs
(`--quick`: 3 days x 2,000 offers, once). Files are in the page cache (the machine has room), as
they are right after the writer closed its file.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import bench_e2e
import bench_history

from config.settings import Settings
from warehouse.engine import connect, integrity, layout, publishing

ROOT = Path(__file__).resolve().parents[1]
BEFORE = "19e2850"  # main before the whole-copy publish: the in-place block diff into `.prev`
OLD_MODULES = ("layout", "blocks", "integrity", "publishing")


def old_publishing(rev: str, folder: Path) -> ModuleType:
    """The publishing modules as they were at `rev` (then in warehouse/), importable beside this
    tree's as `old_warehouse`."""
    package = folder / "old_warehouse"
    package.mkdir()
    (package / "__init__.py").write_text("", "utf-8")
    for name in OLD_MODULES:
        source = subprocess.run(
            ["git", "-C", str(ROOT), "show", f"{rev}:warehouse/{name}.py"],
            capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
        for module in OLD_MODULES:
            source = source.replace(f"from warehouse.{module} import", f"from old_warehouse.{module} import")
        source = source.replace(
            "from warehouse import blocks, integrity", "from old_warehouse import blocks, integrity"
        )
        source = source.replace("from warehouse import blocks", "from old_warehouse import blocks")
        (package / f"{name}.py").write_text(source, "utf-8")
    sys.path.insert(0, str(folder))
    return importlib.import_module("old_warehouse.publishing")


def add_day(folder: Path, days: int, offers_per_day: int) -> int:
    """Append one SYNTHETIC day to the warehouse in `folder` without publishing; its generation."""
    settings = Settings.from_env({"GPUPLAN_WAREHOUSE": str(folder / "warehouse.duckdb")})
    first_day = bench_history.LAST_DAY - dt.timedelta(days=days - 1)
    with connect.writer(settings.warehouse, publish=False) as con:
        con.execute("SET memory_limit = $limit", {"limit": bench_history.MEMORY_LIMIT})
        bench_history.load_history(con, first_day, days, 1, offers_per_day)
        ((generation,),) = con.execute("SELECT generation FROM warehouse_stamp").fetchall()
    return int(generation)


def clone(source: Path, root: Path, name: str) -> Path:
    """A copy of the warehouse folder `source` (record of what was published fixed to the copy)."""
    folder = bench_e2e.fresh_folder(root, name, source)
    (folder / "warehouse.writer.duckdb.lock").unlink(missing_ok=True)
    return folder


def timed(action: Callable[..., object], *args: object) -> float:
    """Seconds `action(*args)` takes, every dirty page written out first: an fsync in it must not pay
    for the copies that set the folder up (ext4 commits its journal for the whole file system)."""
    os.sync()
    start = time.perf_counter()
    action(*args)
    return time.perf_counter() - start


def copy_only(folder: Path) -> None:
    temp = folder / ".yardstick.tmp"
    layout.copy_durably(folder / "warehouse.writer.duckdb", temp)
    temp.unlink()


def full_read(folder: Path) -> None:
    temp = folder / ".full-read.duckdb"
    layout.copy_durably(folder / "warehouse.writer.duckdb", temp)
    _, problem = integrity._open_and_read(temp, scan_every_block=True)
    temp.unlink()
    if problem is not None:
        raise SystemExit(f"the full read failed: {problem}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 days x 2,000 offers, once")
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--offers-per-day", type=int, default=50_000)
    parser.add_argument("--repeat", type=int, default=4)
    parser.add_argument("--template", type=Path, help="a folder seed_history filled (else built)")
    parser.add_argument("--before", default=BEFORE, help="the commit whose publish is 'before'")
    parser.add_argument("--dir", type=Path, help="work folder (default: a temporary one)")
    args = parser.parse_args(argv)
    if args.quick:
        args.days, args.offers_per_day, args.repeat = 3, 2000, 1
    root = Path(tempfile.mkdtemp(prefix="bench-publish-", dir=args.dir))
    try:
        old = old_publishing(args.before, root)
        template = args.template
        if template is None:
            template = root / "template"
            template.mkdir()
            start = time.perf_counter()
            offers = bench_e2e.seed_history(template, args.days, args.offers_per_day)
            print(f"built {offers:,} offers in {time.perf_counter() - start:.0f} s")
        size = (template / "warehouse.duckdb").stat().st_size
        print(f"warehouse {size / 1e6:,.0f} MB published, {args.days} days x {args.offers_per_day:,} offers")
        results: dict[str, list[float]] = {"yardstick": [], "now": [], "before": [], "full read": []}
        for index in range(args.repeat):
            mine = clone(template, root, f"now{index}")
            generation = add_day(mine, args.days, args.offers_per_day)
            theirs = clone(mine, root, f"before{index}")
            warehouse = mine / "warehouse.duckdb"
            recycled = (theirs / "warehouse.duckdb.prev").stat().st_ino
            steps: list[tuple[str, Callable[..., object], tuple[object, ...]]] = [
                ("yardstick", copy_only, (mine,)),
                ("full read", full_read, (mine,)),
                ("before", old.publish, (theirs / "warehouse.duckdb", generation)),
                ("now", publishing.publish, (warehouse, generation)),
            ]
            for name, action, arguments in steps[index % 4 :] + steps[: index % 4]:  # no fixed order
                results[name].append(timed(action, *arguments))
            if (theirs / "warehouse.duckdb").stat().st_ino != recycled:
                raise SystemExit("'before' copied the file instead of publishing in place")
            for folder in (mine, theirs):
                assert integrity.check_file(folder / "warehouse.duckdb").generation == generation
            print(
                f"repeat {index + 1}: "
                + ", ".join(f"{name} {times[-1]:.2f} s" for name, times in results.items())
                + f"; load {os.getloadavg()[0]:.1f}"
            )
            shutil.rmtree(mine)
            shutil.rmtree(theirs)
        yardstick = statistics.median(results["yardstick"])
        print(f"\n{'publish':<10} {'median s':>9} {'x yardstick':>12}")
        for name, times in results.items():
            median = statistics.median(times)
            print(f"{name:<10} {median:>9.2f} {median / yardstick:>12.2f}")
        if args.quick:
            print("not judged in --quick")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

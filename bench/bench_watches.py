"""Bench: 20,000 watches evaluated for one digest, in time and memory.

    python bench/bench_watches.py [--watches 20000] [--offers 10000] [--sample 20] [--quick]

Before, `digest.watches.evaluate_watches` ran one query per watch, each over the day's offers:
1,000 watches took 56 s and 20,000 (a 1 MB file) did not finish in 600 s. Now each kind of watch
(price, stock, job) is one query for all of them: the day's cheapest offer and free GPUs per card
and platform are found once, and each watch takes its platforms' best.

The offers are SYNTHETIC (bench_plans.synthetic_offers through bench_jobs.build_warehouse: seeded
random over the real GPU catalog, 20 platforms, one day's crawls), read on that day and the day
before (no crawl: nothing to read). The watches are SYNTHETIC too, cycling price (USD and CNY),
stock and job watches over the cards on offer, one in five limited to two platforms. Measured in
this process, on the published warehouse:
  ours       evaluate_watches of all the watches, wall time, and the process's peak RSS after it
  yardstick  evaluate_watches of one watch of each kind: what reading the day's offers costs
  per watch  the path before: one evaluate_watches call per watch for --sample watches, scaled to
             all; each sample watch's result must equal its result in the batch, or the bench stops
Exits 1 when ours misses TARGET_S or TARGET_RSS_MB (not judged with --quick).
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path

import bench_jobs

from config.watches_file import JobWatch, PriceWatch, StockWatch, Watch
from digest.watches import evaluate_watches
from warehouse.engine import connect

TARGET_S = 60.0  # the bar for 20,000 watches
TARGET_RSS_MB = 2048.0


def synthetic_watches(count: int, cards: list[str], platforms: list[str]) -> tuple[Watch, ...]:
    watches: list[Watch] = []
    for index in range(count):
        card = cards[index % len(cards)]
        chosen = tuple(platforms[index % len(platforms) :][:2]) if index % 5 == 0 else ()
        kind = index % 4
        if kind == 0:
            watches.append(PriceWatch(index + 1, card, card, 1.0 + index % 7, "USD", chosen))
        elif kind == 1:
            watches.append(PriceWatch(index + 1, card, card, 8.0 + index % 30, "CNY", chosen))
        elif kind == 2:
            watches.append(StockWatch(index + 1, card, card, 1 + index % 16, chosen))
        else:
            watches.append(JobWatch(index + 1, f"job-{index % 50}", 1_000.0 * (1 + index % 9)))
    return tuple(watches)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--watches", type=int, default=20_000)
    parser.add_argument("--offers", type=int, default=10_000)
    parser.add_argument("--sample", type=int, default=20, help="watches evaluated one at a time")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="200 watches, 1,000 offers, a sample of 4")
    args = parser.parse_args()
    count, offers, sample = (200, 1_000, 4) if args.quick else (args.watches, args.offers, args.sample)

    with tempfile.TemporaryDirectory(prefix="bench-watches-") as folder:
        path = Path(folder) / "warehouse.duckdb"
        bench_jobs.build_warehouse(path, offers, args.seed)
        with connect.reader(path) as con:
            ((day,),) = con.execute("SELECT max(CAST(loaded_at AS DATE)) FROM crawl_runs").fetchall()
            cards = [
                row[0] for row in con.execute("SELECT DISTINCT gpu_model FROM offers ORDER BY 1").fetchall()
            ]
            names = [
                row[0] for row in con.execute("SELECT DISTINCT platform FROM offers ORDER BY 1").fetchall()
            ]
            watches = synthetic_watches(count, cards, names)
            before: date = day - timedelta(days=1)
            evaluate_watches(con, watches[:1], day, before)  # warm: the first query reads the files
            started = time.perf_counter()
            one_each = evaluate_watches(con, watches[:4], day, before)
            yardstick_s = time.perf_counter() - started
            started = time.perf_counter()
            batch = evaluate_watches(con, watches, day, before)
            ours_s = time.perf_counter() - started
            peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            picked = list(range(0, count, max(1, count // sample)))[:sample]
            started = time.perf_counter()
            alone = [evaluate_watches(con, (watches[i],), day, before)[0] for i in picked]
            per_watch_s = (time.perf_counter() - started) / len(picked) * count
    for index, result in zip(picked, alone, strict=True):
        if result != batch[index]:
            raise SystemExit(f"watch {index}: evaluated alone and in the batch, the results differ")
    read = sum(result.now is not None for result in batch)
    assert len(one_each) == 4

    print(f"{count:,} watches over {offers:,} offers of one day; {read:,} read a value on it")
    print(f"{'':48}{'seconds':>9}")
    print(f"{'ours: evaluate_watches, all the watches':48}{ours_s:>9.2f}")
    print(f"{'yardstick: one watch of each kind':48}{yardstick_s:>9.2f}")
    print(f"{f'per watch: one call x {len(picked)}, scaled to {count:,}':48}{per_watch_s:>9.2f}")
    print(
        f"ours over the yardstick: {ours_s / yardstick_s:.1f}x;"
        f" per watch over ours: {per_watch_s / ours_s:.1f}x"
    )
    print(f"peak RSS of the process: {peak_mb:,.0f} MB")
    print(f"{len(picked)} sample watches: the same result alone and in the batch")
    if args.quick:
        print("not judged in --quick")
        return 0
    ok = ours_s < TARGET_S and peak_mb < TARGET_RSS_MB
    print(
        f"target: {count:,} watches under {TARGET_S:g} s and {TARGET_RSS_MB:,.0f} MB:"
        f" {'ok' if ok else 'MISSED'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

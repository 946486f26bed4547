"""Bench: the daily run's job plans for 1,000 jobs, the time they hold the warehouse writer.

    python bench/bench_many_jobs.py [--jobs 1000] [--offers 10000] [--sample 40] [--quick]

Before, `job_plans` planned one job at a time inside the writer session, one query over the
day's offers per job (~0.6 s each at 20,000 offers): 1,000 jobs held the writer, and with it the
day's run, for ten minutes. Now `warehouse.job_plans.plan_jobs` plans every job in one query
(the offers' shapes made once, jobs sized alike sized once) and the day's rows go in as one frame.

The offers are SYNTHETIC (bench_plans.synthetic_offers through bench_jobs.build_warehouse: seeded
random over the real GPU catalog, 20 platforms), one day's crawls. The jobs are SYNTHETIC too:
five models, three methods, 1-7B tokens, deadlines of 3-6 days or none, one in eleven limited to
two platforms, one in thirteen to 8 GPUs. Timed on a copy of the warehouse each:
  ours       a writer session as the `job_plans` asset runs it: compute_job_plans for the day,
             then the day's job plan changes (plans.compute_plan_changes_for_days, subject job),
             then the publish; the whole time the writer is held
  yardstick  the same session with one job: what any job plans step costs (writer, publish)
  per job    plan_job for --sample of the jobs, one at a time (the path before), scaled to all
             the jobs; each sample job's answer must equal its answer in the batch, or the bench stops
Exits 1 when ours misses TARGET_S (not judged with --quick).
"""

from __future__ import annotations

import argparse
import resource
import shutil
import sys
import tempfile
import time
from datetime import date, datetime
from pathlib import Path

import bench_jobs
import duckdb

from sizing.jobs import Job
from warehouse import daily_plans, job_plans
from warehouse.engine import connect

TARGET_S = 60.0  # "1,000 jobs must not make the day's run take minutes"; 20,000 too (the jobs file's bound)
TARGET_RSS_MB = 2048.0  # planned in chunks (warehouse.job_plans.JOB_CHUNK): flat memory
START = datetime(2026, 12, 1)


def synthetic_jobs(count: int) -> list[Job]:
    models = ("7B", "13B", "30B", "70B", "qwen2.5-14b")
    methods = ("lora", "qlora", "full")
    return [
        Job(
            f"job-{index}",
            models[index % 5],
            methods[(index // 5) % 3],
            tokens=1e9 * (1 + index % 7),
            within_days=(3.0 + index % 4) if index % 3 else None,
            platforms=("platform03", "platform05") if index % 11 == 0 else (),
            max_gpus=8 if index % 13 == 0 else None,
        )
        for index in range(count)
    ]


def crawl_day(con: duckdb.DuckDBPyConnection) -> date:
    """The day the synthetic crawls were loaded on (the bench's one day of offers)."""
    ((day,),) = con.execute("SELECT max(CAST(loaded_at AS DATE)) FROM crawl_runs").fetchall()
    return day


def writer_session(path: Path, jobs: list[Job]) -> tuple[float, int]:
    """Seconds the writer is held for a job plans step of `jobs`, and the rows it stored."""
    started = time.perf_counter()
    with connect.writer(path) as con:
        day = crawl_day(con)
        rows = job_plans.compute_job_plans(con, day, jobs, START)
        daily_plans.compute_plan_changes_for_days(con, [day], 10.0, subject="job")
    return time.perf_counter() - started, rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=1_000)
    parser.add_argument("--offers", type=int, default=10_000)
    parser.add_argument("--sample", type=int, default=40, help="jobs planned one at a time (the yardstick)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--quick", action="store_true", help="30 jobs, 1,000 offers, a sample of 3; no verdict"
    )
    args = parser.parse_args()
    count, offers, sample = (30, 1_000, 3) if args.quick else (args.jobs, args.offers, args.sample)
    jobs = synthetic_jobs(count)

    with tempfile.TemporaryDirectory(prefix="bench-many-jobs-") as folder:
        seed = Path(folder) / "seed" / "warehouse.duckdb"
        bench_jobs.build_warehouse(seed, offers, args.seed)

        def fresh(name: str) -> Path:
            copy = Path(folder) / name
            shutil.copytree(seed.parent, copy)
            return copy / "warehouse.duckdb"

        one_s, _ = writer_session(fresh("one"), jobs[:1])
        ours_s, rows = writer_session(fresh("all"), jobs)
        peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        with connect.reader(seed) as con:
            day = crawl_day(con)
            batch = job_plans.plan_jobs(con, jobs, start_at=START, plan_date=day)
            picked = jobs[:: max(1, count // sample)][:sample]
            started = time.perf_counter()
            alone = [job_plans.plan_job(con, job, start_at=START, plan_date=day) for job in picked]
            per_job_s = (time.perf_counter() - started) / len(picked) * count
    by_name = {answer.job.name: answer for answer in batch}
    for answer in alone:
        together = by_name[answer.job.name]
        if (answer.plans, answer.fastest, answer.reason) != (
            together.plans,
            together.fastest,
            together.reason,
        ):
            raise SystemExit(f"{answer.job.name}: planned alone and in the batch, the answers differ")

    print(f"{count:,} jobs over {offers:,} offers of one day; {rows:,} job plan rows stored")
    print(f"{'':44}{'seconds':>9}")
    print(f"{'ours: the job plans writer session':44}{ours_s:>9.2f}")
    print(f"{'yardstick: the same session, one job':44}{one_s:>9.2f}")
    print(f"{f'per job: plan_job x {len(picked)}, scaled to {count:,}':44}{per_job_s:>9.2f}")
    print(f"ours over the yardstick: {ours_s / one_s:.1f}x; per job over ours: {per_job_s / ours_s:.1f}x")
    print(f"{len(picked)} sample jobs: the same answer alone and in the batch")
    print(f"peak RSS of the process after the session: {peak_mb:,.0f} MB (target {TARGET_RSS_MB:,.0f} MB)")
    if args.quick:
        print("not judged in --quick")
        return 0
    ok = ours_s < TARGET_S and peak_mb < TARGET_RSS_MB
    print(f"target: {count:,} jobs hold the writer under {TARGET_S:g} s: {'ok' if ok else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

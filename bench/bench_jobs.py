"""Bench: an ad-hoc job plan (`gpuplan plans --tokens`) over 20,000 latest offers, as a whole process.

    python bench/bench_jobs.py [--offers 20000] [--repeat 5] [--quick]

The offers are SYNTHETIC (bench_plans.synthetic_offers: seeded random over the real GPU catalog,
20 platforms, per-GPU and per-instance prices, stock known or not, hourly, daily and monthly),
loaded as each platform's latest crawl into a published warehouse file in a temporary folder.
Timed, median of --repeat:
  process   the real command in a child process, `python -m gpuplan plans --json ...` for a 13B LoRA
            job of 2B tokens due in 3 days: interpreter, imports, the reader, sizing, the plan SQL
  yardstick `gpuplan sql "SELECT 1"` in a child process: the cheapest command that opens the
            warehouse (interpreter, the CLI's imports, typer's parsing, the reader), what every
            command pays before its own work
  startup   a child doing nothing but `import gpuplan.cli`
  in SQL    `warehouse.job_plans.plan_job` inside this process (the product's planning alone)
  naive     the yardstick: the same rules as a loop over the latest offers in Python (pandas read,
            one sizing call per (GPU, count), billing per offer), in this process
Both answers must give the same best plan per GPU model (total and train time), or the bench stops.
Wall and CPU seconds are given: the machine is shared, and CPU time does not count the neighbours.
Exits 1 when the process misses TARGET_S (not judged with --quick).
"""

from __future__ import annotations

import argparse
import math
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import bench_plans
import pandas as pd

from sizing.catalog import load_gpus
from sizing.jobs import Job, job_requirements
from warehouse import job_plans
from warehouse.daily_plans import MAX_PLAN_GPU_COUNT
from warehouse.engine import connect

TARGET_S = 1.0  # the bar: the whole process
ARGS = ["--model", "13B", "--method", "lora", "--tokens", "2B", "--within", "3d"]
JOB = Job("bench", "13B", "lora", tokens=2e9, within_days=3.0)
HOURS = {"hour": 1, "day": 24, "week": 168, "month": 730}


def build_warehouse(path: Path, offers: int, seed: int) -> None:
    """A published warehouse whose only crawls are one per platform holding `offers` offers."""
    frame = bench_plans.synthetic_offers(offers, seed)
    runs = (
        frame.groupby(["crawl_id", "platform"], as_index=False)
        .size()
        .rename(columns={"size": "offers_loaded"})
        .assign(status="ok", items_yielded=lambda f: f["offers_loaded"], loaded_at=datetime(2026, 11, 30, 6))
    )
    with connect.writer(path) as con:
        con.register("bench_runs", runs)
        con.register("bench_offers", frame)
        con.execute("INSERT INTO crawl_runs BY NAME SELECT * FROM bench_runs")
        con.execute("INSERT INTO offers BY NAME SELECT * FROM bench_offers")


def naive_plans(offers: pd.DataFrame, job: Job, start: datetime) -> dict[str, tuple[float, float]]:
    """Best plan per GPU model, the rules of plan_shapes / job_plan_options one offer at a time.

    Returns gpu_model -> (total_usd, train_hours) of the cheapest plan meeting the deadline.
    (No price floor: the synthetic prices are never far below their market, as the check shows.)
    """
    per_node = {gpu.gpu_model: gpu.gpus_per_node for gpu in load_gpus()}
    sized: dict[tuple[str, int], float | None] = {}
    best: dict[str, tuple[float, float, bool, str, str, int]] = {}
    for offer in offers.to_dict("records"):
        node = per_node.get(offer["gpu_model"])
        if node is None or offer["pricing_type"] == "spot":
            continue
        unit, stock = offer["gpu_count"], offer["available_gpus"]
        stock = None if pd.isna(stock) else int(stock)
        for units in range(1, MAX_PLAN_GPU_COUNT // unit + 1):
            count = units * unit
            if (stock is not None and count > stock) or (
                units > 1 and not (offer["price_per"] == "gpu" and count <= node)
            ):
                break
            if (offer["gpu_model"], count) not in sized:
                (row,) = job_requirements(job, (count,), [offer["gpu_model"]])
                sized[(offer["gpu_model"], count)] = row.tokens_per_second if row.fits else None
            speed = sized[(offer["gpu_model"], count)]
            if not speed:
                continue
            hours = job.train_tokens / speed / 3600
            if job.within_days is not None and hours > job.within_days * 24:
                continue
            period = HOURS[offer["billing_period"]]
            billed = max(offer["min_term_periods"], math.ceil(hours / period)) * period
            total = offer["price_usd_per_gpu_hour"] * count * billed
            key = (total, hours, stock is None, offer["platform"], offer["offer_id"], count)
            if offer["gpu_model"] not in best or key < best[offer["gpu_model"]]:
                best[offer["gpu_model"]] = key
    return {gpu: (key[0], key[1]) for gpu, key in best.items()}


def timed(function: Callable[[], object], repeat: int) -> tuple[float, float, object]:
    """Median wall and CPU seconds (this process's threads) over `repeat` runs, and the last result."""
    wall, cpu, result = [], [], None
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        result = function()
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return statistics.median(wall), statistics.median(cpu), result


def timed_process(command: list[str], env: dict[str, str], repeat: int) -> tuple[float, float, str]:
    """Median wall and CPU (user + system of the child) seconds of `command`, and its last stdout."""
    wall, cpu, out = [], [], ""
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
        wall.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        if done.returncode != 0:
            raise SystemExit(f"{' '.join(command)} failed: {done.stderr.strip()}")
        out = done.stdout
    return statistics.median(wall), statistics.median(cpu), out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--offers", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="1,000 offers, one run each; no verdict")
    args = parser.parse_args()
    offers, repeat = (1_000, 1) if args.quick else (args.offers, args.repeat)

    with tempfile.TemporaryDirectory(prefix="bench-jobs-") as folder:
        warehouse = Path(folder) / "warehouse.duckdb"
        build_warehouse(warehouse, offers, args.seed)
        env = {**os.environ, "GPUPLAN_WAREHOUSE": str(warehouse), "GPUPLAN_CRAWL_DIR": folder}
        process = timed_process([sys.executable, "-m", "gpuplan", "plans", "--json", *ARGS], env, repeat)
        floor = timed_process([sys.executable, "-m", "gpuplan", "sql", "SELECT 1"], env, repeat)
        startup = timed_process([sys.executable, "-c", "import gpuplan.cli"], env, repeat)
        start = datetime(2026, 12, 1)
        with connect.reader(warehouse) as con:
            sql = timed(lambda: job_plans.plan_job(con, JOB, start_at=start), repeat)
            latest = con.execute("SELECT * FROM latest_offers").df()
        naive = timed(lambda: naive_plans(latest, JOB, start), repeat)

    answer: job_plans.JobPlans = sql[2]  # type: ignore[assignment]
    loop: dict[str, tuple[float, float]] = naive[2]  # type: ignore[assignment]
    ours = {plan["gpu_model"]: (plan["total_usd"], plan["train_hours"]) for plan in answer.plans}
    if set(ours) != set(loop) or not all(
        math.isclose(a, b, rel_tol=1e-9) for gpu in ours for a, b in zip(ours[gpu], loop[gpu], strict=True)
    ):
        raise SystemExit(f"SQL and loop disagree: {ours} vs {loop}")
    if len(__import__("json").loads(process[2])) != len(ours):
        raise SystemExit("the command's plans differ from plan_job's")

    print(f"offers {offers:,} (latest crawls of 20 platforms); job: 13B LoRA, 2B tokens, within 3 days")
    print(f"{'':36}{'wall s':>9}{'CPU s':>9}")
    rows = [
        ("process: gpuplan plans --json", process),
        ("yardstick: gpuplan sql 'SELECT 1'", floor),
        ("  of which import gpuplan.cli", startup),
        ("in SQL: plan_job (in process)", sql),
        ("naive: Python loop (in process)", naive),
    ]
    for label, (wall, cpu, _) in rows:
        print(f"{label:36}{wall:>9.3f}{cpu:>9.3f}")
    print(f"plans: {len(ours)} GPU models, the same best plan per GPU model in SQL and in the loop")
    ratio = f"{naive[0] / sql[0]:.1f}x wall, {naive[1] / sql[1]:.1f}x CPU"
    print(f"planning, naive loop over SQL: {ratio}")
    print(f"process over the yardstick: {process[0] / floor[0]:.2f}x wall, {process[1] / floor[1]:.2f}x CPU")
    if args.quick:
        print("not judged in --quick")
        return 0
    verdict = "ok" if process[0] < TARGET_S else "MISSED"
    print(f"target: the whole process under {TARGET_S:g} s wall: {verdict}")
    return 0 if process[0] < TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())

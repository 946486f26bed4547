"""Bench: a job plan across nodes stays interactive, as a whole process.

    python bench/bench_clusters.py [--repeat 5] [--warehouse PATH]

On the offline demo (`gpuplan refresh --offline` into a temporary folder: the real spiders replaying
their bundled snapshots; or --warehouse, an existing one), timed in child processes, median of
--repeat, interleaved so both see the same load:
  clusters  `gpuplan plans --json --model 175B --method full --tokens 10B`: no machine holds it, so
            every cluster the table allows is sized at its fabric's speed (the work this adds)
  yardstick the same command for 7B LoRA: one machine holds it, the planning as it was before
The clusters' answer must hold plans on at least three platforms that sell a fabric, or the bench
stops. Exits 1 when the ratio is past RATIO_TARGET. Wall and CPU seconds (the child's user +
system: the machine is shared, CPU time does not count the neighbours).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

from bench_jobs import timed_process

RATIO_TARGET = 3.0
CLUSTERS = ["--model", "175B", "--method", "full", "--tokens", "10B"]
YARDSTICK = ["--model", "7B", "--method", "lora", "--tokens", "10B"]


def refresh(folder: Path) -> Path:
    warehouse = folder / "warehouse.duckdb"
    env = {**os.environ, "GPUPLAN_WAREHOUSE": str(warehouse), "GPUPLAN_CRAWL_DIR": str(folder / "crawls")}
    timed_process([sys.executable, "-m", "gpuplan", "refresh", "--offline"], env, 1)
    return warehouse


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--warehouse", type=Path, help="an existing warehouse (default: refresh offline)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        warehouse = args.warehouse or refresh(Path(folder))
        env = {**os.environ, "GPUPLAN_WAREHOUSE": str(warehouse)}
        command = [sys.executable, "-m", "gpuplan", "plans", "--json"]
        clusters, yardstick = [], []
        out = ""
        for _ in range(args.repeat):  # interleaved: a neighbour's burst hits both alike
            wall, cpu, out = timed_process([*command, *CLUSTERS], env, 1)
            clusters.append((wall, cpu))
            yardstick.append(timed_process([*command, *YARDSTICK], env, 1)[:2])
    plans = json.loads(out)
    platforms = sorted({plan["platform"] for plan in plans if plan["fabric"]})
    if len(platforms) < 3:
        raise SystemExit(f"the 175B plans join nodes on {platforms}: fewer than three platforms")
    wall, cpu = (sorted(values)[len(values) // 2] for values in zip(*clusters, strict=True))
    base_wall, base_cpu = (sorted(values)[len(values) // 2] for values in zip(*yardstick, strict=True))
    ratio = wall / base_wall
    print(
        f"clusters (175B full, 10B tokens): {wall:.2f} s wall, {cpu:.2f} s CPU; "
        f"plans on {', '.join(platforms)}"
    )
    print(f"yardstick (7B LoRA, 10B tokens):  {base_wall:.2f} s wall, {base_cpu:.2f} s CPU")
    print(f"ratio: {ratio:.2f}x wall, {cpu / base_cpu:.2f}x CPU (target <= {RATIO_TARGET:g}x)")
    return 0 if ratio <= RATIO_TARGET else 1


if __name__ == "__main__":
    raise SystemExit(main())

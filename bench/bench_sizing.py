"""Bench: the sizing model's plans for every catalog GPU, one model and method per call.

    /work/venv/bin/python bench/bench_sizing.py [--repeat 50]

Times `sizing.planner.requirements(model, method)` (every catalog GPU x the default GPU
counts 1-64, the smallest fitting ZeRO stage and the throughput of each row) for each of
the pipeline's default models and methods plus a MoE and a 405B model. Each call starts
from the model name, as the pipeline does: only the catalog and preset files are read
once per process. The target is under 10 ms per (model, method); the script exits 1 if
the slowest median misses it.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from sizing.catalog import load_gpus
from sizing.planner import DEFAULT_GPU_COUNTS, requirements

MODELS = ("7B", "13B", "30B", "70B", "mixtral-8x7b", "llama-3.1-405b")
METHODS = ("full", "lora", "qlora")
TARGET_MS = 10.0


def median_ms(model: str, method: str, repeat: int) -> float:
    timings = []
    for _ in range(repeat):
        started = time.perf_counter()
        requirements(model, method)
        timings.append((time.perf_counter() - started) * 1000)
    return statistics.median(timings)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--repeat", type=int, default=50, help="calls per (model, method); the median is reported"
    )
    args = parser.parse_args()

    rows = len(load_gpus()) * len(DEFAULT_GPU_COUNTS)  # also reads the catalog once
    requirements("7B", "lora")  # and the presets
    print(f"{len(load_gpus())} catalog GPUs x {len(DEFAULT_GPU_COUNTS)} counts = {rows} rows per call")
    print(f"{'model':>16} {'method':>6} {'median ms':>10}")
    slowest = 0.0
    for model in MODELS:
        for method in METHODS:
            ms = median_ms(model, method, args.repeat)
            slowest = max(slowest, ms)
            print(f"{model:>16} {method:>6} {ms:>10.2f}")
    verdict = "ok" if slowest < TARGET_MS else "MISSED"
    print(f"slowest median {slowest:.2f} ms per (model, method); target < {TARGET_MS:.0f} ms: {verdict}")
    return 0 if slowest < TARGET_MS else 1


if __name__ == "__main__":
    sys.exit(main())

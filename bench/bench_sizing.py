"""Bench: the sizing model's plans for every catalog GPU, one model, method and framework per call.

    /work/venv/bin/python bench/bench_sizing.py [--repeat 50] [--quick]

Times `sizing.planner.requirements(model, method, setup=...)` (every catalog GPU x the default
GPU counts 1-64, the smallest fitting ZeRO stage, the TP x PP layout where data parallelism does
not fit, and the throughput of each row) for the pipeline's default models and methods plus a
MoE preset, a 405B model and a Qwen3 MoE config.json, under the default framework, Megatron
(which lays out TP/PP wherever ZeRO-1 does not fit) and torchtune. Each call starts from the
model name, as the pipeline does: only the catalog, preset and config files are read once per
process. The yardstick, measured in the same run, is the naive planner that prepares the model
again for every (GPU, count) row, so nothing GPU-independent is shared between rows. The target
is under 10 ms per (model, method, framework); the script exits 1 if the slowest median misses it.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from config import model_files
from sizing.catalog import load_gpus
from sizing.planner import DEFAULT_GPU_COUNTS, prepare, requirements
from sizing.setup import TrainingSetup
from sizing.shapes import ModelSpec

CONFIG_PATH = (
    Path(__file__).resolve().parents[1] / "tests" / "sizing" / "fixtures" / "configs" / "qwen3-30b-a3b.json"
)
# A config.json is read once where it is named (config.model_files), and its shape passed on.
CONFIG = model_files.read_model(str(CONFIG_PATH))
MODELS: tuple[str | ModelSpec, ...] = ("7B", "13B", "30B", "70B", "mixtral-8x7b", "llama-3.1-405b", CONFIG)
METHODS = ("full", "lora", "qlora")
FRAMEWORKS = ("llamafactory", "megatron", "torchtune")
TARGET_MS = 10.0


def median_ms(model: str | ModelSpec, method: str, setup: TrainingSetup, repeat: int) -> float:
    timings = []
    for _ in range(repeat):
        started = time.perf_counter()
        requirements(model, method, setup=setup)
        timings.append((time.perf_counter() - started) * 1000)
    return statistics.median(timings)


def naive_ms(model: str, method: str, setup: TrainingSetup) -> float:
    """Every row from a fresh prepare: the yardstick."""
    gpus = load_gpus()
    started = time.perf_counter()
    for gpu in gpus:
        for count in DEFAULT_GPU_COUNTS:
            prepare(model, method, setup).requirement(gpu, count)
    return (time.perf_counter() - started) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=50, help="calls per case; the median is reported")
    parser.add_argument("--quick", action="store_true", help="one model, 3 calls, the target not judged")
    args = parser.parse_args()
    models, repeat = (MODELS[:1], 3) if args.quick else (MODELS, args.repeat)

    rows = len(load_gpus()) * len(DEFAULT_GPU_COUNTS)  # also reads the catalog once
    requirements("7B", "lora")  # and the presets
    print(f"{len(load_gpus())} catalog GPUs x {len(DEFAULT_GPU_COUNTS)} counts = {rows} rows per call")
    print(f"{'model':>16} {'method':>6} {'framework':>12} {'median ms':>10}")
    slowest = 0.0
    for model in models:
        name = model if isinstance(model, str) else CONFIG_PATH.name
        for framework in FRAMEWORKS:
            setup = TrainingSetup(framework=framework)
            for method in METHODS:
                if framework == "megatron" and method == "qlora":
                    continue  # Megatron has no QLoRA
                ms = median_ms(model, method, setup, repeat)
                slowest = max(slowest, ms)
                print(f"{name:>16} {method:>6} {framework:>12} {ms:>10.2f}")
    ours = median_ms("70B", "full", TrainingSetup(), repeat)
    naive = naive_ms("70B", "full", TrainingSetup())
    print(
        f"yardstick, 70B full: shared work {ours:.2f} ms, "
        f"naive per-row prepare {naive:.2f} ms ({naive / ours:.0f}x)"
    )
    if args.quick:
        print(f"slowest median {slowest:.2f} ms; target not judged in --quick")
        return 0
    verdict = "ok" if slowest < TARGET_MS else "MISSED"
    print(
        f"slowest median {slowest:.2f} ms per (model, method, framework); "
        f"target < {TARGET_MS:.0f} ms: {verdict}"
    )
    return 0 if slowest < TARGET_MS else 1


if __name__ == "__main__":
    sys.exit(main())

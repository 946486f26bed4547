"""The planner: for a model and method, what each GPU type needs and delivers.

`requirements()` is the bulk entry point the pipeline turns into a DataFrame (one row per
catalog GPU and GPU count); `plan()` keeps the smallest count that fits per GPU type;
`estimate()` sizes one configuration for the CLI. Work that does not depend on the GPU
(model states, activations, FLOPs) is done once per call, so a whole catalog is cheap.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from sizing import memory, methods, throughput
from sizing.catalog import GpuSpec, find_gpu, load_gpus
from sizing.memory import Breakdown
from sizing.models import ModelSpec, resolve
from sizing.setup import TrainingSetup, check_method

DEFAULT_GPU_COUNTS = (1, 2, 4, 8, 16, 32, 64)
SECONDS_PER_DAY = 86_400


@dataclass(frozen=True)
class Requirement:
    """One (GPU model, GPU count) for a model and method.

    `zero_stage` is the smallest ZeRO stage that fits at this count (the stage with the
    least memory when none does; 0 on one GPU without offload). Memory in GB of 1e9 bytes;
    `tokens_per_second` and `mfu` are for all `gpu_count` GPUs together.
    """

    model: str
    model_preset: str
    params: int
    method: str
    gpu_model: str
    gpu_count: int
    fits: bool
    zero_stage: int
    per_gpu_memory_gb: float
    usable_memory_gb: float
    tokens_per_second: float
    mfu: float
    multi_node: bool
    nodes: int
    offload: str

    @property
    def tokens_per_day(self) -> float:
        return self.tokens_per_second * SECONDS_PER_DAY


@dataclass(frozen=True)
class Sizing:
    """A model and method under one setup, with the GPU-independent work done."""

    model: str
    spec: ModelSpec
    method: str
    setup: TrainingSetup

    @cached_property
    def backward_layers(self) -> int:
        return methods.trainable_layers(self.spec, self.method, self.setup)

    @cached_property
    def states(self) -> methods.StateBytes:
        return methods.state_bytes(self.spec, self.method, self.setup)

    @cached_property
    def activations(self) -> memory.Activations:
        s = self.setup
        return memory.activations(
            self.spec, s.seq_len, s.micro_batch, s.checkpointing, s.flash_attention, self.backward_layers
        )

    @cached_property
    def work(self) -> throughput.Work:
        adapters = methods.lora_params(self.spec, self.setup) if self.method in ("lora", "qlora") else 0
        return throughput.work(
            self.spec, self.method, self.setup, self.states, self.backward_layers, adapters
        )

    @cached_property
    def replica(self) -> Breakdown:
        """One unsharded replica on one GPU (stage 0, no offload)."""
        return memory.breakdown(self.states, self.activations, accounting=self.setup.state_accounting)

    def per_gpu(self, stage: int, gpu_count: int) -> Breakdown:
        return memory.breakdown(
            self.states, self.activations, stage, gpu_count, self.setup.offload, self.setup.state_accounting
        )

    def stages(self, gpu_count: int) -> tuple[int, ...]:
        """Stages to try, smallest first: the fixed one, or every stage the offload allows
        (on one GPU sharding saves nothing, so only the smallest)."""
        if self.setup.zero_stage is not None:
            return (self.setup.zero_stage,)
        if gpu_count == 1:
            return (self.setup.min_zero_stage,)
        return tuple(range(self.setup.min_zero_stage, 4))

    def cpu_memory_gb(self) -> float:
        return memory.offloaded_cpu_gb(self.states, self.setup.offload, self.setup.state_accounting)

    def requirement(self, gpu: GpuSpec, gpu_count: int, totals: Sequence[tuple[int, float]]) -> Requirement:
        """The row for `gpu` at `gpu_count`, given (stage, per-GPU GB) smallest stage first."""
        usable = gpu.usable_memory_gb
        fits = False
        stage, gb = totals[0]
        for candidate, candidate_gb in totals:  # a plain loop: this runs for every row
            if candidate_gb <= usable:
                stage, gb, fits = candidate, candidate_gb, True
                break
            if candidate_gb < gb:
                stage, gb = candidate, candidate_gb
        tokens, mfu = throughput.tokens_per_second(self.work, gpu, gpu_count, stage, self.setup)
        nodes = -(-gpu_count // gpu.gpus_per_node)
        return Requirement(
            model=self.model,
            model_preset=self.spec.preset,
            params=self.spec.params,
            method=self.method,
            gpu_model=gpu.gpu_model,
            gpu_count=gpu_count,
            fits=fits,
            zero_stage=stage,
            per_gpu_memory_gb=gb,
            usable_memory_gb=usable,
            tokens_per_second=tokens,
            mfu=mfu,
            multi_node=nodes > 1,
            nodes=nodes,
            offload=self.setup.offload,
        )

    def totals(self, gpu_count: int) -> list[tuple[int, float]]:
        return [(stage, self.per_gpu(stage, gpu_count).total) for stage in self.stages(gpu_count)]


def prepare(model: str, method: str, **options: object) -> Sizing:
    """Resolve the model, check the method and options; raises ValueError on bad input."""
    return Sizing(model, resolve(model), check_method(method), TrainingSetup.from_options(options))


def _gpu_specs(gpus: Sequence[str] | None) -> list[GpuSpec]:
    return load_gpus() if gpus is None else [find_gpu(name) for name in gpus]


def _check_counts(gpu_counts: Sequence[int]) -> tuple[int, ...]:
    counts = tuple(sorted(set(gpu_counts)))
    if not counts or counts[0] < 1:
        raise ValueError(f"GPU counts must be positive integers, got {list(gpu_counts)}")
    return counts


def requirements(
    model: str,
    method: str,
    gpu_counts: Sequence[int] = DEFAULT_GPU_COUNTS,
    gpus: Sequence[str] | None = None,
    **options: object,
) -> list[Requirement]:
    """One Requirement per (GPU, count): every catalog GPU unless `gpus` names some.
    `options` are TrainingSetup fields (seq_len, micro_batch, checkpointing, offload...)."""
    sizing = prepare(model, method, **options)
    counts = _check_counts(gpu_counts)
    specs = _gpu_specs(gpus)
    totals = {count: sizing.totals(count) for count in counts}
    return [sizing.requirement(gpu, count, totals[count]) for gpu in specs for count in counts]


def plan(
    model: str,
    method: str,
    gpu_counts: Sequence[int] = DEFAULT_GPU_COUNTS,
    gpus: Sequence[str] | None = None,
    **options: object,
) -> list[Requirement]:
    """Per GPU type, the smallest count that fits; where none does, the largest count tried
    (with fits=False), so every GPU type has a row."""
    rows = requirements(model, method, gpu_counts, gpus, **options)
    best: dict[str, Requirement] = {}
    for row in rows:  # counts ascend within a GPU
        current = best.get(row.gpu_model)
        if current is None or not current.fits:
            best[row.gpu_model] = row
    return list(best.values())


@dataclass(frozen=True)
class Estimate:
    """One configuration: `requirement` is None when no GPU was named (memory only)."""

    sizing: Sizing
    gpu_count: int
    zero_stage: int
    per_gpu: Breakdown
    requirement: Requirement | None


def estimate(
    model: str,
    method: str,
    gpu: str | None = None,
    gpu_count: int | None = None,
    gpu_counts: Sequence[int] = DEFAULT_GPU_COUNTS,
    **options: object,
) -> Estimate:
    """Size one configuration. Without `gpu_count`, a named GPU gets the smallest count in
    `gpu_counts` that fits (the largest when none does); without a GPU, one GPU."""
    sizing = prepare(model, method, **options)
    if gpu_count is not None and gpu_count < 1:
        raise ValueError(f"GPU count must be at least 1, got {gpu_count}")
    spec = find_gpu(gpu) if gpu is not None else None
    counts = (gpu_count,) if gpu_count is not None else _check_counts(gpu_counts)
    if spec is None:
        count = counts[0] if gpu_count is not None else 1
        stage = (
            sizing.stages(count)[-1]
            if count > 1 and sizing.setup.zero_stage is None
            else sizing.stages(count)[0]
        )
        return Estimate(sizing, count, stage, sizing.per_gpu(stage, count), None)
    row = None
    for count in counts:
        row = sizing.requirement(spec, count, sizing.totals(count))
        if row.fits:
            break
    assert row is not None  # counts is never empty
    return Estimate(sizing, row.gpu_count, row.zero_stage, sizing.per_gpu(row.zero_stage, row.gpu_count), row)

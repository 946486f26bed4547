"""What the planner answers: a row per (GPU model, GPU count), one sized configuration, and the
options (stage, layout, memory) it chooses among."""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass, field

from sizing.memory import Breakdown
from sizing.parallel import Layout

SECONDS_PER_DAY = 86_400


@dataclass(frozen=True)
class Requirement:
    """One (GPU model, GPU count) for a model and method.

    `zero_stage` is the smallest ZeRO stage that fits at this count (the stage with the least
    memory when none does; 0 on one GPU without offload); `tp` x `pp` the model-parallel layout
    (1 x 1: data parallel only). Memory in GB of 1e9 bytes; `tokens_per_second` and `mfu` are
    for all `gpu_count` GPUs together.
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
    framework: str = "llamafactory"
    tp: int = 1
    pp: int = 1

    @property
    def tokens_per_day(self) -> float:
        return self.tokens_per_second * SECONDS_PER_DAY

    @classmethod
    def row(cls, **fields: object) -> Requirement:
        """The Requirement of these fields, every one given by name: the frozen dataclass's
        __init__ sets each through object.__setattr__, 4-5 us for these 18, a fifth of the time
        of a catalog's rows (bench/bench_sizing.py); this sets them at once. As frozen, equal
        and hashable as one __init__ builds."""
        row = object.__new__(cls)
        row.__dict__.update(fields)
        return row


@dataclass(frozen=True)
class Option:
    """One way to lay out a GPU count: a ZeRO stage, a TP x PP layout, and its memory
    (`total`: per-GPU GB, kept beside the breakdown because the planner compares it per row)."""

    stage: int
    layout: Layout
    per_gpu: Breakdown
    total: float = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "total", self.per_gpu.total)


@dataclass(frozen=True)
class Ladder:
    """Model-parallel options of one GPU count and node size in preference order, with their
    running minimum of memory: the first option that fits `usable` GB is the first place the
    running minimum drops to `usable` or below (a binary search, not a scan per row)."""

    options: tuple[Option, ...]
    negated_running_min: tuple[float, ...]

    @classmethod
    def of(cls, options: tuple[Option, ...]) -> Ladder:
        running, lowest = [], float("inf")
        for option in options:
            lowest = min(lowest, option.total)
            running.append(-lowest)
        return cls(options, tuple(running))

    def first_fitting(self, usable: float) -> Option | None:
        index = bisect_left(self.negated_running_min, -usable)
        return self.options[index] if index < len(self.options) else None

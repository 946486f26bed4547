"""The planner: for a model and method, what each GPU type needs and delivers.

`prepare()` resolves a model once into a `Sizing`; its `requirements()` is the bulk entry point
the pipeline turns into a DataFrame (one row per catalog GPU and GPU count), `plan()` keeps the
smallest count that fits per GPU type and `estimate()` sizes one configuration for the CLI. The
module-level functions of the same names prepare and call them. Work that does not depend on the
GPU (model states, activations, FLOPs, memory per count and layout) is done once per Sizing, and
the choice of stage and layout once per count, usable memory and node size, so a whole catalog is
cheap.

Per GPU count the planner takes the smallest ZeRO/FSDP stage that fits; when data parallelism
alone fits at no stage and the framework runs tensor/pipeline parallelism, the first layout that
fits, least model parallelism first, TP inside a node before PP across nodes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

from sizing import activations, fabric, memory, methods, throughput
from sizing.activations import ActivationPlan, Activations, LayerCosts
from sizing.catalog import GpuSpec, find_gpu, load_gpus
from sizing.memory import Breakdown
from sizing.models import resolve
from sizing.parallel import DATA_PARALLEL, Layout, Shard, candidate_layouts, check_layout, stage_shards
from sizing.results import SECONDS_PER_DAY, Ladder, Option, Requirement
from sizing.setup import TrainingSetup, check_method
from sizing.shapes import ModelSpec

DEFAULT_GPU_COUNTS = (1, 2, 4, 8, 16, 32, 64)
# The most GPUs one plan may count: the largest training clusters announced hold ~100,000 GPUs;
# a larger count is a typo, said in one line with the bound.
MAX_GPUS = 100_000
# The layouts whose options fit one GPU at one count, those options, and their ZeRO stages.
Fitting = tuple[tuple[Layout, ...], tuple[tuple[Option, ...], ...], tuple[tuple[int, ...], ...]]


@dataclass(frozen=True)
class Estimate:
    """One configuration: `requirement` is None when no GPU was named (memory only)."""

    sizing: Sizing
    gpu_count: int
    zero_stage: int
    per_gpu: Breakdown
    requirement: Requirement | None
    layout: Layout = DATA_PARALLEL


@dataclass(frozen=True)
class Sizing:
    """A model and method under one setup, with the GPU-independent work done."""

    model: str
    spec: ModelSpec
    method: str
    setup: TrainingSetup
    _options: dict[tuple[int, Layout], tuple[Option, ...]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    _ladders: dict[tuple[int, int], Ladder] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    _costs: dict[int, LayerCosts] = field(default_factory=dict, init=False, repr=False, compare=False)
    _choices: dict[tuple[int, float, int], tuple[Option | None, bool]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    _shard_parts: dict[Layout, tuple[Shard, ...]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    _fitting: dict[tuple[int, float, int], Fitting] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    _by_layout: dict[tuple[int, int], list[tuple[Layout, tuple[Option, ...]]]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    _candidates: dict[tuple[int, int], list[Layout]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def for_method(self, method: str) -> Sizing:
        """The same model and setup with another method (the shape is not resolved again)."""
        return Sizing(self.model, self.spec, check_method(method, self.setup), self.setup)

    @cached_property
    def backward_layers(self) -> int:
        return methods.trainable_layers(self.spec, self.method, self.setup)

    @cached_property
    def states(self) -> methods.StateBytes:
        return methods.state_bytes(self.spec, self.method, self.setup)

    @cached_property
    def activation_plan(self) -> ActivationPlan:
        s = self.setup
        return ActivationPlan(
            seq_len=s.seq_len,
            micro_batch=s.micro_batch,
            checkpointing=s.checkpointing,
            flash_attention=s.flash_attention,
            loss=s.loss,
            loss_chunks=s.profile.loss_chunks,
            backward_layers=self.backward_layers,
            eager_kernels=not s.uses_fused_kernels,
        )

    @cached_property
    def activations(self) -> Activations:
        return activations.activations(self.spec, self.activation_plan)

    @cached_property
    def work(self) -> throughput.Work:
        adapters = methods.lora_params(self.spec, self.setup) if self.method in ("lora", "qlora") else 0
        return throughput.work(
            self.spec, self.method, self.setup, self.states, self.backward_layers, adapters
        )

    @cached_property
    def clock(self) -> throughput.StepClock:
        return throughput.StepClock(self.work, self.setup)

    @cached_property
    def replica(self) -> Breakdown:
        """One unsharded replica on one GPU (stage 0, no offload)."""
        return self._breakdown(self.states, self.activations, 0, 1, "none")

    def _breakdown(
        self, states: methods.StateBytes, acts: Activations, stage: int, n: int, offload: str
    ) -> Breakdown:
        return memory.peak(states, acts, self.spec, self.setup, stage, n, offload)

    def _layer_costs(self, tp: int) -> LayerCosts:
        costs = self._costs.get(tp)
        if costs is None:
            costs = self._costs[tp] = activations.layer_costs(
                self.spec, self.activation_plan, tp, self.setup.uses_sequence_parallel
            )
        return costs

    def per_gpu(self, stage: int, gpu_count: int, layout: Layout = DATA_PARALLEL) -> Breakdown:
        """Memory on the fullest GPU: with a pipeline, the first stage (most micro-batches in
        flight, the embedding) or the last (the LM head and the loss), whichever holds more."""
        offload = self.setup.offload
        if layout.model_parallel == 1:
            return self._breakdown(self.states, self.activations, stage, gpu_count, offload)
        dp = layout.dp(gpu_count)
        stages = [self._breakdown(states, acts, stage, dp, offload) for states, acts in self._shards(layout)]
        return max(stages, key=lambda breakdown: breakdown.total)

    def _shards(self, layout: Layout) -> tuple[Shard, ...]:
        shards = self._shard_parts.get(layout)
        if shards is None:
            virtual = self.setup.virtual_stages_for(self.spec.layers, layout.pp)
            costs, grad_accum = self._layer_costs(layout.tp), self.setup.grad_accum
            shards = self._shard_parts[layout] = stage_shards(
                self.states, costs, self.activation_plan, self.spec, layout, grad_accum, virtual
            )
        return shards

    def stages(self, gpu_count: int, layout: Layout = DATA_PARALLEL) -> tuple[int, ...]:
        """Stages to try, smallest first: the fixed one, or every stage the framework and the
        offload allow (on one GPU, or one data-parallel replica, only the smallest). With model
        parallelism only 0 and 1 (Megatron's distributed optimizer, DeepSpeed's ZeRO-1 with PP)."""
        if self.setup.zero_stage is not None:
            return (self.setup.zero_stage,)
        allowed = self._allowed_stages
        if layout.model_parallel > 1:
            allowed = tuple(stage for stage in allowed if stage <= 1) or (0,)
        if layout.dp(gpu_count) == 1:
            return allowed[:1]
        return allowed

    @cached_property
    def _allowed_stages(self) -> tuple[int, ...]:
        s = self.setup
        allowed = tuple(stage for stage in s.profile.stages if stage >= s.min_zero_stage)
        if self.method == "qlora" and not s.profile.shards_quantized_base:
            allowed = tuple(stage for stage in allowed if stage < 3) or allowed
        return allowed

    def options(self, gpu_count: int, layout: Layout = DATA_PARALLEL) -> tuple[Option, ...]:
        """Memory of each stage at this count and layout, smallest stage first (cached)."""
        key = (gpu_count, layout)
        options = self._options.get(key)
        if options is None:
            options = self._options[key] = tuple(
                Option(stage, layout, self.per_gpu(stage, gpu_count, layout))
                for stage in self.stages(gpu_count, layout)
            )
        return options

    def totals(self, gpu_count: int) -> list[tuple[int, float]]:
        """(stage, per-GPU GB) of the data-parallel options, smallest stage first."""
        return [(option.stage, option.total) for option in self.options(gpu_count)]

    def _layouts(self, gpus_per_node: int, gpu_count: int) -> list[Layout]:
        s = self.setup
        if s.fixed_layout:
            layout = Layout(s.tp or 1, s.pp or 1)
            try:
                check_layout(layout, self.spec, gpu_count, gpus_per_node)
            except ValueError:
                return []
            return [layout]
        return [DATA_PARALLEL]

    @cached_property
    def _may_split_model(self) -> bool:
        s = self.setup
        return (
            s.profile.model_parallel
            and not s.fixed_layout
            and s.offload == "none"
            and (s.zero_stage is None or s.zero_stage <= 1)  # model parallelism runs ZeRO-1 at most
            and self.method != "qlora"  # bitsandbytes' 4-bit layers are not tensor/pipeline parallel
        )

    def _model_parallel_option(self, gpus_per_node: int, gpu_count: int, usable: float) -> Option | None:
        """The first model-parallel option that fits, or None."""
        if not self._may_split_model or gpu_count == 1:
            return None
        # A layout runs ZeRO-1 at most, so its states are at least ZeRO-3's over all GPUs.
        if self.states.total / gpu_count / memory.GB > usable:
            return None
        key = (gpu_count, gpus_per_node)
        ladder = self._ladders.get(key)
        if ladder is None:
            layouts = self._candidate_layouts(gpu_count, gpus_per_node)
            ladder = self._ladders[key] = Ladder.of(
                tuple(option for layout in layouts for option in self.options(gpu_count, layout))
            )
        return ladder.first_fitting(usable)

    def choose(self, gpu: GpuSpec, gpu_count: int) -> tuple[Option | None, bool]:
        """The option this GPU runs at this count, and whether it fits: the smallest fitting
        stage of data parallelism (or the fixed layout), else the first fitting model-parallel
        layout, else the data-parallel option with the least memory (None: the fixed layout
        cannot run on this GPU). GPUs of the same usable memory and node size choose alike
        (cached)."""
        key = (gpu_count, gpu.usable_memory_gb, gpu.gpus_per_node)
        choice = self._choices.get(key)
        if choice is None:
            choice = self._choices[key] = self._choose(*key)
        return choice

    def _choose(self, gpu_count: int, usable: float, gpus_per_node: int) -> tuple[Option | None, bool]:
        fallback = None
        for layout in self._layouts(gpus_per_node, gpu_count):
            for option in self.options(gpu_count, layout):
                if option.total <= usable:
                    return option, True
                if fallback is None or option.total < fallback.total:
                    fallback = option
        split = self._model_parallel_option(gpus_per_node, gpu_count, usable)
        if split is not None:
            return split, True
        return fallback, False

    def requirement(self, gpu: GpuSpec, gpu_count: int) -> Requirement:
        """The row for `gpu` at `gpu_count`. A fixed layout this GPU cannot run (TP wider than
        its node) gives its memory, fits=False and no throughput."""
        option, fits = self.choose(gpu, gpu_count)
        chosen: Option
        if fits and option is not None and gpu_count > gpu.gpus_per_node:
            clock = self.clock
            fitting = self._fitting_options(gpu_count, gpu.usable_memory_gb, gpu.gpus_per_node)
            layouts, groups, stages = fitting
            chosen, (tokens, mfu) = fabric.fastest_option(
                groups,
                clock.tokens_bounds(gpu, gpu_count, layouts),
                lambda group: clock.stage_rates(gpu, gpu_count, layouts[group], stages[group]),
            )
        elif option is not None:
            chosen = option
            tokens, mfu = self.clock.tokens_per_second(gpu, gpu_count, option.stage, option.layout)
        else:
            fixed = Layout(self.setup.tp or 1, self.setup.pp or 1)
            layout = fixed if fixed.fits_count(gpu_count) else DATA_PARALLEL
            chosen, tokens, mfu = self.options(gpu_count, layout)[0], 0.0, 0.0
        nodes = -(-gpu_count // gpu.gpus_per_node)
        return Requirement.row(
            model=self.model,
            model_preset=self.spec.preset,
            params=self.spec.params,
            method=self.method,
            gpu_model=gpu.gpu_model,
            gpu_count=gpu_count,
            fits=fits,
            zero_stage=chosen.stage,
            per_gpu_memory_gb=chosen.total,
            usable_memory_gb=gpu.usable_memory_gb,
            tokens_per_second=tokens,
            mfu=mfu,
            multi_node=nodes > 1,
            nodes=nodes,
            offload=self.setup.offload,
            framework=self.setup.framework,
            tp=chosen.layout.tp,
            pp=chosen.layout.pp,
        )

    def _fitting_options(self, gpu_count: int, usable: float, gpus_per_node: int) -> Fitting:
        """Every option that fits `usable` GB at this count, by layout in the planner's order (the
        layouts, their options and the options' stages): the data-parallel stages (or the fixed
        layout) and, where the model may be split, each model-parallel layout's stages. GPUs of the
        same usable memory and node size have the same options (cached)."""
        key = (gpu_count, usable, gpus_per_node)
        fitting = self._fitting.get(key)
        if fitting is None:
            layouts, groups, stages = [], [], []
            for layout, options in self._layout_options(gpu_count, gpus_per_node):
                fits = tuple(option for option in options if option.total <= usable)
                if fits:
                    layouts.append(layout)
                    groups.append(fits)
                    stages.append(tuple(option.stage for option in fits))
            fitting = self._fitting[key] = (tuple(layouts), tuple(groups), tuple(stages))
        return fitting

    def _layout_options(self, gpu_count: int, gpus_per_node: int) -> list[tuple[Layout, tuple[Option, ...]]]:
        """Each layout `_fitting_options` may take at this count and node size, with its options."""
        key = (gpu_count, gpus_per_node)
        known = self._by_layout.get(key)
        if known is None:
            layouts = list(self._layouts(gpus_per_node, gpu_count))
            if self._may_split_model and gpu_count > 1:
                layouts += self._candidate_layouts(gpu_count, gpus_per_node)
            known = self._by_layout[key] = [(layout, self.options(gpu_count, layout)) for layout in layouts]
        return known

    def _candidate_layouts(self, gpu_count: int, gpus_per_node: int) -> list[Layout]:
        key = (gpu_count, gpus_per_node)
        layouts = self._candidates.get(key)
        if layouts is None:
            layouts = self._candidates[key] = candidate_layouts(self.spec, gpu_count, gpus_per_node)
        return layouts

    def cpu_memory_gb(self) -> float:
        s = self.setup
        return memory.offloaded_cpu_gb(self.states, s.offload, s.sharded_accounting, s.paged_optimizer)

    def requirements(
        self, gpu_counts: Sequence[int] = DEFAULT_GPU_COUNTS, gpus: Sequence[str] | None = None
    ) -> list[Requirement]:
        """One Requirement per (GPU, count): every catalog GPU unless `gpus` names some. With a
        fixed TP x PP layout, only the counts it divides (ValueError when none is left)."""
        counts = _check_counts(gpu_counts)
        if self.setup.fixed_layout:
            layout = Layout(self.setup.tp or 1, self.setup.pp or 1)
            counts = tuple(count for count in counts if layout.fits_count(count))
            if not counts:
                raise ValueError(f"{layout.describe()} needs a multiple of {layout.model_parallel} GPUs")
            check_layout(layout, self.spec, counts[0])
        return [self.requirement(gpu, count) for gpu in _gpu_specs(gpus) for count in counts]

    def plan(
        self, gpu_counts: Sequence[int] = DEFAULT_GPU_COUNTS, gpus: Sequence[str] | None = None
    ) -> list[Requirement]:
        """Per GPU type, the smallest count that fits; where none does, the largest count
        tried (with fits=False), so every GPU type has a row."""
        best: dict[str, Requirement] = {}
        for row in self.requirements(gpu_counts, gpus):  # counts ascend within a GPU
            current = best.get(row.gpu_model)
            if current is None or not current.fits:
                best[row.gpu_model] = row
        return list(best.values())

    def estimate(
        self,
        gpu: str | None = None,
        gpu_count: int | None = None,
        gpu_counts: Sequence[int] = DEFAULT_GPU_COUNTS,
    ) -> Estimate:
        """Size one configuration. Without `gpu_count`, a named GPU gets the smallest count in
        `gpu_counts` that fits (the largest when none does); without a GPU, one GPU (or the
        fixed layout's GPUs)."""
        if gpu_count is not None and not 1 <= gpu_count <= MAX_GPUS:
            raise ValueError(f"GPU count must be from 1 to {MAX_GPUS:,}, got {gpu_count}")
        spec = find_gpu(gpu) if gpu is not None else None
        counts = (gpu_count,) if gpu_count is not None else _check_counts(gpu_counts)
        if spec is None:
            s = self.setup
            layout = Layout(s.tp or 1, s.pp or 1)
            count = gpu_count if gpu_count is not None else layout.model_parallel
            check_layout(layout, self.spec, count)
            stages = self.stages(count, layout)
            stage = stages[-1] if count > 1 and s.zero_stage is None else stages[0]
            return Estimate(self, count, stage, self.per_gpu(stage, count, layout), None, layout)
        row = None
        for count in counts:
            row = self.requirement(spec, count)
            if row.fits:
                break
        assert row is not None  # counts is never empty
        layout = Layout(row.tp, row.pp)
        per_gpu = self.per_gpu(row.zero_stage, row.gpu_count, layout)
        return Estimate(self, row.gpu_count, row.zero_stage, per_gpu, row, layout)


def prepare(model: str | ModelSpec, method: str, setup: TrainingSetup | None = None) -> Sizing:
    """Resolve the model (a name, or a shape read from a config.json), check the method against
    the setup; raises ValueError on bad input."""
    setup = setup if setup is not None else TrainingSetup()
    name = model if isinstance(model, str) else model.preset
    return Sizing(name, resolve(model), check_method(method, setup), setup)


def _gpu_specs(gpus: Sequence[str] | None) -> list[GpuSpec]:
    return load_gpus() if gpus is None else [find_gpu(name) for name in gpus]


def _check_counts(gpu_counts: Sequence[int]) -> tuple[int, ...]:
    counts = tuple(sorted(set(gpu_counts)))
    if not counts or counts[0] < 1 or counts[-1] > MAX_GPUS:
        raise ValueError(f"GPU counts must be whole numbers from 1 to {MAX_GPUS:,}, got {list(gpu_counts)}")
    return counts


def requirements(
    model: str | ModelSpec,
    method: str,
    gpu_counts: Sequence[int] = DEFAULT_GPU_COUNTS,
    gpus: Sequence[str] | None = None,
    setup: TrainingSetup | None = None,
) -> list[Requirement]:
    """One Requirement per (GPU, count): every catalog GPU unless `gpus` names some. `setup`
    holds the training settings (the default framework's defaults when None)."""
    return prepare(model, method, setup).requirements(gpu_counts, gpus)


def plan(
    model: str | ModelSpec,
    method: str,
    gpu_counts: Sequence[int] = DEFAULT_GPU_COUNTS,
    gpus: Sequence[str] | None = None,
    setup: TrainingSetup | None = None,
) -> list[Requirement]:
    """Per GPU type, the smallest count that fits (see `Sizing.plan`)."""
    return prepare(model, method, setup).plan(gpu_counts, gpus)


def estimate(
    model: str | ModelSpec,
    method: str,
    gpu: str | None = None,
    gpu_count: int | None = None,
    gpu_counts: Sequence[int] = DEFAULT_GPU_COUNTS,
    setup: TrainingSetup | None = None,
) -> Estimate:
    """Size one configuration (see `Sizing.estimate`)."""
    return prepare(model, method, setup).estimate(gpu, gpu_count, gpu_counts)


__all__ = [
    "MAX_GPUS",
    "SECONDS_PER_DAY",
    "Breakdown",
    "Estimate",
    "Requirement",
    "Sizing",
    "estimate",
    "plan",
    "prepare",
    "requirements",
]

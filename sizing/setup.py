"""Training settings: what a fine-tuning user sets, with the defaults they get.

The vocabulary below (methods, optimizers, checkpointing modes...) is the one home of these
names: the CLI derives its choices from it. Settings a framework decides (checkpointing,
optimizer, loss computation, state accounting, stack efficiency) default to "default", which
`TrainingSetup` resolves to the framework profile's value (`sizing/frameworks.py`); anything a
user sets wins. The rest follow the common fine-tuning stack: sequences of 2048 tokens,
micro-batch 1 with gradient accumulation, flash attention, LoRA rank 8 on all linear layers.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from sizing.frameworks import DEFAULT_FRAMEWORK, LOSSES, Framework, framework
from sizing.gpu_names import did_you_mean, nearest_names

METHODS = ("full", "full-bf16", "lora", "qlora", "freeze")
OPTIMIZERS = ("adamw", "adamw-8bit", "sgd")
# offload: full checkpointing with each layer's input kept in host RAM (Unsloth's "unsloth"
# gradient checkpointing, torchtune's enable_activation_offloading).
CHECKPOINTING = ("none", "selective", "full", "offload")
OFFLOAD = ("none", "optimizer", "all")
# How the optimizer step runs on the GPU: torch's foreach AdamW (a moment-sized temporary per
# parameter group) or a fused kernel (torch fused=True, DeepSpeed FusedAdam, Apex/TE): nothing.
OPTIMIZER_STEPS = ("foreach", "fused")
ACCOUNTING = ("zero", "deepspeed", "megatron")
LORA_MODULES = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
DEFAULT = "default"  # "the framework's value" for the settings a profile decides

# Per-GPU bandwidth between nodes: 8 x 400 Gb/s NICs per 8-GPU node is the typical H100
# cluster (sizing.md §4, ml-engineering network notes). Rental clusters are often slower.
INTERNODE_GB_PER_S = 50.0
# The interleaved schedule's chunks keep at least two layers (Megatron-Bridge recipes: Llama 3 70B
# at PP8 VP5 is two layers a chunk, at PP4 VP5 four; the LoRA recipe's one-layer chunks are the
# exception).
MIN_LAYERS_PER_VIRTUAL_STAGE = 2
# Upper bounds of the counts a user gives (`--seq-len 1e20` printed a table of nonsense;
# an absurd number is a typo, said in one line with the bound). Each is far past any real run:
# 10M tokens is the longest context a released model claims (Llama 4 Scout); 65,536 sequences in
# one micro-batch, or micro-batches in one step, or a LoRA rank of 65,536 (wider than any model's
# hidden size) fit no GPU; no model has 65,536 layers to freeze or split into stages.
MAX_SEQ_LEN = 10_000_000
MAX_COUNT = 65_536  # micro_batch, grad_accum, lora_rank, freeze_trainable_layers, tp, pp, virtual stages


@dataclass(frozen=True)
class TrainingSetup:
    """The knobs of one training run. Lengths in tokens; `mfu` is a fraction (0-1).

    `zero_stage` None means "the smallest stage that fits"; `tp`/`pp` None mean "1, unless data
    parallelism alone does not fit and the framework runs tensor/pipeline parallelism" (the
    planner then picks a layout); giving either fixes the layout (the other is 1).
    `sequence_parallel` None means "with TP, when the framework has it" (Megatron-core does).
    `lora_targets` ("all" or module names such as q_proj, v_proj) applies to lora and qlora;
    `freeze_trainable_layers` is how many of the last layers freeze-tuning trains.
    `state_accounting` "zero" counts model states as the ZeRO paper does (16 B/param for
    mixed-precision AdamW); "deepspeed" as DeepSpeed runs them (an fp32 gradient partition
    beside the optimizer, 16-bit gradients whole at stage 1); "megatron" with fp32 main
    gradients (Megatron's distributed optimizer: 6 + 12/d bytes per parameter).
    `paged_optimizer` keeps optimizer states in unified memory paged to the host (bitsandbytes
    paged optimizers), so they count as host memory, not GPU memory. `optimizer_in_backward`
    steps each parameter as its gradient is produced and frees the gradient (torchtune's
    optimizer_in_bwd, which needs grad_accum 1). `optimizer_step` "foreach" or "fused" says how
    AdamW runs on the GPU (the framework's default; see docs/sizing.md for the versions assumed).
    """

    framework: str = DEFAULT_FRAMEWORK
    seq_len: int = 2048  # LLaMA-Factory cutoff_len default (data_args.py)
    micro_batch: int = 1  # per GPU; LLaMA-Factory example configs
    grad_accum: int = 8  # micro-batches per optimizer step; LLaMA-Factory example configs
    checkpointing: str = DEFAULT
    flash_attention: bool = True  # SDPA/flash kernels, the transformers default
    optimizer: str = DEFAULT
    loss: str = DEFAULT
    lora_rank: int = 8  # LLaMA-Factory lora_rank default
    lora_targets: tuple[str, ...] | str = ("all",)  # LLaMA-Factory lora_target default; "q,v" accepted
    freeze_trainable_layers: int = 2  # LLaMA-Factory freeze_trainable_layers default
    offload: str = "none"
    paged_optimizer: bool = False
    optimizer_in_backward: bool = False
    zero_stage: int | None = None
    tp: int | None = None
    pp: int | None = None
    sequence_parallel: bool | None = None
    mfu: float | None = None
    state_accounting: str = DEFAULT
    stack_efficiency: float | None = None
    internode_gb_per_s: float = INTERNODE_GB_PER_S
    fused_kernels: bool | None = None
    virtual_stages: int | None = None
    tp_comm_overlap: bool | None = None
    optimizer_step: str = DEFAULT

    def __post_init__(self) -> None:
        profile = framework(self.framework)
        object.__setattr__(self, "framework", profile.name)
        for name, value, allowed, default in (
            ("checkpointing", self.checkpointing, CHECKPOINTING, profile.checkpointing),
            ("optimizer", self.optimizer, OPTIMIZERS, profile.optimizer),
            ("loss", self.loss, LOSSES, profile.loss),
            ("optimizer_step", self.optimizer_step, OPTIMIZER_STEPS, profile.optimizer_step),
        ):
            if value == DEFAULT:
                object.__setattr__(self, name, default)
            elif value not in allowed:
                raise ValueError(f"{name} must be one of {', '.join(allowed)}, got {value!r}")
        if self.state_accounting not in (DEFAULT, *ACCOUNTING):
            raise ValueError(
                f"state_accounting must be one of {', '.join(ACCOUNTING)}, got {self.state_accounting!r}"
            )
        if self.offload not in OFFLOAD:
            raise ValueError(f"offload must be one of {', '.join(OFFLOAD)}, got {self.offload!r}")
        for name in ("seq_len", "micro_batch", "grad_accum", "lora_rank", "freeze_trainable_layers"):
            high = MAX_SEQ_LEN if name == "seq_len" else MAX_COUNT
            if not 1 <= getattr(self, name) <= high:
                raise ValueError(f"{name} must be from 1 to {high:,}, got {getattr(self, name)}")
        if self.optimizer_in_backward and self.grad_accum != 1:
            raise ValueError("optimizer_in_backward needs grad_accum 1 (no gradients to accumulate)")
        self._check_parallelism(profile)
        if self.mfu is not None and not 0 < self.mfu <= 1:
            raise ValueError(f"mfu must be in (0, 1], got {self.mfu}")
        if self.stack_efficiency is None:
            object.__setattr__(self, "stack_efficiency", profile.stack_efficiency)
        elif not 0 < self.stack_efficiency <= 1:
            raise ValueError(f"stack_efficiency must be in (0, 1], got {self.stack_efficiency}")
        if self.internode_gb_per_s <= 0:
            raise ValueError("internode_gb_per_s must be positive")
        if self.virtual_stages is not None and not 1 <= self.virtual_stages <= MAX_COUNT:
            raise ValueError(f"virtual_stages must be from 1 to {MAX_COUNT:,}, got {self.virtual_stages}")
        object.__setattr__(self, "lora_targets", _lora_targets(self.lora_targets))

    def _check_parallelism(self, profile: Framework) -> None:
        if self.zero_stage is not None and self.zero_stage not in (0, 1, 2, 3):
            raise ValueError(f"zero_stage must be 0, 1, 2 or 3, got {self.zero_stage}")
        if self.zero_stage is not None and self.zero_stage not in profile.stages:
            stages = ", ".join(str(stage) for stage in profile.stages)
            raise ValueError(f"{profile.name} runs ZeRO/FSDP stages {stages}, not {self.zero_stage}")
        if self.zero_stage is not None and self.zero_stage < self.min_zero_stage:
            raise ValueError(
                f"offload={self.offload} needs ZeRO stage {self.min_zero_stage} or more, "
                f"got {self.zero_stage}"
            )
        if self.offload != "none" and profile.sharding not in ("deepspeed", "fsdp", "fsdp2"):
            raise ValueError(f"{profile.name} has no CPU offload of model states")
        for name in ("tp", "pp"):
            value = getattr(self, name)
            if value is not None and not 1 <= value <= MAX_COUNT:
                raise ValueError(f"{name} must be from 1 to {MAX_COUNT:,}, got {value}")
        if self.fixed_layout and (self.tp or 1) * (self.pp or 1) > 1:
            if not profile.model_parallel:
                raise ValueError(f"{profile.name} runs no tensor or pipeline parallelism; use megatron")
            if self.offload != "none" or (self.zero_stage or 0) > 1:
                raise ValueError("tensor/pipeline parallelism runs with ZeRO stage 0 or 1 and no offload")

    @cached_property
    def profile(self) -> Framework:
        return framework(self.framework)

    @property
    def efficiency(self) -> float:
        """The stack efficiency in use (the framework's unless set)."""
        assert self.stack_efficiency is not None  # resolved in __post_init__
        return self.stack_efficiency

    @property
    def sharded_accounting(self) -> str:
        """The state accounting when ZeRO/FSDP runs: as set, else the framework's. (The field
        stays "default" unless set, so a profile can use another convention on one GPU.)"""
        return self.profile.state_accounting if self.state_accounting == DEFAULT else self.state_accounting

    def accounting(self, stage: int, gpu_count: int) -> str:
        """The state accounting in force at this stage and data-parallel count: the profile's
        single-GPU convention where it has one and nothing is sharded or offloaded."""
        single = self.profile.single_gpu_accounting
        unsharded = stage == 0 and gpu_count == 1 and self.offload == "none"
        if single and unsharded and self.state_accounting == DEFAULT:
            return single
        return self.sharded_accounting

    @property
    def fixed_layout(self) -> bool:
        """True when the user fixed the TP/PP layout (either degree given)."""
        return self.tp is not None or self.pp is not None

    @property
    def uses_sequence_parallel(self) -> bool:
        """Sequence parallelism with TP: as set, else where the framework has it (Megatron-core)."""
        if self.sequence_parallel is not None:
            return self.sequence_parallel
        return self.profile.sharding == "megatron"

    @property
    def uses_fused_kernels(self) -> bool:
        """Fused norms, RoPE and activations: as set, else the framework's."""
        return self.profile.fused_kernels if self.fused_kernels is None else self.fused_kernels

    @property
    def overlaps_tp_comm(self) -> bool:
        """Tensor-parallel collectives hidden behind the layer's GEMMs: as set, else the
        framework's; Transformer Engine overlaps them only with sequence parallelism."""
        overlap = self.profile.tp_comm_overlap if self.tp_comm_overlap is None else self.tp_comm_overlap
        return overlap and self.uses_sequence_parallel

    def virtual_stages_for(self, layers: int, pp: int) -> int:
        """Pipeline chunks per GPU: as set, else, where the framework interleaves, the most that
        leave MIN_LAYERS_PER_VIRTUAL_STAGE layers each (Megatron-Bridge's Llama 3 70B recipes run
        80 layers as PP4 or PP8 with VP5); 1 (plain 1F1B) without a pipeline, when the layers do
        not split evenly, or when the micro-batches are not a multiple of PP (Megatron's condition
        for the interleaved schedule)."""
        if pp == 1:
            return 1
        if self.virtual_stages is not None:
            return self.virtual_stages
        if not self.profile.interleaved_pipeline or layers % pp or self.grad_accum % pp:
            return 1
        per_stage = layers // pp
        chunks = [v for v in range(1, per_stage + 1) if per_stage % v == 0]
        return max((v for v in chunks if per_stage // v >= MIN_LAYERS_PER_VIRTUAL_STAGE), default=1)

    @property
    def min_zero_stage(self) -> int:
        """DeepSpeed offloads optimizer states from stage 1 and parameters only at stage 3
        (FSDP has no optimizer-only stage, so its optimizer offload starts at stage 2)."""
        stage = {"none": 0, "optimizer": 1, "all": 3}[self.offload]
        return min((s for s in self.profile.stages if s >= stage), default=stage)


def check_method(method: str, setup: TrainingSetup | None = None) -> str:
    """The method name, validated (and, with a setup, checked against its framework)."""
    if method not in METHODS:
        hint = did_you_mean(nearest_names(method, METHODS))
        raise ValueError(f"method must be one of {', '.join(METHODS)}, got {method!r}{hint}")
    if setup is not None and method == "qlora" and setup.profile.sharding == "megatron":
        raise ValueError("megatron has no QLoRA (4-bit bitsandbytes base); use lora or another framework")
    if setup is not None and method == "qlora" and (setup.tp or 1) * (setup.pp or 1) > 1:
        raise ValueError("QLoRA's 4-bit base runs with ZeRO-3/FSDP sharding, not tensor/pipeline parallelism")
    return method


def _lora_targets(targets: tuple[str, ...] | list[str] | str) -> tuple[str, ...]:
    parts = targets.split(",") if isinstance(targets, str) else list(targets)
    names = [part.strip().lower() for part in parts if part.strip()]
    if not names:
        raise ValueError("lora_targets is empty")
    if names == ["all"]:
        return ("all",)
    resolved = []
    for name in names:
        full = name if name.endswith("_proj") else f"{name}_proj"
        if full not in LORA_MODULES:
            raise ValueError(f"unknown LoRA target {name!r}; use all or some of {', '.join(LORA_MODULES)}")
        resolved.append(full)
    return tuple(dict.fromkeys(resolved))

"""Training settings: what a fine-tuning user sets, with the defaults they get.

Defaults follow the common fine-tuning stack (Hugging Face Trainer / LLaMA-Factory with
DeepSpeed or FSDP): sequences of 2048 tokens, micro-batch 1 with gradient accumulation,
gradient checkpointing on, flash attention, AdamW, LoRA rank 8 on all linear layers.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

METHODS = ("full", "full-bf16", "lora", "qlora", "freeze")
OPTIMIZERS = ("adamw", "adamw-8bit", "sgd")
CHECKPOINTING = ("none", "selective", "full")
OFFLOAD = ("none", "optimizer", "all")
ACCOUNTING = ("zero", "deepspeed")
LORA_MODULES = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")

# Fraction of a GPU's measured matmul ceiling a fine-tuning step sustains on the FLOPs it
# executes (eager Hugging Face/PEFT kernels, micro-batch 1, flash attention, packed or
# full-length sequences). Pretraining stacks reach about 0.52 (Llama 2's implied MFU of
# 0.43-0.46 on A100 with attention FLOPs counted, over the A100's 0.869 matmul ceiling;
# sizing.md §3.2-3.3); Alpaca's 2023 fine-tuning run implies about 7% MFU including padding
# (sizing.md §0). 0.40 sits between: the least certain number here, so --mfu overrides it.
FINETUNE_STACK_EFFICIENCY = 0.40
PRETRAIN_STACK_EFFICIENCY = 0.52
# Per-GPU bandwidth between nodes: 8 x 400 Gb/s NICs per 8-GPU node is the typical H100
# cluster (sizing.md §4, ml-engineering network notes). Rental clusters are often slower.
INTERNODE_GB_PER_S = 50.0


@dataclass(frozen=True)
class TrainingSetup:
    """The knobs of one training run. Lengths in tokens; `mfu` is a fraction (0-1).

    `zero_stage` None means "the smallest stage that fits"; `lora_targets` ("all" or module
    names such as q_proj, v_proj) applies to lora and qlora; `freeze_trainable_layers` is
    how many of the last layers freeze-tuning trains (LLaMA-Factory's default is 2).
    `state_accounting` "zero" counts model states as the ZeRO paper does (16 B/param for
    mixed-precision AdamW); "deepspeed" as DeepSpeed's estimators do (an fp32 gradient
    partition beside the optimizer, 16-bit gradients unsharded below stage 3).
    """

    seq_len: int = 2048  # LLaMA-Factory cutoff_len default (data_args.py)
    micro_batch: int = 1  # per GPU; LLaMA-Factory example configs
    grad_accum: int = 8  # micro-batches per optimizer step; LLaMA-Factory example configs
    checkpointing: str = "full"  # HF gradient checkpointing, on by default in LLaMA-Factory
    flash_attention: bool = True  # SDPA/flash kernels, the transformers default
    optimizer: str = "adamw"
    lora_rank: int = 8  # LLaMA-Factory lora_rank default
    lora_targets: tuple[str, ...] = ("all",)  # LLaMA-Factory lora_target default
    freeze_trainable_layers: int = 2  # LLaMA-Factory freeze_trainable_layers default
    offload: str = "none"
    zero_stage: int | None = None
    mfu: float | None = None
    state_accounting: str = "zero"
    stack_efficiency: float = FINETUNE_STACK_EFFICIENCY
    internode_gb_per_s: float = INTERNODE_GB_PER_S

    def __post_init__(self) -> None:
        for name, value, allowed in (
            ("checkpointing", self.checkpointing, CHECKPOINTING),
            ("optimizer", self.optimizer, OPTIMIZERS),
            ("offload", self.offload, OFFLOAD),
            ("state_accounting", self.state_accounting, ACCOUNTING),
        ):
            if value not in allowed:
                raise ValueError(f"{name} must be one of {', '.join(allowed)}, got {value!r}")
        for name in ("seq_len", "micro_batch", "grad_accum", "lora_rank"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        if self.freeze_trainable_layers < 1:
            raise ValueError("freeze_trainable_layers must be at least 1")
        if self.zero_stage is not None and self.zero_stage not in (0, 1, 2, 3):
            raise ValueError(f"zero_stage must be 0, 1, 2 or 3, got {self.zero_stage}")
        if self.zero_stage is not None and self.zero_stage < self.min_zero_stage:
            raise ValueError(
                f"offload={self.offload} needs ZeRO stage {self.min_zero_stage} or more, "
                f"got {self.zero_stage}"
            )
        if self.mfu is not None and not 0 < self.mfu <= 1:
            raise ValueError(f"mfu must be in (0, 1], got {self.mfu}")
        if not 0 < self.stack_efficiency <= 1:
            raise ValueError(f"stack_efficiency must be in (0, 1], got {self.stack_efficiency}")
        if self.internode_gb_per_s <= 0:
            raise ValueError("internode_gb_per_s must be positive")
        object.__setattr__(self, "lora_targets", _lora_targets(self.lora_targets))

    @property
    def min_zero_stage(self) -> int:
        """DeepSpeed offloads optimizer states from stage 1 and parameters only at stage 3."""
        return {"none": 0, "optimizer": 1, "all": 3}[self.offload]

    @classmethod
    def from_options(cls, options: dict[str, object]) -> TrainingSetup:
        """Build from keyword options, naming any unknown one."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(options) - known)
        if unknown:
            raise ValueError(
                f"unknown sizing option(s): {', '.join(unknown)}; known: {', '.join(sorted(known))}"
            )
        return cls(**options)  # type: ignore[arg-type]


def check_method(method: str) -> str:
    """The method name, validated."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
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

"""Training methods as bytes per parameter: which parameters train, in what precision, and
what the optimizer keeps for them.

Sources (sizing.md §1.1, §1.4): mixed-precision AdamW is 2 (bf16 weights) + 2 (bf16
gradients) + 12 (fp32 master, momentum, variance) = 16 B/param (ZeRO §3.1); pure bf16 is
2 + 2 + 4 (two bf16 moments) = 8 B/param (LLaMA-Factory pure_bf16); 8-bit Adam keeps
1 + 1 B of moments and SGD one 4 B momentum (Transformer Math 101). LoRA adapters and
freeze-tuned layers train in fp32 (PEFT and LLaMA-Factory upcast trainable parameters),
so they carry 4 + 4 + moments and need no separate master copy. QLoRA stores decoder
linears in NF4 with double quantization.
"""

from __future__ import annotations

from dataclasses import dataclass

from sizing.models import ModelSpec
from sizing.setup import TrainingSetup

# NF4 is 4 bits; double quantization keeps 8-bit absmax constants per 64 weights plus one
# fp32 constant per 256 of those: 8/64 + 32/(64*256) bits (QLoRA arXiv 2305.14314).
NF4_DQ_BYTES_PER_PARAM = (4 + 8 / 64 + 32 / (64 * 256)) / 8
BF16_BYTES = 2
FP32_BYTES = 4

# Optimizer moment bytes per trainable parameter, by moment precision.
_MOMENT_BYTES = {
    ("adamw", FP32_BYTES): 8,  # m and v in fp32
    ("adamw", BF16_BYTES): 4,  # m and v in bf16 (pure bf16 training)
    ("adamw-8bit", FP32_BYTES): 2,  # bitsandbytes 8-bit m and v
    ("adamw-8bit", BF16_BYTES): 2,
    ("sgd", FP32_BYTES): 4,  # momentum
    ("sgd", BF16_BYTES): 2,
}


@dataclass(frozen=True)
class StateBytes:
    """Model states of one unsharded replica, in bytes, grouped by the ZeRO stage that
    shards them: weights (stage 3), gradients (stage 2), optimizer (stage 1: master
    copy and moments). `fp32_gradient_bytes` is the fp32 gradient partition DeepSpeed
    keeps beside the optimizer when gradients are 16-bit (counted only under the
    "deepspeed" accounting)."""

    weights: float
    gradients: float
    optimizer: float
    fp32_gradient_bytes: float
    params: int
    trainable_params: int
    largest_unit_params: int
    dequant_buffer: float = 0.0  # QLoRA: one dequantized bf16 matrix at a time

    @property
    def total(self) -> float:
        return self.weights + self.gradients + self.optimizer

    @property
    def gathered_unit(self) -> float:
        """What ZeRO-3 materialises for the largest unit: its weights and gradients at the
        model's average bytes (DeepSpeed's 4 x largest layer for 16-bit training)."""
        return self.largest_unit_params * (self.weights + self.gradients) / self.params


def lora_params(spec: ModelSpec, setup: TrainingSetup) -> int:
    """Adapter parameters: rank x (d_in + d_out) per targeted matrix, every layer."""
    targets = setup.lora_targets
    per_layer = sum(
        setup.lora_rank * (linear.d_in + linear.d_out) * linear.count
        for linear in spec.layer_linears
        if linear.name != "router" and (targets == ("all",) or linear.name in targets)
    )
    return spec.layers * per_layer


def trainable_layers(spec: ModelSpec, method: str, setup: TrainingSetup) -> int:
    """Decoder layers that backpropagation runs through (and keep activations)."""
    if method == "freeze":
        return min(setup.freeze_trainable_layers, spec.layers)
    return spec.layers


def state_bytes(spec: ModelSpec, method: str, setup: TrainingSetup) -> StateBytes:
    """Bytes of weights, gradients and optimizer states for one replica."""
    params = spec.params
    dequant_buffer = 0.0
    weights: float
    if method in ("full", "full-bf16"):
        trainable, frozen = params, 0
        weight_b, grad_b = BF16_BYTES, BF16_BYTES
        master_b = FP32_BYTES if method == "full" else 0
        moment_precision = FP32_BYTES if method == "full" else BF16_BYTES
        weights = trainable * weight_b
    else:
        if method == "freeze":
            trainable = trainable_layers(spec, method, setup) * spec.layer_params
        else:
            trainable = lora_params(spec, setup)
        frozen = params if method != "freeze" else params - trainable
        weight_b, grad_b, master_b, moment_precision = FP32_BYTES, FP32_BYTES, 0, FP32_BYTES
        if method == "qlora":
            quantized = spec.layers * spec.layer_linear_params
            frozen_bytes: float = quantized * NF4_DQ_BYTES_PER_PARAM + (frozen - quantized) * BF16_BYTES
            dequant_buffer = spec.largest_linear_params * BF16_BYTES
        else:
            frozen_bytes = frozen * BF16_BYTES
        weights = frozen_bytes + trainable * weight_b
    moments = _MOMENT_BYTES[(setup.optimizer, moment_precision)]
    # DeepSpeed reduces 16-bit gradients into an fp32 partition for the optimizer step.
    fp32_grads = trainable * FP32_BYTES if grad_b == BF16_BYTES and master_b else 0.0
    return StateBytes(
        weights=weights,
        gradients=trainable * grad_b,
        optimizer=trainable * (master_b + moments),
        fp32_gradient_bytes=fp32_grads,
        params=params,
        trainable_params=trainable,
        largest_unit_params=spec.largest_unit_params,
        dequant_buffer=dequant_buffer,
    )

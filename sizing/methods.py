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

from sizing.setup import TrainingSetup
from sizing.shapes import ModelSpec

# NF4 is 4 bits; double quantization keeps 8-bit absmax constants per 64 weights plus one
# fp32 constant per 256 of those: 8/64 + 32/(64*256) bits (QLoRA arXiv 2305.14314). The
# packed 4-bit data is what FSDP/ZeRO-3 shard (bnb_4bit_quant_storage); the constants live in
# each module's quant_state, which is not a parameter, so every GPU keeps all of them.
NF4_DATA_BYTES_PER_PARAM = 4 / 8
NF4_CONSTANT_BYTES_PER_PARAM = (8 / 64 + 32 / (64 * 256)) / 8
NF4_DQ_BYTES_PER_PARAM = NF4_DATA_BYTES_PER_PARAM + NF4_CONSTANT_BYTES_PER_PARAM
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
class UnitBytes:
    """Weights and gradients of one unit ZeRO-3/FSDP gathers (a layer, the embedding...)."""

    weights: float
    gradients: float


@dataclass(frozen=True)
class StateBytes:
    """Model states of one unsharded replica, in bytes, grouped by the ZeRO stage that
    shards them: weights (stage 3), gradients (stage 2), optimizer (stage 1: master copy and
    moments). `fp32_gradient_bytes` is the fp32 gradient DeepSpeed keeps beside the optimizer
    (and Megatron as its main gradients) when gradients are 16-bit. `replicated_weights` are
    weights stage 3 cannot shard (QLoRA's quantization constants). The units are what
    ZeRO-3/FSDP gather: a main-group decoder layer, the embedding, the LM head and the largest
    single module (DeepSpeed gathers per nn.Module)."""

    weights: float
    gradients: float
    optimizer: float
    fp32_gradient_bytes: float
    params: int
    trainable_params: int
    layer: UnitBytes
    embedding: UnitBytes
    lm_head: UnitBytes
    module: UnitBytes
    dequant_buffer: float = 0.0  # QLoRA: one dequantized bf16 matrix at a time
    replicated_weights: float = 0.0
    # Bytes per trainable parameter a foreach AdamW step allocates for a moment: its
    # _multi_tensor_adam takes torch._foreach_sqrt of the second moments, one tensor per parameter
    # of the group, before dividing (torch/optim/adam.py); one moment's precision. 8-bit AdamW and
    # SGD update in place.
    step_temporary_bytes: float = 0.0

    @property
    def total(self) -> float:
        return self.weights + self.gradients + self.optimizer


def lora_params(spec: ModelSpec, setup: TrainingSetup) -> int:
    """Adapter parameters: rank x (d_in + d_out) per targeted matrix (each expert's), every layer."""
    targets = setup.lora_targets
    return sum(
        group.count
        * sum(
            setup.lora_rank * (linear.d_in + linear.d_out) * linear.count
            for linear in group.linears
            if linear.name != "router" and (targets == ("all",) or linear.name.split(".")[-1] in targets)
        )
        for group in spec.layer_groups
    )


def trainable_layers(spec: ModelSpec, method: str, setup: TrainingSetup) -> int:
    """Decoder layers that backpropagation runs through (and keep activations)."""
    if method == "freeze":
        return min(setup.freeze_trainable_layers, spec.layers)
    return spec.layers


def full_precision(method: str, setup: TrainingSetup) -> str:
    """What a full method trains as under the framework: "full" (bf16 + fp32 master) or
    "full-bf16" (torchtune and Unsloth keep no fp32 master copy)."""
    if method == "full" and setup.profile.full_is_pure_bf16:
        return "full-bf16"
    return method


def state_bytes(spec: ModelSpec, method: str, setup: TrainingSetup) -> StateBytes:
    """Bytes of weights, gradients and optimizer states for one replica."""
    params = spec.params
    method = full_precision(method, setup)
    dequant_buffer = replicated = 0.0
    layer_params = spec.layer_params
    if method in ("full", "full-bf16"):
        trainable = params
        grad_b, master_b = BF16_BYTES, (FP32_BYTES if method == "full" else 0)
        moment_precision = FP32_BYTES if method == "full" else BF16_BYTES
        weights = float(params * BF16_BYTES)
        layer = UnitBytes(layer_params * BF16_BYTES, layer_params * BF16_BYTES)
        embedding_grad_b = BF16_BYTES
        module_w, module_g = float(BF16_BYTES), float(BF16_BYTES)
    else:
        grad_b, master_b, moment_precision = FP32_BYTES, 0, FP32_BYTES
        embedding_grad_b = 0
        if method == "freeze":
            trainable = trainable_layers(spec, method, setup) * layer_params
            weights = float((params - trainable) * BF16_BYTES + trainable * FP32_BYTES)
            layer = UnitBytes(layer_params * FP32_BYTES, layer_params * FP32_BYTES)
            module_w, module_g = float(FP32_BYTES), float(FP32_BYTES)
        else:
            trainable = lora_params(spec, setup)
            adapters = trainable / spec.layers * FP32_BYTES
            quantized = spec.decoder_linear_params if method == "qlora" else 0
            linear_b = NF4_DQ_BYTES_PER_PARAM if method == "qlora" else BF16_BYTES
            weights = quantized * NF4_DQ_BYTES_PER_PARAM + (params - quantized) * BF16_BYTES
            weights += trainable * FP32_BYTES
            layer_linear = spec.main_group.linear_params
            layer = UnitBytes(
                layer_linear * linear_b + (layer_params - layer_linear) * BF16_BYTES + adapters, adapters
            )
            module_w, module_g = float(linear_b), 0.0
            if method == "qlora":
                dequant_buffer = spec.largest_linear_params * BF16_BYTES
                replicated = quantized * NF4_CONSTANT_BYTES_PER_PARAM
    moments = _MOMENT_BYTES[(setup.optimizer, moment_precision)]
    step_temporary = moment_precision if setup.optimizer == "adamw" else 0
    # DeepSpeed reduces 16-bit gradients into an fp32 partition for the optimizer step.
    fp32_grads = trainable * FP32_BYTES if grad_b == BF16_BYTES and master_b else 0.0
    table = max(spec.embedding_params, spec.lm_head_params)
    module_params = spec.largest_module_params
    if module_params <= table:
        module = UnitBytes(table * BF16_BYTES, table * embedding_grad_b)
    else:
        module = UnitBytes(module_params * module_w, module_params * module_g)
    return StateBytes(
        weights=weights,
        gradients=trainable * grad_b,
        optimizer=trainable * (master_b + moments),
        fp32_gradient_bytes=fp32_grads,
        params=params,
        trainable_params=trainable,
        layer=layer,
        embedding=UnitBytes(spec.embedding_params * BF16_BYTES, spec.embedding_params * embedding_grad_b),
        lm_head=UnitBytes(spec.lm_head_params * BF16_BYTES, spec.lm_head_params * embedding_grad_b),
        module=module,
        dequant_buffer=dequant_buffer,
        replicated_weights=replicated,
        step_temporary_bytes=step_temporary,
    )

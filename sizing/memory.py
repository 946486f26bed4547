"""Memory per GPU: model states sharded by ZeRO/FSDP, activations, logits and overhead.

All results are bytes or GB of 1e9 bytes. Activations follow Korthikanti et al. (arXiv
2205.05198, Table 1) per layer, generalised from GPT's shape to grouped-query attention and
SwiGLU; for GPT's own shape they reduce exactly to sbh(34 + 5as/h).
"""

from __future__ import annotations

from dataclasses import dataclass

from sizing.methods import StateBytes
from sizing.models import ModelSpec

GB = 1e9
# CUDA context, cuBLAS workspaces and NCCL buffers: PyTorch takes 300 MiB-2 GiB on first
# use (vram.asmirnov.xyz); gpu_poor adds a flat 650 MB. 1 GB covers a multi-GPU job.
CUDA_CONTEXT_GB = 1.0
# Caching-allocator fragmentation, as a share of what is allocated. ZeRO §3.2 saw over 30%
# stranded in extreme cases; EleutherAI budgets 20% on top of inference weights for all
# extras. 10% is the ordinary case, not the extreme.
FRAGMENTATION = 0.10
# Cross-entropy over the vocabulary keeps fp32 logits and fp32 probabilities at the loss:
# B x S x V x 4 x 2 bytes (vram.asmirnov.xyz; sizing.md §1.3).
LOGITS_BYTES_PER_ENTRY = 8
ACTIVATION_BYTES = 2  # bf16 activations
# DeepSpeed's estimators size host memory for offload at 1.5x the states
# (additional_buffer_factor, deepspeed/runtime/zero/stage3.py; sizing.md §1.5).
CPU_BUFFER_FACTOR = 1.5


@dataclass(frozen=True)
class Breakdown:
    """Memory in GB (1e9 bytes) by component, on one GPU."""

    weights: float
    gradients: float
    optimizer: float
    activations: float
    overhead: float

    @property
    def total(self) -> float:
        return self.weights + self.gradients + self.optimizer + self.activations + self.overhead

    def as_dict(self) -> dict[str, float]:
        return {
            "weights": self.weights,
            "gradients": self.gradients,
            "optimizer": self.optimizer,
            "activations": self.activations,
            "overhead": self.overhead,
        }


def layer_activation_bytes(spec: ModelSpec, tokens: int, seq_len: int, keep_attention_scores: bool) -> float:
    """Bytes one decoder layer stores for backward without recompute, for `tokens` tokens
    (micro-batch x sequence) in sequences of `seq_len`.

    Attention: inputs of the QKV and output projections, Q, K and V (K and V at the KV
    width), a dropout mask where the model has dropout, and, unless flash attention or
    selective recompute avoid it, the s x s scores: softmax output, plus mask and dropout
    output with dropout. MLP: the input, then for GeLU the activation's input and output,
    for SwiGLU gate, up, SiLU output and product; with experts, per routed expert. Two
    norms keep their inputs. GPT's shape gives Korthikanti's 34sbh + 5as²b exactly.
    """
    h, kv, f, t = spec.hidden, spec.kv_dim, spec.ffn, tokens
    mask = 1 if spec.dropout else 0  # one byte per element
    attention = 2 * t * h + (2 * t * h + 2 * t * kv) + 2 * t * kv + 2 * t * h + mask * t * h
    if keep_attention_scores:
        attention += spec.heads * seq_len * t * (2 + (1 + 2) * mask)
    per_expert = 4 * t * f if spec.mlp == "gelu" else 8 * t * f
    mlp = 2 * t * h + spec.experts_per_token * per_expert + mask * t * h
    norms = 2 * 2 * t * h
    return attention + mlp + norms


@dataclass(frozen=True)
class Activations:
    """Activation bytes on one GPU. Peak = stored + the larger of the logits spike (at the
    loss, before layer backward starts) and one recomputed layer (during backward)."""

    stored: float
    working_layer: float
    logits: float

    @property
    def peak(self) -> float:
        return self.stored + max(self.logits, self.working_layer)


def activations(
    spec: ModelSpec,
    seq_len: int,
    micro_batch: int,
    checkpointing: str,
    flash_attention: bool,
    backward_layers: int,
) -> Activations:
    """Activations for a micro-batch; only the last `backward_layers` layers keep any
    (freeze-tuning runs the frozen ones without autograd)."""
    tokens = seq_len * micro_batch
    keep_scores = not flash_attention and checkpointing == "none"
    per_layer = layer_activation_bytes(spec, tokens, seq_len, keep_scores)
    logits = tokens * spec.vocab * LOGITS_BYTES_PER_ENTRY
    if checkpointing == "full":
        # Only each layer's input survives; backward recomputes one layer at a time, with
        # flash attention (or not) deciding whether its scores are materialised.
        working = layer_activation_bytes(spec, tokens, seq_len, not flash_attention)
        return Activations(backward_layers * ACTIVATION_BYTES * tokens * spec.hidden, working, logits)
    return Activations(backward_layers * per_layer, 0.0, logits)


def sharded_states(
    states: StateBytes, stage: int, gpu_count: int, offload: str, accounting: str = "zero"
) -> tuple[float, float, float]:
    """(weights, gradients, optimizer) bytes on one GPU.

    ZeRO paper (Fig. 1): stage 1 shards the optimizer states, 2 also the gradients, 3 also
    the weights, each over `gpu_count` data-parallel GPUs. Stage 3 (or parameter offload)
    also holds the largest unit gathered, weights and gradients (DeepSpeed's 4 x largest
    layer). Offloading the optimizer moves its states and the gradient partition to the
    CPU (ZeRO-Offload); offloading all also moves the weights.
    "deepspeed" accounting keeps 16-bit gradients unsharded below stage 3 (transient at 3)
    and counts an fp32 gradient partition with the optimizer, as DeepSpeed's estimators do.
    """
    n = gpu_count
    weights = states.weights / n if stage == 3 else states.weights
    if accounting == "deepspeed":
        gradients = states.gradients if stage < 3 else 0.0
        optimizer = states.optimizer + states.fp32_gradient_bytes
    else:
        gradients = states.gradients / n if stage >= 2 else states.gradients
        optimizer = states.optimizer
    if stage >= 1:
        optimizer /= n
    if offload != "none":
        gradients = optimizer = 0.0
    if offload == "all":
        weights = 0.0
    if stage == 3 or offload == "all":
        weights += states.gathered_unit
    return weights + states.dequant_buffer, gradients, optimizer


def breakdown(
    states: StateBytes,
    acts: Activations,
    stage: int = 0,
    gpu_count: int = 1,
    offload: str = "none",
    accounting: str = "zero",
) -> Breakdown:
    """Everything on one GPU, in GB; stage 0 on one GPU is the unsharded replica."""
    weights, gradients, optimizer = sharded_states(states, stage, gpu_count, offload, accounting)
    allocated = weights + gradients + optimizer + acts.peak
    return Breakdown(
        weights=weights / GB,
        gradients=gradients / GB,
        optimizer=optimizer / GB,
        activations=acts.peak / GB,
        overhead=CUDA_CONTEXT_GB + FRAGMENTATION * allocated / GB,
    )


def offloaded_cpu_gb(states: StateBytes, offload: str, accounting: str = "zero") -> float:
    """Host memory for the offloaded states of all GPUs together (their shards add up to one
    replica), with DeepSpeed's pinned-buffer factor, in GB. Model loading, which can need
    more for a moment (a copy per process), is not counted."""
    if offload == "none":
        return 0.0
    if accounting == "deepspeed":  # fp32 partition: master, gradients, moments
        moved = states.optimizer + states.fp32_gradient_bytes
    else:  # ZeRO-Offload: optimizer states and the 16-bit gradients
        moved = states.optimizer + states.gradients
    if offload == "all":
        moved += states.weights
    return CPU_BUFFER_FACTOR * moved / GB

"""Activation and loss memory on one GPU, with tensor, sequence and pipeline parallelism.

Per layer, Korthikanti et al. (arXiv 2205.05198, Table 1 and §4) generalised from GPT's shape
to grouped-query and latent attention, gated MLPs and routed experts: for GPT's own shape the
layer stores sbh(34 + 5as/h), of which 10sbh (the layer norms' inputs, the attention and MLP
inputs, the residual dropout masks) sits outside the tensor-parallel region and 24sbh + 5as²b
inside it. So with TP degree t each GPU stores sbh(10 + 24/t + 5as/(ht)), and with sequence
parallelism also the 10sbh split: (sbh/t)(34 + 5as/h). With 1F1B pipelining the first stage
holds min(p, m) micro-batches in flight over its L/p layers (Korthikanti §4.2.3). All bytes.
"""

from __future__ import annotations

from dataclasses import dataclass

from sizing import frameworks
from sizing.shapes import LayerGroup, ModelSpec

ACTIVATION_BYTES = 2  # bf16 activations
# Hugging Face's modelling code (LlamaRMSNorm, apply_rotary_pos_emb, eager_attention_forward in
# src/transformers/models/llama/modeling_llama.py) run unfused: each RMSNorm keeps its fp32 input
# (4 bytes) and its normalised bf16 output (2) for backward where a fused kernel keeps the 16-bit
# input; RoPE keeps q and k before rotation and their rotate_half copies (2 + 2 bytes per element);
# eager attention keeps the fp32 softmax (4) and its bf16 copy (2) per score.
EAGER_NORM_EXTRA_BYTES = 4
EAGER_ROPE_EXTRA_BYTES = 4
EAGER_SCORE_BYTES = 6


@dataclass(frozen=True)
class LayerBytes:
    """What one layer stores for backward: outside and inside the tensor-parallel region."""

    replicated: float
    parallel: float

    def per_gpu(self, tp: int, sequence_parallel: bool) -> float:
        return (self.replicated / tp if sequence_parallel else self.replicated) + self.parallel / tp

    @property
    def total(self) -> float:
        return self.replicated + self.parallel


def layer_bytes(
    spec: ModelSpec,
    group: LayerGroup,
    tokens: int,
    seq_len: int,
    keep_attention_scores: bool,
    eager_kernels: bool = False,
) -> LayerBytes:
    """Bytes one decoder layer of `group` stores without recompute for `tokens` tokens
    (micro-batch x sequence) in sequences of `seq_len`. `eager_kernels`: Hugging Face's unfused
    RMSNorm, RoPE and eager attention (see EAGER_*), not fused kernels (Korthikanti's count).

    Outside the TP region: the QKV input (2th), the MLP input (2th), two norms' inputs (4th),
    dropout masks after attention and MLP (th each, models with dropout only), MLA's low-rank
    q and kv activations. Inside: Q, K, V at their widths, the output projection's input and,
    unless flash attention or selective recompute avoid it, the s x s scores (softmax output,
    plus mask and dropout output with dropout); the MLP per routed expert 4tf (GeLU: the
    activation's input and output) or 8tf (gated: gate, up, activation output, product), with
    experts also each routed copy of the input (2th), and shared experts at their width.
    """
    h, t = spec.hidden, tokens
    mask = 1 if spec.dropout else 0
    # attention's and the MLP's inputs (one tensor when one norm feeds both), the norms' inputs
    # (one tensor when both norms read the same residual stream)
    inputs = 1 if spec.block == "parallel-shared" else 2
    norm_inputs = 2 if spec.block == "sequential" else 1
    replicated = 2 * t * h * inputs + 2 * t * h * norm_inputs + 2 * mask * t * h
    if spec.mla:
        replicated += 2 * t * (spec.q_lora_rank + spec.kv_lora_rank + spec.qk_rope_dim)
    parallel: float = 2 * t * (spec.q_dim + spec.kv_dim + spec.v_dim + spec.attention_out_dim)
    rope = spec.learned_positions == 0  # GPT-2 style: learned positions, no RoPE
    if eager_kernels and spec.rms_norm:
        replicated += spec.norms_per_layer * EAGER_NORM_EXTRA_BYTES * t * h
    if eager_kernels and rope:
        q_rope = spec.heads * spec.qk_rope_dim if spec.mla else spec.q_dim * spec.rotary_fraction
        k_rope = spec.qk_rope_dim if spec.mla else spec.kv_dim * spec.rotary_fraction
        parallel += EAGER_ROPE_EXTRA_BYTES * t * (q_rope + k_rope)
    if keep_attention_scores:
        score_bytes = EAGER_SCORE_BYTES if eager_kernels else ACTIVATION_BYTES
        parallel += spec.heads * seq_len * t * (score_bytes + 3 * mask)
    per_width = 4 if spec.mlp == "gelu" else 8
    parallel += group.routed * per_width * t * group.ffn + per_width * t * group.shared_ffn
    if group.routed > 1:
        parallel += group.routed * 2 * t * h
    return LayerBytes(replicated, parallel)


def gpt_layer_bytes(spec: ModelSpec, tokens: int, seq_len: int, keep_attention_scores: bool) -> float:
    """All bytes of one main-group layer (the Korthikanti identity the tests check)."""
    return layer_bytes(spec, spec.main_group, tokens, seq_len, keep_attention_scores).total


def loss_bytes(spec: ModelSpec, loss: str, tokens: int, chunks: int, tp: int) -> float:
    """Peak bytes at the loss for `tokens` tokens on one GPU (see sizing/frameworks.py)."""
    entries = tokens * spec.vocab / tp
    if loss == "fp32":
        return frameworks.FP32_LOSS_BYTES * entries
    if loss == "fp32-copy":
        return frameworks.FP32_COPY_LOSS_BYTES * entries
    if loss == "vocab-parallel":
        return frameworks.VOCAB_PARALLEL_LOSS_BYTES * entries
    if loss == "chunked":
        per_entry = frameworks.CHUNKED_LOSS_SAVED_BYTES + frameworks.CHUNK_WORKING_BYTES / chunks
        return per_entry * entries
    return frameworks.FUSED_LOSS_BYTES_PER_TOKEN_HIDDEN * tokens * spec.hidden


@dataclass(frozen=True)
class Activations:
    """Activation bytes on one GPU. Peak = stored + the larger of the loss spike (at the loss,
    before layer backward starts) and one recomputed layer (during backward)."""

    stored: float
    working_layer: float
    logits: float

    @property
    def peak(self) -> float:
        return self.stored + max(self.logits, self.working_layer)


@dataclass(frozen=True)
class ActivationPlan:
    """The inputs of `activations` that do not change with the GPU count."""

    seq_len: int
    micro_batch: int
    checkpointing: str
    flash_attention: bool
    loss: str
    loss_chunks: int
    backward_layers: int  # the last layers backpropagation runs through (freeze-tuning: fewer)
    eager_kernels: bool = False  # Hugging Face's unfused norms, RoPE and eager attention


@dataclass(frozen=True)
class LayerCosts:
    """Per-GPU bytes of one layer under a TP degree: what it stores for backward, the layer
    being recomputed, its input (all full checkpointing keeps), and the loss spike."""

    stored_per_layer: float
    working: float
    layer_input: float
    logits: float


def layer_costs(
    spec: ModelSpec, plan: ActivationPlan, tp: int = 1, sequence_parallel: bool = False
) -> LayerCosts:
    """The per-layer numbers `stage_activations` adds up (they do not depend on the stage)."""
    tokens = plan.seq_len * plan.micro_batch
    keep_scores = not plan.flash_attention and plan.checkpointing == "none"
    stored = 0.0
    working = 0.0
    for group in spec.layer_groups:
        eager = plan.eager_kernels
        layer = layer_bytes(spec, group, tokens, plan.seq_len, keep_scores, eager)
        stored += group.count * layer.per_gpu(tp, sequence_parallel)
        # One layer recomputed (or, without recompute, the largest layer) during backward, with
        # flash attention (or not) deciding whether its scores are materialised.
        recomputed = layer_bytes(spec, group, tokens, plan.seq_len, not plan.flash_attention, eager)
        working = max(working, recomputed.per_gpu(tp, sequence_parallel))
    return LayerCosts(
        stored_per_layer=stored / spec.layers,
        working=working,
        layer_input=ACTIVATION_BYTES * tokens * spec.hidden / (tp if sequence_parallel else 1),
        logits=loss_bytes(spec, plan.loss, tokens, plan.loss_chunks, tp),
    )


def stage_activations(
    costs: LayerCosts, plan: ActivationPlan, layers: int, in_flight: float = 1, has_loss: bool = True
) -> Activations:
    """Activations of one GPU holding `layers` layers with `in_flight` micro-batches stored
    (pipeline stages); `has_loss` when the LM head and the loss run on this GPU."""
    # Freeze-tuning keeps activations only for the trained (last) layers.
    backward = min(layers, plan.backward_layers)
    logits = costs.logits if has_loss else 0.0
    if plan.checkpointing == "full":
        return Activations(in_flight * backward * costs.layer_input, costs.working, logits)
    if plan.checkpointing == "offload":
        # Layer inputs go to host RAM as they are made; the one in transfer and the next stay.
        return Activations(min(backward, 2) * costs.layer_input, costs.working, logits)
    return Activations(in_flight * backward * costs.stored_per_layer, 0.0, logits)


def activations(
    spec: ModelSpec,
    plan: ActivationPlan,
    tp: int = 1,
    sequence_parallel: bool = False,
    layers_on_gpu: int | None = None,
    in_flight: float = 1,
    has_loss: bool = True,
) -> Activations:
    """Activations of one GPU holding `layers_on_gpu` layers (all by default) with `in_flight`
    micro-batches stored (pipeline stages), TP degree `tp`; `has_loss` when the LM head and
    the loss run on this GPU."""
    costs = layer_costs(spec, plan, tp, sequence_parallel)
    layers = spec.layers if layers_on_gpu is None else layers_on_gpu
    return stage_activations(costs, plan, layers, in_flight, has_loss)

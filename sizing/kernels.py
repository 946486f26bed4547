"""What one micro-batch executes, by kind of kernel: GEMM FLOPs, flash-attention FLOPs, bytes of
memory-bound work, and host-side operator launches; and the rate each kind runs at on a GPU.

A step's time is the sum of those at their rates (`sizing/throughput.py`), so the throughput
prior is physics: the matmul share of a layer falls with sequence length (attention) and with
hidden size (element-wise work grows as h, GEMMs as h^2), recompute re-runs the forward, LoRA
adds memory-bound adapter traffic and launches, QLoRA dequantises. Counts are per token per
layer and per pass (forward; backward moves about twice the forward's bytes); their derivations
are in docs/sizing.md, "Throughput".
"""

from __future__ import annotations

from sizing.catalog import GpuSpec
from sizing.shapes import ModelSpec

# A causal mask leaves (s + 1) / 2s of the s x s score and value products to compute: flash
# kernels skip the masked blocks (FlashAttention-2, arXiv 2307.08691, §3.1), and Megatron-Core's
# FLOPs counter (as Megatron-Bridge's TFLOP/s/GPU figures show: Llama 3 8B at 8192 tokens,
# 725 TFLOP/s for 14,079 tokens/s/GPU, 5.15e10 FLOPs a token) counts them at one half.
CAUSAL_FRACTION = 0.5
# FlashAttention-2's backward recomputes the scores: five matmuls to the forward's two.
FLASH_BACKWARD_PASSES = 2.5

# Fraction of the GPU's measured matmul ceiling an attention kernel sustains, causal, head dim 128:
# FlashAttention-2 reaches 50-73% of A100's peak (arXiv 2307.08691; 0.60 of peak is 0.69 of the
# A100's 0.869 ceiling); on H100 it runs 298-335 TFLOPS forward and 291-322 backward at 2k-16k
# tokens (FlashAttention-3, arXiv 2407.08608, Fig. 5-6: 0.32 of peak, 0.40 of the ceiling), where
# cuDNN's fused attention (Transformer Engine, Megatron) runs 484-539 / 465-518 (0.62 of it).
ATTENTION_EFFICIENCY = {
    "flash2": {"H100": 0.40, "H800": 0.40, "H200": 0.40, "GH200": 0.40},
    "cudnn": {"H100": 0.62, "H800": 0.62, "H200": 0.62, "GH200": 0.62},
}
# A Hopper card whose tensor rate is cut without its CUDA cores (H20) gets the H100's kernel with
# its own balance. On H100 the kernel spends (1/efficiency - 1) of its matmul time on work outside
# the tensor cores (softmax's exp and rescaling on the CUDA cores and SFUs), which does not overlap
# in FlashAttention-2; that work scales with the card's FP32 vector rate, the matmuls with its matmul
# rate: efficiency = 1 / (1 + (1/e_H100 - 1) x (V_H100 / V) x (M / M_H100)). V: FP32 vector TFLOPS
# (H100 SXM 66.9, 132 SMs x 128 FMA x 2 x 1.98 GHz, glennklockwood.com "peak FLOPS"; H20 44,
# zangshuxian.com's spec list); M: the GEMM rate the card sustains (H100: MAMF's 794.5).
VECTOR_TFLOPS = {"H100": 66.9, "H20": 44.0}
H100_MATMUL_TFLOPS = 794.5
# Elsewhere: FlashAttention-2's own A100 figure (Ampere and Ada run its sm80 kernels); for
# Blackwell, AMD and Ascend no attention benchmark was found, so the same ratio is assumed [U].
DEFAULT_ATTENTION_EFFICIENCY = 0.69

# Share of the nameplate bandwidth memory-bound kernels reach, fitted with the GEMM efficiency
# (docs/sizing.md, "Calibration"); one figure for every GPU.
BANDWIDTH_EFFICIENCY = 0.9
# Host time to launch one operator from eager PyTorch (Python, dispatcher, autograd bookkeeping),
# fitted on the Qwen README's 256-1024-token rows, where it dominates (docs/sizing.md).
HOST_SECONDS_PER_OP = 10e-6

# Bytes per element of forward memory-bound traffic, counted from the code that runs.
# Hugging Face modelling (src/transformers/models/llama/modeling_llama.py): LlamaRMSNorm casts to
# fp32 (read 2, write 4), squares (4, 4), means (4), multiplies (4, 4), casts back (4, 2) and
# scales (2, 2): 36; apply_rotary_pos_emb: q * cos (2, 2), rotate_half's neg and cat (1+2, 1+2),
# * sin (2, 2), the sum (4, 2): 20 per q and k element; act_fn(gate) * up: (2, 2) + (4, 2) = 10
# per FFN element; a GeLU or LayerNorm is one native kernel (2, 2). Fused kernels (Liger,
# Unsloth's Triton kernels, Transformer Engine, torch.compile) read and write each tensor once:
# a norm 4, RoPE 4, the gated activation (4, 2) 6. Residual adds read two and write one: 6.
EAGER_NORM_BYTES = 36
EAGER_ROPE_BYTES = 20
EAGER_GATED_BYTES = 10
FUSED_NORM_BYTES = 4
FUSED_ROPE_BYTES = 4
FUSED_GATED_BYTES = 6
NATIVE_ELEMENTWISE_BYTES = 4  # nn.LayerNorm, GeLU
RESIDUAL_BYTES = 6
# Backward reads the saved input and the incoming gradient and writes the outgoing one: about
# twice the forward's bytes (a judgement; most element-wise backward kernels do exactly that).
BACKWARD_BYTES_FACTOR = 2.0
# Eager attention (no flash): per score, the QK^T output (write 2), scale (2, 2), mask add (2, 2),
# fp32 softmax (2, 4), its bf16 copy (4, 2) and the read by the PV product (2): 24 forward.
EAGER_SCORE_BYTES = 24
# A PEFT LoRA linear (peft/tuners/lora/layer.py, dropout 0 is an Identity): forward reads x for
# x @ A, writes B's output, scales it (read and write) and adds it to the base output: 2 d_in +
# 12 d_out bytes a token; backward: the scale and B's gradients read d_out three times, A's
# gradient reads x and the input gradient is written and accumulated: 10 d_in + 8 d_out. Unsloth's
# fast_lora accumulates into the base matmul's output (addmm_): 2 d_in + 4 d_out and 4 + 4.
LORA_EAGER_BYTES = ((2, 12), (10, 8))  # ((forward d_in, d_out), (backward d_in, d_out))
LORA_FUSED_BYTES = ((2, 4), (4, 4))
# Operators a decoder layer launches per pass, counted in LlamaDecoderLayer.forward: two norms (8
# each), q/k/v/o (4), RoPE (10), attention (3), two residual adds, the MLP's three linears and its
# activation and product: 40. Fused: one kernel per norm, RoPE and activation, the same linears:
# 15. A LoRA linear adds A, B, the scale and the add (fused: 2); an NF4 linear its dequantisation
# of the absmax and of the weight (2).
EAGER_LAYER_OPS = 40
FUSED_LAYER_OPS = 15
LORA_OPS = (4, 2)  # (eager, fused)
NF4_OPS = 2


def attention_forward_flops(spec: ModelSpec, seq_len: int) -> float:
    """Full-square forward FLOPs per token of the score and value products over all layers:
    2 x layers x seq x (Q width + attention output width), llm-foundry's and verl's convention."""
    return 2.0 * spec.layers * seq_len * (spec.q_dim + spec.attention_out_dim)


def elementwise_bytes_per_token(spec: ModelSpec, fused: bool) -> float:
    """Forward bytes of memory-bound work per token over all layers (norms, RoPE, activation,
    residual adds)."""
    total = 0.0
    rope = spec.learned_positions == 0
    for group in spec.layer_groups:
        if spec.rms_norm:
            norm = FUSED_NORM_BYTES if fused else EAGER_NORM_BYTES
        else:  # nn.LayerNorm (GPT-2, phi, GPT-J, GPT-NeoX): one native kernel
            norm = NATIVE_ELEMENTWISE_BYTES
        rope_bytes = (FUSED_ROPE_BYTES if fused else EAGER_ROPE_BYTES) * spec.rotary_fraction if rope else 0
        width = group.routed * group.ffn + group.shared_ffn
        if spec.mlp == "gelu":
            act = NATIVE_ELEMENTWISE_BYTES * width
        else:
            act = (FUSED_GATED_BYTES if fused else EAGER_GATED_BYTES) * width
        layer: float = spec.norms_per_layer * norm * spec.hidden + 2 * RESIDUAL_BYTES * spec.hidden + act
        layer += rope_bytes * (spec.q_dim + spec.kv_dim)
        total += group.count * layer
    return total


def lora_bytes_per_token(spec: ModelSpec, fused: bool, targets: tuple[str, ...]) -> tuple[float, float]:
    """(forward, backward) adapter traffic per token over all layers."""
    (fwd_in, fwd_out), (bwd_in, bwd_out) = LORA_FUSED_BYTES if fused else LORA_EAGER_BYTES
    forward = backward = 0.0
    for group in spec.layer_groups:
        for linear in group.linears:
            if linear.name == "router":
                continue
            if targets != ("all",) and linear.name.split(".")[-1] not in targets:
                continue
            count = group.routed if linear.routed else linear.count
            forward += group.count * count * (fwd_in * linear.d_in + fwd_out * linear.d_out)
            backward += group.count * count * (bwd_in * linear.d_in + bwd_out * linear.d_out)
    return forward, backward


def layer_ops(fused: bool, lora_linears: int, nf4_linears: int) -> int:
    """Operators one decoder layer launches in one pass."""
    eager_lora, fused_lora = LORA_OPS
    base = FUSED_LAYER_OPS if fused else EAGER_LAYER_OPS
    return base + (fused_lora if fused else eager_lora) * lora_linears + NF4_OPS * nf4_linears


def lora_linears(spec: ModelSpec, targets: tuple[str, ...]) -> int:
    """Adapted linears of one main-group layer (routed experts count once: one grouped launch)."""
    return sum(
        1
        for linear in spec.main_group.linears
        if linear.name != "router" and (targets == ("all",) or linear.name.split(".")[-1] in targets)
    )


def attention_efficiency(gpu: GpuSpec, kernel: str, matmul_flops_per_s: float) -> float:
    """Fraction of the GPU's matmul ceiling (`matmul_flops_per_s`) the attention kernel sustains:
    measured, derived from the H100's where the card has the H100's kernels with another balance of
    tensor and vector rates (VECTOR_TFLOPS), or the default."""
    efficiencies = ATTENTION_EFFICIENCY.get(kernel, {})
    measured = efficiencies.get(gpu.family)
    if measured is not None:
        return measured
    hopper = efficiencies.get("H100")
    if hopper is not None and gpu.family in VECTOR_TFLOPS:
        vector = VECTOR_TFLOPS["H100"] / VECTOR_TFLOPS[gpu.family]
        matmul = matmul_flops_per_s / (H100_MATMUL_TFLOPS * 1e12)
        return 1 / (1 + (1 / hopper - 1) * vector * matmul)
    return DEFAULT_ATTENTION_EFFICIENCY

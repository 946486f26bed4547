"""Throughput: what a micro-batch executes (sizing/kernels.py), the time of one step, and MFU.

A micro-batch on the busiest GPU costs its GEMM FLOPs at the GPU's dense peak x measured matmul
ceiling x GEMM efficiency, its flash-attention FLOPs at the attention kernel's rate, its
memory-bound bytes (element-wise work, LoRA adapters, eager scores, NF4 dequantisation) at the
sustained bandwidth, and the host time to launch its operators (added where the framework makes
the host wait on the GPU every layer, overlapped otherwise), plus the tensor-parallel collectives
its GEMMs do not hide and the pipeline's hand-offs. Data-parallel collectives (ZeRO/FSDP) overlap
with compute: a micro-batch takes the longer of its compute and its collectives, the last one
also hides the once-per-step ones. A pipeline adds (p - 1)/v micro-batch slots (the bubble of the
interleaved schedule with v virtual stages). The optimizer update and CPU offload traffic add on
top. MFU is reported on model FLOPs: the method's 6N-style count with causal attention at half the
s x s square (Megatron-Core's counter), without recompute, so recompute lowers MFU.
"""

from __future__ import annotations

from dataclasses import dataclass

from sizing import collectives, kernels
from sizing.activations import ACTIVATION_BYTES
from sizing.catalog import GpuSpec
from sizing.methods import NF4_DQ_BYTES_PER_PARAM, StateBytes
from sizing.parallel import DATA_PARALLEL, Layout, compute_share, stage_share
from sizing.setup import TrainingSetup
from sizing.shapes import ModelSpec

# Achievable BF16 matmul over dense peak, measured (MAMF finder, stas00/ml-engineering
# compute/accelerator/README.md, 744d01e1): A100 271.2/312, H100 794.5/989 ("H200 is the same"),
# GH200 828.6/989, B200 1745/2250, B300 1769/2250, GB200 1822/2500, MI300X 668.4/1300, MI325X
# 784.9/1300, MI355X 1565/2500 (the catalog's peak), Gaudi 2 418.7/432, Gaudi 3 1243/1677.
# A800/H800/H200/H20 share the silicon of A100/H100.
MATMUL_CEILING = {
    "A100": 271.2 / 312,
    "A800": 271.2 / 312,
    "H100": 794.5 / 989,
    "H800": 794.5 / 989,
    "H200": 794.5 / 989,
    "GH200": 828.6 / 989,
    "B200": 1745 / 2250,
    "B300": 1769 / 2250,
    "GB200": 1822 / 2500,
    "MI300X": 668.4 / 1300,
    "MI325X": 784.9 / 1300,
    "MI355X": 1565 / 2500,
    "Gaudi 2": 418.7 / 432,
    "Gaudi 3": 1243 / 1677,
}
# Cards without a measurement get the H100's ratio, the middle of the NVIDIA parts above.
# Ascend 910B has none against a known variant's peak (limulidae measured 328 TFLOPS of BF16
# matmul on a 910B whose variant it does not state), so it takes this default too.
DEFAULT_MATMUL_CEILING = 794.5 / 989
COLLECTIVE_EFFICIENCY = collectives.COLLECTIVE_EFFICIENCY


@dataclass(frozen=True)
class Work:
    """What one replica executes per micro-batch and per step, independent of the GPU model.
    FLOPs are per token; `memory_bytes_per_microbatch` is memory-bound traffic; `message_bytes`
    is one layer's activation (micro-batch x seq x hidden in bf16), the size of each
    tensor-parallel all-reduce and of each pipeline hand-off."""

    tokens_per_microbatch: int
    model_flops_per_token: float  # the method's FLOPs, causal attention at half, no recompute
    gemm_flops_per_token: float  # executed matmuls, recompute (and eager attention) included
    attention_flops_per_token: float  # executed flash-attention FLOPs, its backward's recompute in
    memory_bytes_per_microbatch: float
    host_ops_per_microbatch: float
    host_syncs: bool
    attention_kernel: str
    states: StateBytes
    grad_accum: int
    spec: ModelSpec
    message_bytes: float
    tp_collectives_per_layer: int
    sequence_parallel: bool
    accounting: str
    tp_comm_overlap: bool

    @property
    def hardware_flops_per_token(self) -> float:
        """Everything the GPU executes: GEMMs and attention kernels, recompute included."""
        return self.gemm_flops_per_token + self.attention_flops_per_token


def forward_flops_per_token(spec: ModelSpec, seq_len: int) -> tuple[float, float]:
    """(matmul, attention) forward FLOPs per token: 2 x active weights, and the full-square score
    and value products (MosaicML llm-foundry's benchmark formula, verl's counter; a causal kernel
    does `kernels.CAUSAL_FRACTION` of it)."""
    return 2.0 * spec.active_matmul_params_per_token, kernels.attention_forward_flops(spec, seq_len)


def _flops(
    spec: ModelSpec, method: str, setup: TrainingSetup, backward_layers: int, adapter_params: int
) -> tuple[float, float, float]:
    """(model, executed GEMM, executed flash-attention) FLOPs per token.

    Model: full = 3 x forward (6N + causal attention); lora/qlora: no weight gradients for the
    frozen base, 4N + 3 x attention + 6 per adapter parameter; freeze: forward through
    everything, backward through the LM head (input gradients) and the trained layers. Executed:
    full checkpointing (and offload) re-runs the forward of every layer backward passes through;
    a flash kernel's backward recomputes the scores (2.5 forward passes); without flash the score
    and value products are GEMMs over the full square, backward twice forward, and selective
    recompute re-runs them.
    """
    matmul, full_square = forward_flops_per_token(spec, setup.seq_len)
    head = 2.0 * spec.vocab * spec.hidden
    layer_matmul = (matmul - head) / spec.layers
    attention = kernels.CAUSAL_FRACTION * full_square
    share = backward_layers / spec.layers  # the layers backward runs through
    if method in ("full", "full-bf16"):
        model_matmul = 3 * matmul
    elif method in ("lora", "qlora"):
        model_matmul = 2 * matmul + 6.0 * adapter_params
    else:
        model_matmul = matmul + head + backward_layers * 2 * layer_matmul
    model = model_matmul + attention * (1 + 2 * share)
    recomputes = setup.checkpointing in ("full", "offload")
    gemm = model_matmul + (backward_layers * layer_matmul if recomputes else 0.0)
    if setup.flash_attention:
        passes = 1 + kernels.FLASH_BACKWARD_PASSES * share + (share if recomputes else 0.0)
        return model, gemm, attention * passes
    reruns = recomputes or setup.checkpointing == "selective"
    gemm += full_square * (1 + 2 * share + (share if reruns else 0.0))
    return model, gemm, 0.0


def _memory_bytes(
    spec: ModelSpec, method: str, setup: TrainingSetup, backward_layers: int, fused: bool
) -> float:
    """Memory-bound bytes of one micro-batch: element-wise work, LoRA adapters, eager attention's
    scores, NF4 dequantisation."""
    tokens = setup.seq_len * setup.micro_batch
    share = backward_layers / spec.layers
    recomputes = setup.checkpointing in ("full", "offload")
    forward_passes = 1 + (share if recomputes else 0.0)
    backward = kernels.BACKWARD_BYTES_FACTOR * share
    total = tokens * kernels.elementwise_bytes_per_token(spec, fused) * (forward_passes + backward)
    if method in ("lora", "qlora"):
        forward, back = kernels.lora_bytes_per_token(spec, fused, tuple(setup.lora_targets))
        total += tokens * (forward * forward_passes + back)
    if not setup.flash_attention:
        scores = kernels.EAGER_SCORE_BYTES * spec.heads * setup.seq_len * spec.layers
        reruns = recomputes or setup.checkpointing == "selective"
        total += tokens * scores * (1 + kernels.BACKWARD_BYTES_FACTOR * share + (share if reruns else 0.0))
    if method == "qlora":
        passes = 2 + (1 if recomputes else 0)
        total += passes * spec.decoder_linear_params * (NF4_DQ_BYTES_PER_PARAM + 2)
    return total


def work(
    spec: ModelSpec,
    method: str,
    setup: TrainingSetup,
    states: StateBytes,
    backward_layers: int,
    adapter_params: int,
) -> Work:
    """FLOPs, bytes and launches per micro-batch for a method under a setup."""
    model, gemm, attention = _flops(spec, method, setup, backward_layers, adapter_params)
    fused = setup.uses_fused_kernels
    recomputes = setup.checkpointing in ("full", "offload")
    adapted = kernels.lora_linears(spec, tuple(setup.lora_targets)) if method in ("lora", "qlora") else 0
    nf4 = kernels.lora_linears(spec, ("all",)) if method == "qlora" else 0
    passes = spec.layers + backward_layers * (2 if recomputes else 1)
    tokens = setup.seq_len * setup.micro_batch
    return Work(
        tokens_per_microbatch=tokens,
        model_flops_per_token=model,
        gemm_flops_per_token=gemm,
        attention_flops_per_token=attention,
        memory_bytes_per_microbatch=_memory_bytes(spec, method, setup, backward_layers, fused),
        host_ops_per_microbatch=passes * kernels.layer_ops(fused, adapted, nf4),
        host_syncs=setup.profile.host_syncs,
        attention_kernel=setup.profile.attention_kernel,
        states=states,
        grad_accum=setup.grad_accum,
        spec=spec,
        message_bytes=ACTIVATION_BYTES * tokens * spec.hidden,
        # Megatron's f/g operators: two all-reduces forward, two backward, two more when a
        # recomputed forward runs again (Narayanan §3.2; Korthikanti §4.1 for SP's
        # all-gather/reduce-scatter pairs, which move the same bytes).
        tp_collectives_per_layer=4 + (2 if recomputes else 0),
        sequence_parallel=setup.uses_sequence_parallel,
        accounting=setup.sharded_accounting,
        tp_comm_overlap=setup.overlaps_tp_comm,
    )


def _model_parallel_seconds(
    w: Work, gpu: GpuSpec, layout: Layout, internode_gb_per_s: float, gemm_seconds: float, virtual: int
) -> float:
    """Exposed seconds per micro-batch of TP collectives and pipeline hand-offs. Overlapped TP
    collectives (Transformer Engine's userbuffers, Megatron's --tp-comm-overlap) hide behind the
    layer's GEMMs; what does not fit behind them stays exposed."""
    seconds = 0.0
    tp = layout.tp
    if tp > 1:
        per_layer = w.tp_collectives_per_layer * 2 * (tp - 1) / tp * w.message_bytes
        bandwidth = collectives.collective_gb_per_s(gpu, tp, internode_gb_per_s) * 1e9
        comm = layout.layers_per_stage(w.spec) * per_layer / bandwidth
        seconds += max(0.0, comm - gemm_seconds) if w.tp_comm_overlap else comm
    if layout.pp > 1:
        # One activation forward and one gradient backward per boundary, sequence-split with SP;
        # across nodes once TP x PP outgrows one; each virtual stage is a boundary of its own.
        message = w.message_bytes / (tp if w.sequence_parallel else 1)
        spans_nodes = layout.model_parallel > gpu.gpus_per_node
        link = internode_gb_per_s if spans_nodes else gpu.interconnect_gb_per_s / 2
        seconds += 2 * virtual * message / (link * COLLECTIVE_EFFICIENCY * 1e9)
    return seconds


def microbatch_seconds(
    w: Work,
    gpu: GpuSpec,
    stack_efficiency: float,
    internode_gb_per_s: float,
    layout: Layout = DATA_PARALLEL,
    virtual: int = 1,
) -> float:
    """Seconds of one micro-batch on the busiest GPU (the last pipeline stage, one TP shard)."""
    peak = gpu.bf16_dense_tflops * 1e12
    ceiling = MATMUL_CEILING.get(gpu.family, DEFAULT_MATMUL_CEILING)
    matmul_share = 1.0 if layout.model_parallel == 1 else compute_share(w.spec, layout)
    layer_share = layout.layers_per_stage(w.spec) / w.spec.layers / layout.tp
    tokens = w.tokens_per_microbatch
    gemm = tokens * w.gemm_flops_per_token * matmul_share / (peak * ceiling * stack_efficiency)
    attention_rate = peak * ceiling * kernels.attention_efficiency(gpu, w.attention_kernel)
    attention = tokens * w.attention_flops_per_token * layer_share / attention_rate
    memory = (
        w.memory_bytes_per_microbatch
        * layer_share
        / (gpu.memory_bandwidth_gb_per_s * 1e9 * kernels.BANDWIDTH_EFFICIENCY)
    )
    device = gemm + attention + memory
    host = (
        w.host_ops_per_microbatch
        * kernels.HOST_SECONDS_PER_OP
        * layout.layers_per_stage(w.spec)
        / w.spec.layers
    )
    compute = device + host if w.host_syncs else max(device, host)
    return compute + _model_parallel_seconds(w, gpu, layout, internode_gb_per_s, gemm, virtual)


@dataclass(frozen=True)
class LayoutTiming:
    """What a step's time takes from one GPU model and layout whatever the count and stage: one
    micro-batch's seconds, the virtual pipeline stages per GPU and the share of the model's states
    one GPU of the first stage holds (1 without model parallelism)."""

    microbatch: float
    virtual: int
    share: float


def layout_timing(
    w: Work, gpu: GpuSpec, setup: TrainingSetup, layout: Layout = DATA_PARALLEL
) -> LayoutTiming:
    """The count-independent part of `step_seconds` on this GPU and layout under a setup."""
    virtual = setup.virtual_stages_for(w.spec.layers, layout.pp)
    microbatch = microbatch_seconds(w, gpu, setup.efficiency, setup.internode_gb_per_s, layout, virtual)
    return LayoutTiming(microbatch, virtual, _first_stage_share(w, layout))


def _first_stage_share(w: Work, layout: Layout) -> float:
    return 1.0 if layout.model_parallel == 1 else stage_share(w.spec, layout, True)


def step_seconds(
    w: Work,
    gpu: GpuSpec,
    gpu_count: int,
    stage: int,
    offload: str,
    stack_efficiency: float,
    internode_gb_per_s: float,
    layout: Layout = DATA_PARALLEL,
    virtual: int = 1,
) -> float:
    """Seconds for one optimizer step (grad_accum micro-batches) on each of `gpu_count` GPUs;
    `virtual` pipeline stages per GPU (1: plain 1F1B)."""
    microbatch = microbatch_seconds(w, gpu, stack_efficiency, internode_gb_per_s, layout, virtual)
    timing = LayoutTiming(microbatch, virtual, _first_stage_share(w, layout))
    return _step_seconds(w, gpu, gpu_count, stage, offload, internode_gb_per_s, layout, timing)


def _step_seconds(
    w: Work,
    gpu: GpuSpec,
    gpu_count: int,
    stage: int,
    offload: str,
    internode_gb_per_s: float,
    layout: Layout,
    timing: LayoutTiming,
) -> float:
    microbatch, virtual, share = timing.microbatch, timing.virtual, timing.share
    memory_bytes_per_s = gpu.memory_bandwidth_gb_per_s * 1e9
    states = w.states
    dp = layout.dp(gpu_count)
    per_microbatch, per_step = collectives.comm_bytes(states, stage, dp, w.accounting, share)
    bandwidth = collectives.collective_gb_per_s(gpu, gpu_count, internode_gb_per_s) * 1e9
    comm_microbatch, comm_step = per_microbatch / bandwidth, per_step / bandwidth
    # Each micro-batch hides its own collectives behind its compute; the once-per-step ones
    # (gradient sync, weight all-gather) can only hide behind the last micro-batch.
    step = (w.grad_accum - 1) * max(microbatch, comm_microbatch) + max(
        microbatch, comm_microbatch + comm_step
    )
    # The 1F1B bubble: (m + p - 1) slots for m micro-batches, (p - 1)/v with v virtual stages.
    step += (layout.pp - 1) / virtual * microbatch

    # The update runs on this GPU's shard: its share of the model over its ZeRO partitions.
    n_opt = (dp if stage >= 1 else 1) / share
    optimizer_shard = states.optimizer / n_opt
    if offload == "none":
        # Memory-bound update: read gradients, read and write the states.
        step += (2 * optimizer_shard + states.gradients / n_opt) / memory_bytes_per_s
    else:
        host = collectives.host_link_gb_per_s(gpu) * 1e9
        # Gradients down and 16-bit weights back up, then the update on the host.
        step += (states.gradients + 2 * states.trainable_params) / n_opt / host
        nodes = -(-gpu_count // gpu.gpus_per_node)
        step += 2 * states.optimizer / nodes / (collectives.CPU_MEMORY_GB_PER_S * 1e9)
        if offload == "all":  # weights come from the host for forward and backward
            step += w.grad_accum * 2 * states.weights / gpu_count / host
    return step


def tokens_per_second(
    w: Work,
    gpu: GpuSpec,
    gpu_count: int,
    stage: int,
    setup: TrainingSetup,
    layout: Layout = DATA_PARALLEL,
    timing: LayoutTiming | None = None,
) -> tuple[float, float]:
    """(tokens per second over all GPUs, MFU). With `setup.mfu` given, that MFU is taken as
    is and the time model is skipped. `timing`: `layout_timing` of this GPU and layout, if known
    (the planner keeps one per GPU model and layout)."""
    peak_all = gpu.bf16_dense_tflops * 1e12 * gpu_count
    if setup.mfu is not None:
        return peak_all * setup.mfu / w.model_flops_per_token, setup.mfu
    if timing is None:
        timing = layout_timing(w, gpu, setup, layout)
    seconds = _step_seconds(w, gpu, gpu_count, stage, setup.offload, setup.internode_gb_per_s, layout, timing)
    tokens = layout.dp(gpu_count) * w.grad_accum * w.tokens_per_microbatch / seconds
    return tokens, tokens * w.model_flops_per_token / peak_all

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

A catalog's rows ask the same layouts and GPUs at many counts: `StepClock` keeps each layout's
share of a micro-batch (`LayoutWork`) and each GPU's time for it; only the step is per count.
"""

from __future__ import annotations

from collections.abc import Sequence
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
# Cards without a measurement whose tensor rate sits below what their power budget sustains hold
# their boost clock through a GEMM, so only the kernel pipeline costs: the A100 holds 1305 of its
# 1410 MHz at its 400 W limit (the clock NVIDIA quotes its HPL Rpeak at, glennklockwood.com "peak
# FLOPS") and reaches 0.869 of peak there, so its pipeline runs at 0.869 x 1410/1305 = 0.939 of a
# full clock. The A100 throttles at 312/400 = 0.78 dense TFLOPS a board watt, the H100 at 1.41; a
# card of the A100's kernel lineage (Ampere, Ada, Hopper: the sm80-style tensor-core pipeline
# cuBLAS runs on all three) below 0.78 TFLOPS a watt takes the 0.939. Cross-check: cuBLAS HGEMM on
# an L20 reaches 105-115 of its 119.5 TFLOPS (DefTruth/CUDA-Learn-Notes hgemm README).
UNTHROTTLED_MATMUL_CEILING = 271.2 / 312 * 1410 / 1305
A100_THROTTLE_TFLOPS_PER_WATT = 312 / 400
# Board power (W) of the catalog's Ampere, Ada and Hopper cards without a measurement, from NVIDIA's
# product pages and datasheets: GeForce RTX 3090 350, RTX 4090 450, RTX 4090 D 425, RTX 4080 and
# 4080 SUPER 320; RTX A4000 140, A5000 230, A6000 300; RTX 2000 Ada 70, 4000 Ada 130, 6000 Ada 300;
# A10 150, A40 300, L4 72, L20 275, L40 300, L40S 350; H20 400.
BOARD_POWER_W = {
    "RTX 3090": 350,
    "RTX 4090": 450,
    "RTX 4090D": 425,
    "RTX 4080": 320,
    "RTX 4080 SUPER": 320,
    "RTX A4000": 140,
    "RTX A5000": 230,
    "RTX A6000": 300,
    "RTX 2000 Ada": 70,
    "RTX 4000 Ada": 130,
    "RTX 6000 Ada": 300,
    "A10": 150,
    "A40": 300,
    "L4": 72,
    "L20": 275,
    "L40": 300,
    "L40S": 350,
    "H20": 400,
}
# Other cards get the H100's ratio, the middle of the NVIDIA parts above: those of the lineage past
# the A100's throttle point (RTX 6000 Ada 1.21, L4 1.68, L40S 1.03, A10 0.83 TFLOPS a watt: how far
# they throttle needs a measurement), Volta and Turing (another tensor-core pipeline), consumer
# Blackwell, AMD's MI250 and Ascend. Ascend 910B has none against a known variant's peak
# (limulidae measured 328 TFLOPS of BF16 matmul on a 910B whose variant it does not state).
DEFAULT_MATMUL_CEILING = 794.5 / 989


def holds_clock(gpu: GpuSpec) -> bool:
    """Whether the card's GEMMs run at its boost clock: an Ampere, Ada or Hopper card of known
    board power whose dense rate per watt is under the A100's throttle point."""
    watts = BOARD_POWER_W.get(gpu.family)
    return watts is not None and gpu.bf16_dense_tflops / watts < A100_THROTTLE_TFLOPS_PER_WATT


COLLECTIVE_EFFICIENCY = collectives.COLLECTIVE_EFFICIENCY
# Transformer Engine's userbuffers (Megatron's --tp-comm-overlap, sequence parallel) overlap each
# collective with a GEMM by its default config (transformer_engine/pytorch/module/base.py,
# `initialize_ub`): the all-gathers before QKV and FC1 (and of the gradients before the projection's
# and FC2's dgrad) as "ring_exchange" in TP chunks, the backward reduce-scatters and input gathers
# "bulk" behind the other backward GEMM, and the reduce-scatters after the projection and FC2 in
# forward as "pipeline" with num_splits 4: each chunk's reduce-scatter runs behind the next chunk's
# GEMM, so the last chunk's stays exposed: 1/4 of those reduce-scatters' bytes.
TE_PIPELINE_SPLITS = 4


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


def idle_expert_params(spec: ModelSpec) -> int:
    """Expert weights a token does not route through (all experts but its experts_per_token), over
    every layer: what a dense loop over all experts multiplies it through besides."""
    return sum(
        group.count
        * sum(
            linear.d_in * linear.d_out * (linear.count - group.routed)
            for linear in group.linears
            if linear.routed
        )
        for group in spec.layer_groups
    )


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
    if spec.experts_run_dense and not setup.profile.grouped_experts:
        # every pass through the experts multiplies every token through all of them: the forward,
        # backward's input gradients (and weight gradients in full training) where backward runs,
        # the recomputed forward
        weight_gradients = method in ("full", "full-bf16", "freeze")
        passes = 1 + share * (2 if weight_gradients else 1) + (share if recomputes else 0.0)
        gemm += passes * 2.0 * idle_expert_params(spec)
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


@dataclass(frozen=True)
class LayoutWork:
    """A micro-batch on the busiest GPU of a layout (the last pipeline stage, one TP shard) before
    any GPU's rates: its GEMM and attention FLOPs, memory-bound bytes, host seconds, the bytes of
    its TP collectives and pipeline hand-offs; and what else a step takes from the layout, its
    `virtual` pipeline stages per GPU and the first stage's `share` of the model states."""

    layout: Layout
    gemm_flops: float
    attention_flops: float
    memory_bytes: float
    host_seconds: float
    tp_bytes: float
    handoff_bytes: float
    virtual: int
    share: float


def layout_work(w: Work, layout: Layout = DATA_PARALLEL, virtual: int = 1) -> LayoutWork:
    """What a micro-batch costs one GPU of this layout, whatever the GPU and the count."""
    spec, tp, tokens = w.spec, layout.tp, w.tokens_per_microbatch
    stage_layers = layout.layers_per_stage(spec)
    split = layout.model_parallel > 1
    layer_share = stage_layers / spec.layers / tp
    per_layer = w.tp_collectives_per_layer * 2 * (tp - 1) / tp * w.message_bytes
    # One activation forward and one gradient backward per boundary, sequence-split with SP; each
    # virtual stage is a boundary of its own.
    message = w.message_bytes / (tp if w.sequence_parallel else 1)
    return LayoutWork(
        layout=layout,
        gemm_flops=tokens * w.gemm_flops_per_token * (compute_share(spec, layout) if split else 1.0),
        attention_flops=tokens * w.attention_flops_per_token * layer_share,
        memory_bytes=w.memory_bytes_per_microbatch * layer_share,
        host_seconds=w.host_ops_per_microbatch * kernels.HOST_SECONDS_PER_OP * stage_layers / spec.layers,
        tp_bytes=stage_layers * per_layer,  # (t - 1)/t: none at TP 1
        handoff_bytes=2 * virtual * message if layout.pp > 1 else 0.0,
        virtual=virtual,
        share=stage_share(spec, layout, True) if split else 1.0,
    )


@dataclass(frozen=True)
class GpuRates:
    """What one GPU model sustains under a stack: GEMM and flash-attention FLOP/s, memory-bound
    bytes/s."""

    gemm_flops_per_s: float
    attention_flops_per_s: float
    bytes_per_s: float


def matmul_ceiling(gpu: GpuSpec) -> float:
    """Share of the dense peak a BF16 GEMM sustains on this GPU: measured, derived from its power
    budget (`holds_clock`), or the default."""
    measured = MATMUL_CEILING.get(gpu.family)
    if measured is not None:
        return measured
    return UNTHROTTLED_MATMUL_CEILING if holds_clock(gpu) else DEFAULT_MATMUL_CEILING


def gpu_rates(gpu: GpuSpec, stack_efficiency: float, attention_kernel: str) -> GpuRates:
    """The GPU's dense peak x its measured matmul ceiling, at the stack's GEMM efficiency and
    at the attention kernel's; its bandwidth at the sustained fraction."""
    ceiling = gpu.bf16_dense_tflops * 1e12 * matmul_ceiling(gpu)
    return GpuRates(
        gemm_flops_per_s=ceiling * stack_efficiency,
        attention_flops_per_s=ceiling * kernels.attention_efficiency(gpu, attention_kernel, ceiling),
        bytes_per_s=gpu.memory_bandwidth_gb_per_s * 1e9 * kernels.BANDWIDTH_EFFICIENCY,
    )


def pipelined_tail(w: Work) -> float:
    """Share of a layer's TP bytes an overlapped schedule leaves exposed however long its GEMMs:
    the last of TE_PIPELINE_SPLITS chunks of the reduce-scatters after the projection and FC2. Each
    forward pass has two all-reduce equivalents (an all-gather and a reduce-scatter each), backward
    two; so per forward pass one all-reduce's bytes are those two reduce-scatters."""
    forward_passes = w.tp_collectives_per_layer // 2 - 1
    return forward_passes / w.tp_collectives_per_layer / TE_PIPELINE_SPLITS


def microbatch_seconds(
    w: Work, gpu: GpuSpec, rates: GpuRates, lw: LayoutWork, internode_gb_per_s: float
) -> float:
    """Seconds of one micro-batch of `lw` on `gpu` at its `rates`. Overlapped TP collectives
    (Transformer Engine's userbuffers, Megatron's --tp-comm-overlap) hide behind the layer's
    GEMMs; what does not fit behind them stays exposed, and never less than the pipelined
    reduce-scatters' last chunk (`pipelined_tail`). Hand-offs cross nodes once TP x PP
    outgrows one."""
    layout = lw.layout
    gemm = lw.gemm_flops / rates.gemm_flops_per_s
    device = gemm + lw.attention_flops / rates.attention_flops_per_s + lw.memory_bytes / rates.bytes_per_s
    compute = device + lw.host_seconds if w.host_syncs else max(device, lw.host_seconds)
    exposed = 0.0
    if layout.tp > 1:
        comm = lw.tp_bytes / (collectives.collective_gb_per_s(gpu, layout.tp, internode_gb_per_s) * 1e9)
        # Transformer Engine's userbuffers are CUDA kernels; MindSpeed's counterpart (MC2) is opt-in
        overlapped = w.tp_comm_overlap and gpu.runs_cuda
        exposed += max(pipelined_tail(w) * comm, comm - gemm) if overlapped else comm
    # pipeline hand-offs (none without a pipeline: layout_work gives them no bytes)
    spans_nodes = layout.model_parallel > gpu.gpus_per_node
    link = internode_gb_per_s if spans_nodes else gpu.interconnect_gb_per_s / 2
    exposed += lw.handoff_bytes / (link * COLLECTIVE_EFFICIENCY * 1e9)
    return compute + exposed


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
    lw, rates = layout_work(w, layout, virtual), gpu_rates(gpu, stack_efficiency, w.attention_kernel)
    microbatch = microbatch_seconds(w, gpu, rates, lw, internode_gb_per_s)
    return _step_seconds(w, gpu, gpu_count, stage, offload, internode_gb_per_s, microbatch, lw)


@dataclass(frozen=True)
class DataParallelWork:
    """What data parallelism adds to a step of one layout at one ZeRO stage and replica count,
    whatever the GPU: each GPU's collective bytes per micro-batch and per step, and the
    partitions its optimizer update is split over."""

    comm_microbatch_bytes: float
    comm_step_bytes: float
    optimizer_partitions: float


def data_parallel_work(w: Work, lw: LayoutWork, stage: int, dp: int) -> DataParallelWork:
    per_microbatch, per_step = collectives.comm_bytes(w.states, stage, dp, w.accounting, lw.share)
    # The update runs on this GPU's shard: its share of the model over its ZeRO partitions.
    return DataParallelWork(per_microbatch, per_step, (dp if stage >= 1 else 1) / lw.share)


def _step_seconds(
    w: Work,
    gpu: GpuSpec,
    gpu_count: int,
    stage: int,
    offload: str,
    internode_gb_per_s: float,
    microbatch: float,
    lw: LayoutWork,
) -> float:
    bandwidth = collectives.collective_gb_per_s(gpu, gpu_count, internode_gb_per_s) * 1e9
    parts = data_parallel_work(w, lw, stage, lw.layout.dp(gpu_count))
    return _step_time(w, gpu, gpu_count, offload, microbatch, lw, parts, bandwidth)


def _step_time(
    w: Work,
    gpu: GpuSpec,
    gpu_count: int,
    offload: str,
    microbatch: float,
    lw: LayoutWork,
    parts: DataParallelWork,
    bandwidth: float,
) -> float:
    """`_step_seconds` with the GPU-independent `parts` and the collectives' `bandwidth` (B/s)
    given, as StepClock keeps them."""
    comm_microbatch, comm_step = parts.comm_microbatch_bytes / bandwidth, parts.comm_step_bytes / bandwidth
    # Each micro-batch hides its own collectives behind its compute; the once-per-step ones
    # (gradient sync, weight all-gather) can only hide behind the last micro-batch.
    step = (w.grad_accum - 1) * max(microbatch, comm_microbatch) + max(
        microbatch, comm_microbatch + comm_step
    )
    # The 1F1B bubble: (m + p - 1) slots for m micro-batches, (p - 1)/v with v virtual stages.
    step += (lw.layout.pp - 1) / lw.virtual * microbatch

    states, n_opt = w.states, parts.optimizer_partitions
    optimizer_shard = states.optimizer / n_opt
    if offload == "none":
        # Memory-bound update: read gradients, read and write the states.
        step += (2 * optimizer_shard + states.gradients / n_opt) / (gpu.memory_bandwidth_gb_per_s * 1e9)
    else:
        host = collectives.host_link_gb_per_s(gpu) * 1e9
        # Gradients down and 16-bit weights back up, then the update on the host.
        step += (states.gradients + 2 * states.trainable_params) / n_opt / host
        nodes = -(-gpu_count // gpu.gpus_per_node)
        step += 2 * states.optimizer / nodes / (collectives.CPU_MEMORY_GB_PER_S * 1e9)
        if offload == "all":  # weights come from the host for forward and backward
            step += w.grad_accum * 2 * states.weights / gpu_count / host
    return step


class StepClock:
    """The time model of one Work under one setup, keeping what the GPU count does not change
    (the planner asks for every catalog GPU at every count): each layout's LayoutWork and each
    (GPU model, layout)'s micro-batch."""

    def __init__(self, w: Work, setup: TrainingSetup) -> None:
        self.work, self.setup = w, setup
        self._layouts: dict[Layout, LayoutWork] = {}
        self._microbatches: dict[tuple[str, Layout], tuple[float, LayoutWork, float]] = {}
        self._rates: dict[str, GpuRates] = {}
        self._parts: dict[tuple[Layout, int, int], DataParallelWork] = {}
        self._bandwidths: dict[tuple[str, int], float] = {}

    def tokens_per_second(
        self, gpu: GpuSpec, gpu_count: int, stage: int, layout: Layout = DATA_PARALLEL
    ) -> tuple[float, float]:
        """(tokens per second over all GPUs, MFU). With `setup.mfu` given, that MFU is taken as
        is and the time model is skipped."""
        return self.stage_rates(gpu, gpu_count, layout, (stage,))[0]

    def stage_rates(
        self, gpu: GpuSpec, gpu_count: int, layout: Layout, stages: Sequence[int]
    ) -> list[tuple[float, float]]:
        """`tokens_per_second` of each of `stages` under one layout, sharing what they share."""
        w, setup = self.work, self.setup
        peak_all = gpu.bf16_dense_tflops * 1e12 * gpu_count
        if setup.mfu is not None:
            return [(peak_all * setup.mfu / w.model_flops_per_token, setup.mfu)] * len(stages)
        microbatch, lw, _ = self._microbatch(gpu, layout)
        dp = layout.dp(gpu_count)
        bandwidth = self._bandwidth(gpu, gpu_count)
        step_tokens = dp * w.grad_accum * w.tokens_per_microbatch
        rates = []
        for stage in stages:
            key = (layout, stage, dp)
            parts = self._parts.get(key)
            if parts is None:
                parts = self._parts[key] = data_parallel_work(w, lw, stage, dp)
            tokens = step_tokens / _step_time(
                w, gpu, gpu_count, setup.offload, microbatch, lw, parts, bandwidth
            )
            rates.append((tokens, tokens * w.model_flops_per_token / peak_all))
        return rates

    def tokens_bounds(self, gpu: GpuSpec, gpu_count: int, layouts: Sequence[Layout]) -> list[float]:
        """A ceiling on `tokens_per_second` at any stage of each layout: the step's micro-batches
        and bubble alone, as if every collective hid and the update took no time (each term
        `_step_time` adds is at least zero). With `setup.mfu` given, the figures themselves."""
        if self.setup.mfu is not None:
            return [self.tokens_per_second(gpu, gpu_count, 0, layout)[0] for layout in layouts]
        return [layout.dp(gpu_count) * self._microbatch(gpu, layout)[2] for layout in layouts]

    def _bandwidth(self, gpu: GpuSpec, gpu_count: int) -> float:
        """Bytes per second of the data-parallel collectives at this count (cached)."""
        bandwidth = self._bandwidths.get((gpu.gpu_model, gpu_count))
        if bandwidth is None:
            bandwidth = collectives.collective_gb_per_s(gpu, gpu_count, self.setup.internode_gb_per_s) * 1e9
            self._bandwidths[gpu.gpu_model, gpu_count] = bandwidth
        return bandwidth

    def _microbatch(self, gpu: GpuSpec, layout: Layout) -> tuple[float, LayoutWork, float]:
        """(seconds, LayoutWork, tokens per second of one replica at most) of a micro-batch of
        this layout on this GPU (cached)."""
        key = (gpu.gpu_model, layout)
        known = self._microbatches.get(key)
        if known is None:
            w, setup = self.work, self.setup
            lw = self._layouts.get(layout)
            if lw is None:
                lw = self._layouts[layout] = layout_work(
                    w, layout, setup.virtual_stages_for(w.spec.layers, layout.pp)
                )
            rates = self._rates.get(gpu.gpu_model)
            if rates is None:
                rates = self._rates[gpu.gpu_model] = gpu_rates(gpu, setup.efficiency, w.attention_kernel)
            microbatch = microbatch_seconds(w, gpu, rates, lw, setup.internode_gb_per_s)
            seconds = (w.grad_accum + (layout.pp - 1) / lw.virtual) * microbatch
            known = self._microbatches[key] = (
                microbatch,
                lw,
                w.grad_accum * w.tokens_per_microbatch / seconds,
            )
        return known


def tokens_per_second(
    w: Work,
    gpu: GpuSpec,
    gpu_count: int,
    stage: int,
    setup: TrainingSetup,
    layout: Layout = DATA_PARALLEL,
) -> tuple[float, float]:
    """(tokens per second over all GPUs, MFU) of one configuration (`StepClock` for many)."""
    return StepClock(w, setup).tokens_per_second(gpu, gpu_count, stage, layout)

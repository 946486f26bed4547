"""Throughput: FLOPs per token, a utilisation prior per GPU, and the time of one step.

A step is `grad_accum` micro-batches per data-parallel replica. Each micro-batch costs the
busiest GPU's share of its FLOPs at the GPU's dense peak x matmul ceiling x stack efficiency x
method efficiency, plus QLoRA's dequantisation (memory-bound), plus the tensor-parallel
all-reduces of its layers and the pipeline's activation hand-offs, which sit on the critical
path. Data-parallel collectives (ZeRO/FSDP) overlap with compute: a micro-batch takes the longer
of its compute and its collectives, the last one also hides the once-per-step collectives. A
pipeline adds (p - 1) micro-batch slots (the bubble). The optimizer update and CPU offload
traffic add on top. MFU is reported on the method's model FLOPs (without recompute), so
recompute lowers MFU as it should.
"""

from __future__ import annotations

from dataclasses import dataclass

from sizing.activations import ACTIVATION_BYTES
from sizing.catalog import GpuSpec
from sizing.methods import NF4_DQ_BYTES_PER_PARAM, StateBytes
from sizing.parallel import DATA_PARALLEL, Layout, compute_share, stage_share
from sizing.setup import TrainingSetup
from sizing.shapes import ModelSpec

# Achievable BF16 matmul over dense peak, measured (MAMF finder, stas00/ml-engineering
# compute/accelerator/README.md, 2026-08): A100 271.2/312, H100 794.5/989 ("H200 is the
# same"), GH200 828.6/989, B200 1745/2250, MI300X 668.4/1300. A800/H800/H200 share the
# silicon of A100/H100.
MATMUL_CEILING = {
    "A100": 271.2 / 312,
    "A800": 271.2 / 312,
    "H100": 794.5 / 989,
    "H800": 794.5 / 989,
    "H200": 794.5 / 989,
    "GH200": 828.6 / 989,
    "B200": 1745 / 2250,
    "MI300X": 668.4 / 1300,
}
# Cards without a measurement get the H100's ratio, the middle of the NVIDIA parts above.
# Ascend 910B has none against a known variant's peak (limulidae measured 328 TFLOPS of BF16
# matmul on a 910B whose variant it does not state), so it takes this default too.
DEFAULT_MATMUL_CEILING = 794.5 / 989
# LoRA trains 25% faster than full fine-tuning on GPT-3 (Hu et al., arXiv 2106.09685) while
# doing a third fewer FLOPs (4N instead of 6N): it runs at 1.25/1.5 of full's efficiency
# (small adapter kernels, extra launches).
LORA_EFFICIENCY = 1.25 / 1.5
# nccl-tests reach about 80% of the advertised one-direction bandwidth (ml-engineering
# network notes, sizing.md §4).
COLLECTIVE_EFFICIENCY = 0.8
# Ascend HCCS: intra-node all_reduce bus bandwidth measured at 2, 4 and 8 NPUs
# (gameofdimension/limulidae README: 18 / 30 / 72 GB/s, against A800's 143 / 104 / 89), used
# as is instead of the aggregate link figure, which HCCS's full mesh never delivers to one ring.
HCCS_BUS_GB_PER_S = ((2, 18.0), (4, 30.0), (8, 72.0))
# Host link, one direction, for CPU offload and for NVLink-bridge cards past their pair:
# PCIe 3.0/4.0/5.0 x16 carry 16/32/64 GB/s per direction (sizing.md §4); GH200 reaches its
# Grace CPU over NVLink-C2C (900 GB/s both directions).
HOST_LINK_GB_PER_S = {
    "V100": 16.0,
    "H100": 64.0,
    "H800": 64.0,
    "H200": 64.0,
    "H20": 64.0,
    "B200": 64.0,
    "MI300X": 64.0,
    "RTX 5090": 64.0,
    "GH200": 450.0,
}
DEFAULT_HOST_LINK_GB_PER_S = 32.0  # PCIe 4.0 x16
# Sustained DRAM bandwidth of a rented GPU server's CPUs for the offloaded optimizer step;
# dual-socket servers reach 100-300 GB/s, rented hosts are often the low end.
CPU_MEMORY_GB_PER_S = 100.0


@dataclass(frozen=True)
class Work:
    """What one replica does per micro-batch and per step, independent of the GPU model.
    `message_bytes` is one layer's activation (micro-batch x seq x hidden in bf16), the size
    of each tensor-parallel all-reduce and of each pipeline hand-off."""

    tokens_per_microbatch: int
    model_flops_per_token: float  # the method's FLOPs, without recompute
    hardware_flops_per_token: float  # what the GPU executes, recompute included
    method_efficiency: float
    dequant_bytes_per_microbatch: float  # QLoRA: NF4 read + bf16 write per pass
    states: StateBytes
    grad_accum: int
    spec: ModelSpec
    message_bytes: float
    tp_collectives_per_layer: int
    sequence_parallel: bool
    accounting: str


def forward_flops_per_token(spec: ModelSpec, seq_len: int) -> tuple[float, float]:
    """(matmul, attention) forward FLOPs per token: 2 x active weights, and the attention
    scores and weighted sum 2 x layers x seq x (Q width + attention output width), MosaicML llm-foundry's
    benchmark formula (4 x layers x hidden x seq for standard attention, the full s x s)."""
    attention = 2.0 * spec.layers * seq_len * (spec.q_dim + spec.attention_out_dim)
    return 2.0 * spec.active_matmul_params_per_token, attention


def work(
    spec: ModelSpec,
    method: str,
    setup: TrainingSetup,
    states: StateBytes,
    backward_layers: int,
    adapter_params: int,
) -> Work:
    """FLOPs and bytes per micro-batch for a method.

    full: forward + backward (input and weight gradients) = 3 x forward, the 6N + 12Lhs of
    MosaicML. lora/qlora: no weight gradients for the frozen base, so 4N + 12Lhs plus 6 per
    adapter parameter. freeze: forward through everything, backward only through the output
    projection (input gradients) and the trained layers. Full checkpointing (and its offloaded
    form) re-runs the forward of every layer backward passes through; selective recompute
    without flash attention re-runs the attention scores.
    """
    matmul, attention = forward_flops_per_token(spec, setup.seq_len)
    layer_matmul = (matmul - 2.0 * spec.vocab * spec.hidden) / spec.layers
    layer_attention = attention / spec.layers
    if method in ("full", "full-bf16"):
        model = 3 * (matmul + attention)
    elif method in ("lora", "qlora"):
        model = 2 * matmul + 3 * attention + 6.0 * adapter_params
    else:
        head = 2.0 * spec.vocab * spec.hidden
        model = matmul + attention + head + backward_layers * (2 * layer_matmul + 2 * layer_attention)
    recompute = 0.0
    recomputes = setup.checkpointing in ("full", "offload")
    if recomputes:
        recompute = backward_layers * (layer_matmul + layer_attention)
    elif setup.checkpointing == "selective" and not setup.flash_attention:
        recompute = backward_layers * layer_attention
    dequant = 0.0
    if method == "qlora":
        passes = 2 + (1 if recomputes else 0)
        dequant = passes * spec.decoder_linear_params * (NF4_DQ_BYTES_PER_PARAM + 2)
    tokens = setup.seq_len * setup.micro_batch
    return Work(
        tokens_per_microbatch=tokens,
        model_flops_per_token=model,
        hardware_flops_per_token=model + recompute,
        method_efficiency=LORA_EFFICIENCY if method in ("lora", "qlora") else 1.0,
        dequant_bytes_per_microbatch=dequant,
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
    )


def host_link_gb_per_s(gpu: GpuSpec) -> float:
    """One direction of the GPU's link to its host CPU."""
    if gpu.interconnect.startswith("PCIe"):
        return gpu.interconnect_gb_per_s / 2
    return HOST_LINK_GB_PER_S.get(gpu.family, DEFAULT_HOST_LINK_GB_PER_S)


def collective_gb_per_s(gpu: GpuSpec, gpu_count: int, internode_gb_per_s: float) -> float:
    """Bandwidth one GPU's collectives see: one direction of its link, at nccl efficiency
    (HCCS: the measured bus bandwidth); across nodes, the slower of that and the network."""
    if gpu.interconnect == "HCCS":
        ring = min(gpu_count, gpu.gpus_per_node)
        link = next((gb for count, gb in HCCS_BUS_GB_PER_S if ring <= count), HCCS_BUS_GB_PER_S[-1][1])
        return (
            min(link, internode_gb_per_s * COLLECTIVE_EFFICIENCY) if gpu_count > gpu.gpus_per_node else link
        )
    link = gpu.interconnect_gb_per_s / 2
    if gpu.interconnect == "NVLink bridge" and gpu_count > 2:
        link = host_link_gb_per_s(gpu)  # bridges join pairs; past a pair it is PCIe
    if gpu_count > gpu.gpus_per_node:
        link = min(link, internode_gb_per_s)
    return link * COLLECTIVE_EFFICIENCY


def _comm_bytes(
    states: StateBytes, stage: int, n: int, accounting: str, share: float = 1.0
) -> tuple[float, float]:
    """(per micro-batch, per step) bytes each GPU sends in ring collectives over `n` replicas,
    for a model-parallel shard holding `share` of the states."""
    if n == 1:
        return 0.0, 0.0
    ring = (n - 1) / n * share
    grads, weights, trainable = states.gradients, states.weights, states.trainable_params
    if accounting == "megatron":  # reduced in fp32 from the main-gradient buffer
        grads = states.fp32_gradient_bytes or grads
    if stage == 3:  # all-gather weights forward and backward, reduce-scatter gradients
        return ring * (2 * weights + grads), 0.0
    if stage == 2:  # reduce-scatter every micro-batch, all-gather updated weights per step
        return ring * grads, ring * trainable * 2
    if stage == 1 and accounting == "megatron":  # reduce-scatter, then all-gather params
        return 0.0, ring * (grads + trainable * 2)
    return 0.0, 2 * ring * grads  # one all-reduce per step (no sync while accumulating)


def _model_parallel_seconds(w: Work, gpu: GpuSpec, layout: Layout, internode_gb_per_s: float) -> float:
    """Exposed seconds per micro-batch of TP all-reduces and pipeline hand-offs."""
    seconds = 0.0
    tp = layout.tp
    if tp > 1:
        per_layer = w.tp_collectives_per_layer * 2 * (tp - 1) / tp * w.message_bytes
        bandwidth = collective_gb_per_s(gpu, tp, internode_gb_per_s) * 1e9
        seconds += layout.layers_per_stage(w.spec) * per_layer / bandwidth
    if layout.pp > 1:
        # One activation forward and one gradient backward per boundary, sequence-split with SP;
        # across nodes once TP x PP outgrows one.
        message = w.message_bytes / (tp if w.sequence_parallel else 1)
        spans_nodes = layout.model_parallel > gpu.gpus_per_node
        link = internode_gb_per_s if spans_nodes else gpu.interconnect_gb_per_s / 2
        seconds += 2 * message / (link * COLLECTIVE_EFFICIENCY * 1e9)
    return seconds


def step_seconds(
    w: Work,
    gpu: GpuSpec,
    gpu_count: int,
    stage: int,
    offload: str,
    stack_efficiency: float,
    internode_gb_per_s: float,
    layout: Layout = DATA_PARALLEL,
) -> float:
    """Seconds for one optimizer step (grad_accum micro-batches) on each of `gpu_count` GPUs."""
    peak = gpu.bf16_dense_tflops * 1e12
    ceiling = MATMUL_CEILING.get(gpu.family, DEFAULT_MATMUL_CEILING)
    flops_per_s = peak * ceiling * stack_efficiency * w.method_efficiency
    memory_bytes_per_s = gpu.memory_bandwidth_gb_per_s * 1e9
    share = 1.0 if layout.model_parallel == 1 else compute_share(w.spec, layout)
    microbatch = (
        w.tokens_per_microbatch * w.hardware_flops_per_token * share / flops_per_s
        + w.dequant_bytes_per_microbatch / layout.model_parallel / memory_bytes_per_s
        + _model_parallel_seconds(w, gpu, layout, internode_gb_per_s)
    )
    states = w.states
    share = 1.0 if layout.model_parallel == 1 else stage_share(w.spec, layout, True)
    dp = layout.dp(gpu_count)
    per_microbatch, per_step = _comm_bytes(states, stage, dp, w.accounting, share)
    bandwidth = collective_gb_per_s(gpu, gpu_count, internode_gb_per_s) * 1e9
    comm_microbatch, comm_step = per_microbatch / bandwidth, per_step / bandwidth
    # Each micro-batch hides its own collectives behind its compute; the once-per-step ones
    # (gradient sync, weight all-gather) can only hide behind the last micro-batch.
    step = (w.grad_accum - 1) * max(microbatch, comm_microbatch) + max(
        microbatch, comm_microbatch + comm_step
    )
    step += (layout.pp - 1) * microbatch  # the 1F1B bubble: (m + p - 1) slots for m micro-batches

    # The update runs on this GPU's shard: its share of the model over its ZeRO partitions.
    n_opt = (dp if stage >= 1 else 1) / share
    optimizer_shard = states.optimizer / n_opt
    if offload == "none":
        # Memory-bound update: read gradients, read and write the states.
        step += (2 * optimizer_shard + states.gradients / n_opt) / memory_bytes_per_s
    else:
        host = host_link_gb_per_s(gpu) * 1e9
        # Gradients down and 16-bit weights back up, then the update on the host.
        step += (states.gradients + 2 * states.trainable_params) / n_opt / host
        nodes = -(-gpu_count // gpu.gpus_per_node)
        step += 2 * states.optimizer / nodes / (CPU_MEMORY_GB_PER_S * 1e9)
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
) -> tuple[float, float]:
    """(tokens per second over all GPUs, MFU). With `setup.mfu` given, that MFU is taken as
    is and the time model is skipped."""
    peak_all = gpu.bf16_dense_tflops * 1e12 * gpu_count
    if setup.mfu is not None:
        return peak_all * setup.mfu / w.model_flops_per_token, setup.mfu
    seconds = step_seconds(
        w, gpu, gpu_count, stage, setup.offload, setup.efficiency, setup.internode_gb_per_s, layout
    )
    tokens = layout.dp(gpu_count) * w.grad_accum * w.tokens_per_microbatch / seconds
    return tokens, tokens * w.model_flops_per_token / peak_all

"""Memory per GPU: model states sharded by ZeRO/FSDP, the sharding engines' working memory,
activations and overhead.

All results are bytes or GB of 1e9 bytes. Activations and the loss are in
`sizing/activations.py`; this module adds them up with the states.
"""

from __future__ import annotations

from dataclasses import dataclass

from sizing.activations import Activations
from sizing.frameworks import FRAGMENTATION, Framework
from sizing.methods import StateBytes
from sizing.setup import TrainingSetup
from sizing.shapes import ModelSpec

GB = 1e9
# CUDA context, cuBLAS workspaces and NCCL buffers: PyTorch takes 300 MiB-2 GiB on first
# use (vram.asmirnov.xyz); gpu_poor adds a flat 650 MB. 1 GB covers a multi-GPU job.
CUDA_CONTEXT_GB = 1.0
# DeepSpeed's estimators size host memory for offload at 1.5x the states
# (additional_buffer_factor, deepspeed/runtime/zero/stage3.py; sizing.md §1.5).
CPU_BUFFER_FACTOR = 1.5
COMM_BYTES = 2  # ZeRO reduces and gathers in the 16-bit dtype
# DeepSpeed's ZeRO-3 optimizer step (deepspeed/runtime/zero/stage3.py `step`) runs sub-group by
# sub-group of at most `sub_group_size` elements (1e9 by default, deepspeed/runtime/zero/config.py):
# `_prepare_fp32_grad_for_sub_group` makes that sub-group's fp32 gradient from the 16-bit partition
# and `_release_sub_group` frees it before the next one.
DEEPSPEED_SUB_GROUP = 1e9
FP32_GRAD_BYTES = 4


@dataclass(frozen=True)
class Breakdown:
    """Memory in GB (1e9 bytes) by component, on one GPU. `sharding_buffers` is the working
    memory ZeRO/FSDP add whatever the GPU count: gathered units, prefetch and buckets."""

    weights: float
    gradients: float
    optimizer: float
    activations: float
    overhead: float
    sharding_buffers: float = 0.0

    @property
    def total(self) -> float:
        return (
            self.weights + self.gradients + self.optimizer + self.sharding_buffers + self.activations
        ) + self.overhead

    def as_dict(self) -> dict[str, float]:
        return {
            "weights": self.weights,
            "gradients": self.gradients,
            "optimizer": self.optimizer,
            "sharding_buffers": self.sharding_buffers,
            "activations": self.activations,
            "overhead": self.overhead,
        }


def sharded_states(
    states: StateBytes,
    stage: int,
    gpu_count: int,
    offload: str,
    accounting: str = "zero",
    paged_optimizer: bool = False,
) -> tuple[float, float, float]:
    """(weights, gradients, optimizer) bytes on one GPU.

    ZeRO paper (Fig. 1): stage 1 shards the optimizer states, 2 also the gradients, 3 also
    the weights (all but QLoRA's quantization constants), each over `gpu_count` data-parallel
    GPUs. Offloading the optimizer moves its states and the gradient partition to the CPU
    (ZeRO-Offload); offloading all also moves the weights. "deepspeed" accounting counts the
    fp32 gradient partition DeepSpeed keeps beside the optimizer (18 bytes/param at stage 3, as
    its estimators say); 16-bit gradients stay whole at stage 1, are reduce-scattered bucket by
    bucket during backward at stage 2 (stage_1_and_2.py) and are transient at 3. DeepSpeed's
    "ZeRO-2" estimator (4P + 16P/N) is our stage 1: it leaves gradients unpartitioned.
    "megatron" keeps fp32 main gradients in one unsharded buffer (distributed optimizer:
    6 + 12/d bytes per parameter). A paged optimizer keeps its states in host-backed unified
    memory.
    """
    n = gpu_count
    weights = states.weights
    if stage == 3:
        weights = (states.weights - states.replicated_weights) / n + states.replicated_weights
    if accounting == "deepspeed":
        gradients = {0: states.gradients, 1: states.gradients, 2: states.gradients / n}.get(stage, 0.0)
        optimizer = states.optimizer + states.fp32_gradient_bytes
    elif accounting == "megatron":
        gradients = states.fp32_gradient_bytes or states.gradients
        optimizer = states.optimizer
    else:
        gradients = states.gradients / n if stage >= 2 else states.gradients
        optimizer = states.optimizer
    if stage >= 1:
        optimizer /= n
    if paged_optimizer:
        optimizer = 0.0
    if offload != "none":
        gradients = optimizer = 0.0
    if offload == "all":
        weights = 0.0
    return weights + states.dequant_buffer, gradients, optimizer


def sharding_buffers(
    states: StateBytes, spec: ModelSpec, profile: Framework, stage: int, gpu_count: int, offload: str
) -> float:
    """Bytes of working memory the sharding engine holds on each GPU (see docs/sizing.md).

    DeepSpeed ZeRO-1/2: the contiguous-gradient (IPG) bucket, reduce_bucket_size elements in
    16-bit, twice with overlap_comm. ZeRO-3: that bucket once, plus the module being computed
    gathered whole with its gradient (DeepSpeed's 4 x largest layer), plus the prefetch of up
    to stage3_prefetch_bucket_size elements of the next layer. FSDP1 (FULL_SHARD): the root
    unit (embeddings and LM head) stays gathered from forward to the end of backward; besides
    it, the current layer with its unsharded gradient and the next layer prefetched
    (BACKWARD_PRE), or the root's own gradients at the end of backward. FSDP2: the largest unit
    with its gradient plus the next layer. SHARD_GRAD_OP (stage 2): one layer's unsharded
    gradient before its reduce-scatter. DDP replicas copy the gradients into buckets
    (gradient_as_bucket_view=False). Megatron's buckets are views of its gradient buffer.
    """
    sharded = gpu_count > 1 or offload != "none"
    if not sharded:
        return 0.0
    sharding = profile.sharding
    if sharding == "ddp":
        return states.gradients if stage == 0 else 0.0
    if sharding == "megatron" or (stage == 0 and sharding != "deepspeed"):
        return 0.0
    layer, per_param = states.layer, states.layer.weights / spec.layer_params
    if sharding == "deepspeed":
        copies = 2 if profile.overlap_comm and stage < 3 else 1
        bucket = copies * profile.reduce_bucket_elements(spec.hidden, stage) * COMM_BYTES
        if stage < 3 and offload != "all":
            return bucket
        prefetch = min(profile.prefetch_bucket_elements(spec.hidden), spec.layer_params) * per_param
        return bucket + states.module.weights + states.module.gradients + prefetch
    if stage < 3 and offload != "all":
        return layer.gradients
    units = (layer, states.embedding, states.lm_head)
    if sharding == "fsdp":
        root_weights = states.embedding.weights + states.lm_head.weights
        root_gradients = states.embedding.gradients + states.lm_head.gradients
        return root_weights + max(root_gradients, layer.weights + layer.gradients + layer.weights)
    largest = max(units, key=lambda unit: unit.weights + unit.gradients)
    return largest.weights + largest.gradients + layer.weights


def step_transient(
    states: StateBytes,
    optimizer_step: str,
    stage: int,
    gpu_count: int,
    offload: str,
    accounting: str,
    optimizer_in_backward: bool = False,
) -> float:
    """Bytes the optimizer step holds on one GPU beyond the states `sharded_states` counts, at the
    step's own peak, one parameter group (or sub-group) at a time as the optimizers run them.

    torch's foreach AdamW (`_multi_tensor_adamw`) takes `torch._foreach_sqrt` of the second moments
    of a whole parameter group before dividing: one moment's size (StateBytes.step_temporary_bytes)
    over the group; the Trainer's two groups (with and without weight decay) are nearly all
    parameters in the first. torch's fused AdamW, DeepSpeed's FusedAdam, Apex/Transformer Engine,
    a CPU optimizer and an optimizer fused into backward take nothing of the kind.

    DeepSpeed ZeRO-1/2 (stage_1_and_2.py `step`), per parameter group: the partition's gradients are
    flattened into a new 16-bit tensor, cast into the fp32 gradient (counted by the "deepspeed"
    accounting) and the 16-bit ones freed before the optimizer runs; so the step holds the larger
    of the flat copy and the optimizer's temporary less the freed 16-bit partition. ZeRO-3: one
    sub-group's fp32 gradient and temporary at a time, beside the 16-bit gradient partition DeepSpeed
    keeps in its flat buffer; the accounting's whole fp32 gradient partition is not all there at once.
    """
    if offload != "none" or optimizer_in_backward:
        return 0.0
    partition = states.trainable_params / (gpu_count if stage >= 1 else 1)
    temporary = states.step_temporary_bytes if optimizer_step == "foreach" else 0.0
    if accounting != "deepspeed" or stage == 0:
        return temporary * partition
    grad_bytes = states.gradients / states.trainable_params if states.trainable_params else 0.0
    if stage == 3:
        group = min(partition, DEEPSPEED_SUB_GROUP)
        held = (FP32_GRAD_BYTES + temporary) * group + grad_bytes * partition
        return max(0.0, held - states.fp32_gradient_bytes / gpu_count)
    # a 16-bit gradient becomes a new fp32 one and its 16-bit partition is freed before the step;
    # an fp32 one (adapters) is its own flat copy, which replaces it
    excess = temporary - grad_bytes if states.fp32_gradient_bytes else temporary
    return max(grad_bytes, excess) * partition


def step_buffers(
    states: StateBytes, spec: ModelSpec, profile: Framework, stage: int, gpu_count: int
) -> float:
    """The sharding engine's buffers that outlive backward: DeepSpeed's reduce bucket (allocated
    once) and DDP's gradient buckets; gathered ZeRO-3/FSDP units are released by then."""
    if gpu_count == 1:
        return 0.0
    if profile.sharding == "ddp":
        return states.gradients if stage == 0 else 0.0
    if profile.sharding == "deepspeed":
        copies = 2 if profile.overlap_comm and stage < 3 else 1
        return copies * profile.reduce_bucket_elements(spec.hidden, stage) * COMM_BYTES
    return 0.0


def breakdown(
    states: StateBytes,
    acts: Activations,
    buffers: float = 0.0,
    stage: int = 0,
    gpu_count: int = 1,
    offload: str = "none",
    accounting: str = "zero",
    fragmentation: float = FRAGMENTATION,
    paged_optimizer: bool = False,
    accumulating: bool = True,
    optimizer_in_backward: bool = False,
    transient: float = 0.0,
    step_buffers: float = 0.0,
) -> Breakdown:
    """Everything on one GPU at its peak, in GB; stage 0 on one GPU is the unsharded replica.
    `fragmentation` is the allocator margin on what is allocated (the framework's).

    With gradient accumulation (`accumulating`) the gradients of earlier micro-batches are held
    through the next forward, so states and activations add up. Without it gradients only exist
    from backward on (freed at the optimizer step, zero_grad(set_to_none=True)), while backward
    frees the stored activations as it produces them: the peak is the larger of the activation
    peak (gradients still empty) and all gradients plus the one layer being recomputed at the
    end of backward; the breakdown shows that moment. Megatron's main-gradient buffer is
    allocated once and always held. With the optimizer step fused into backward only one
    module's gradient exists at a time.

    The optimizer step is the other candidate for the peak: activations are gone, every gradient
    is there, and the step allocates `transient` bytes (`step_transient`); only the engine's
    persistent buffers (`step_buffers`) remain. The breakdown shows whichever moment holds more.
    """
    weights, gradients, optimizer = sharded_states(
        states, stage, gpu_count, offload, accounting, paged_optimizer
    )
    if optimizer_in_backward:
        gradients = min(gradients, states.module.gradients)
    all_gradients = gradients
    activation_part = acts.peak
    if not accumulating and accounting != "megatron":
        if acts.peak >= gradients + acts.working_layer:
            gradients = 0.0
        else:
            activation_part = acts.working_layer
    allocated = weights + gradients + optimizer + buffers + activation_part
    at_step = weights + all_gradients + optimizer + step_buffers + transient
    if at_step > allocated:
        gradients, optimizer, buffers, activation_part = (
            all_gradients,
            optimizer + transient,
            step_buffers,
            0.0,
        )
        allocated = at_step
    return Breakdown(
        weights=weights / GB,
        gradients=gradients / GB,
        optimizer=optimizer / GB,
        activations=activation_part / GB,
        overhead=CUDA_CONTEXT_GB + fragmentation * allocated / GB,
        sharding_buffers=buffers / GB,
    )


def offloaded_cpu_gb(
    states: StateBytes, offload: str, accounting: str = "zero", paged_optimizer: bool = False
) -> float:
    """Host memory for the offloaded (or paged) states of all GPUs together (their shards add
    up to one replica), with DeepSpeed's pinned-buffer factor, in GB. Model loading, which can
    need more for a moment (a copy per process), is not counted."""
    if offload == "none":
        return states.optimizer / GB if paged_optimizer else 0.0
    if accounting == "deepspeed":  # fp32 partition: master, gradients, moments
        moved = states.optimizer + states.fp32_gradient_bytes
    else:  # ZeRO-Offload: optimizer states and the 16-bit gradients
        moved = states.optimizer + states.gradients
    if offload == "all":
        moved += states.weights
    return CPU_BUFFER_FACTOR * moved / GB


def peak(
    states: StateBytes,
    acts: Activations,
    spec: ModelSpec,
    setup: TrainingSetup,
    stage: int,
    gpu_count: int,
    offload: str,
) -> Breakdown:
    """The peak on one GPU under a setup: its engine's buffers, state accounting, allocator margin,
    gradient accumulation and optimizer step, as `breakdown` adds them up."""
    profile = setup.profile
    accounting = setup.accounting(stage, gpu_count)
    return breakdown(
        states,
        acts,
        sharding_buffers(states, spec, profile, stage, gpu_count, offload),
        stage,
        gpu_count,
        offload,
        accounting,
        profile.fragmentation,
        setup.paged_optimizer,
        accumulating=setup.grad_accum > 1,
        optimizer_in_backward=setup.optimizer_in_backward,
        transient=step_transient(
            states, setup.optimizer_step, stage, gpu_count, offload, accounting, setup.optimizer_in_backward
        ),
        step_buffers=step_buffers(states, spec, profile, stage, gpu_count),
    )

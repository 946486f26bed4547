"""sizing/memory.py term by term: each test pins one term to a case computed by hand from the
term's source, exactly (to rounding), so a term doubled, halved, dropped or switched on at the
wrong count fails. The states are bare numbers chosen so that every term has its own size."""

from __future__ import annotations

from dataclasses import replace

import pytest
from synthetic_states import mixed_adam_states

from sizing import activations, memory
from sizing.activations import Activations
from sizing.frameworks import PROFILES
from sizing.methods import UnitBytes
from sizing.models import resolve
from sizing.planner import prepare
from sizing.setup import TrainingSetup

P = 1_000_000_000  # parameters
LAYER = UnitBytes(weights=300e6, gradients=100e6)
EMBEDDING = UnitBytes(weights=500e6, gradients=40e6)
LM_HEAD = UnitBytes(weights=700e6, gradients=60e6)
MODULE = UnitBytes(weights=200e6, gradients=150e6)
STATES = mixed_adam_states(
    P, layer=LAYER, embedding=EMBEDDING, lm_head=LM_HEAD, module=MODULE, step_temporary_bytes=4
)
HIDDEN = 4096
SPEC = replace(resolve("llama-2-7b"), hidden=HIDDEN)


def test_megatron_keeps_fp32_main_gradients_whole():
    # Megatron's distributed optimizer: bf16 weights 2, fp32 main-gradient buffer 4 (unsharded),
    # optimizer 12 / d (docs/user-guide/features/dist_optimizer.md: 6 + 12/d bytes a parameter).
    weights, gradients, optimizer = memory.sharded_states(STATES, 1, 8, "none", "megatron")
    assert (weights, gradients, optimizer) == (2 * P, 4 * P, 1.5 * P)
    # without a 16-bit gradient there is no separate fp32 one: the gradients as they are
    pure = replace(STATES, fp32_gradient_bytes=0.0)
    assert memory.sharded_states(pure, 1, 8, "none", "megatron")[1] == 2 * P


@pytest.mark.parametrize(
    ("stage", "gradients", "optimizer"),
    # DeepSpeed: 16-bit gradients whole at stage 0-1, reduce-scattered at 2, transient at 3; the
    # fp32 partition (master, moments, gradient: 16 bytes) over the ZeRO degree from stage 1.
    [(0, 2 * P, 16 * P), (1, 2 * P, 2 * P), (2, 2 * P / 8, 2 * P), (3, 0.0, 2 * P)],
)
def test_deepspeed_accounting_by_stage(stage, gradients, optimizer):
    weights = 2 * P / 8 if stage == 3 else 2 * P
    assert memory.sharded_states(STATES, stage, 8, "none", "deepspeed") == (weights, gradients, optimizer)


def test_stage_3_keeps_the_replicated_weights_whole():
    # QLoRA's quantization constants are not parameters: every GPU keeps them (W - R)/n + R
    qlora = replace(STATES, replicated_weights=0.4 * P, dequant_buffer=0.1 * P)
    weights, _, _ = memory.sharded_states(qlora, 3, 4, "none")
    assert weights == pytest.approx((2 - 0.4) * P / 4 + 0.4 * P + 0.1 * P)


def test_offload_and_paged_optimizer_empty_the_gpu():
    # ZeRO-Offload moves the optimizer states and the gradient partition; "all" the weights too;
    # a paged optimizer keeps its states in host-backed memory
    assert memory.sharded_states(STATES, 2, 4, "optimizer") == (2 * P, 0.0, 0.0)
    assert memory.sharded_states(STATES, 3, 4, "all") == (0.0, 0.0, 0.0)
    assert memory.sharded_states(STATES, 0, 1, "none", paged_optimizer=True) == (2 * P, 2 * P, 0.0)


def test_host_memory_of_offload_and_paged_optimizers():
    # DeepSpeed's additional_buffer_factor 1.5 on what moves: ZeRO-Offload the optimizer (12) and
    # the 16-bit gradients (2); "all" also the weights (2); DeepSpeed's own accounting the fp32
    # gradients (4) instead of the 16-bit ones. A paged optimizer's states, at their size.
    assert memory.offloaded_cpu_gb(STATES, "optimizer") == pytest.approx(1.5 * 14)
    assert memory.offloaded_cpu_gb(STATES, "all") == pytest.approx(1.5 * 16)
    assert memory.offloaded_cpu_gb(STATES, "optimizer", "deepspeed") == pytest.approx(1.5 * 16)
    assert memory.offloaded_cpu_gb(STATES, "none", paged_optimizer=True) == pytest.approx(12)
    assert memory.offloaded_cpu_gb(STATES, "none") == 0.0


def test_ddp_copies_the_gradients_into_its_buckets():
    # DistributedDataParallel with gradient_as_bucket_view=False: a second copy of the gradients,
    # on two GPUs already, during backward and at the step
    ddp = PROFILES["unsloth"]
    assert memory.sharding_buffers(STATES, SPEC, ddp, 0, 2, "none") == 2 * P
    assert memory.step_buffers(STATES, SPEC, ddp, 0, 2) == 2 * P
    assert memory.sharding_buffers(STATES, SPEC, ddp, 0, 1, "none") == 0.0
    assert memory.step_buffers(STATES, SPEC, ddp, 0, 1) == 0.0


def test_megatron_buckets_are_views():
    assert memory.sharding_buffers(STATES, SPEC, PROFILES["megatron"], 1, 8, "none") == 0.0
    assert memory.step_buffers(STATES, SPEC, PROFILES["megatron"], 1, 8) == 0.0


def test_deepspeed_stage_1_2_reduce_bucket():
    # reduce_bucket_size 5e8 elements in bf16 (deepspeed/runtime/zero/config.py); overlap_comm
    # doubles it (two IPG buckets, stage_1_and_2.py); on two GPUs already
    deepspeed = PROFILES["deepspeed"]
    assert memory.sharding_buffers(STATES, SPEC, deepspeed, 2, 2, "none") == 5e8 * 2
    overlapped = replace(deepspeed, overlap_comm=True)
    assert memory.sharding_buffers(STATES, SPEC, overlapped, 1, 2, "none") == 2 * 5e8 * 2
    assert memory.step_buffers(STATES, SPEC, overlapped, 1, 2) == 2 * 5e8 * 2
    assert memory.sharding_buffers(STATES, SPEC, deepspeed, 2, 1, "none") == 0.0
    # one GPU with optimizer offload still runs the engine's bucket
    assert memory.sharding_buffers(STATES, SPEC, deepspeed, 2, 1, "optimizer") == 5e8 * 2


def test_deepspeed_stage_3_buffers():
    # one reduce bucket (5e8 x 2 bytes; overlap_comm adds none at stage 3), the module being
    # computed gathered with its gradient (DeepSpeed's 4 x largest layer), and the prefetch of
    # stage3_prefetch_bucket_size 5e7 elements at the layer's bytes a parameter
    deepspeed = PROFILES["deepspeed"]
    per_param = LAYER.weights / SPEC.layer_params
    expected = 5e8 * 2 + MODULE.weights + MODULE.gradients + 5e7 * per_param
    assert memory.sharding_buffers(STATES, SPEC, deepspeed, 3, 2, "none") == pytest.approx(expected)
    assert memory.sharding_buffers(
        STATES, SPEC, replace(deepspeed, overlap_comm=True), 3, 2, "none"
    ) == pytest.approx(expected)
    assert memory.step_buffers(STATES, SPEC, deepspeed, 3, 2) == 5e8 * 2
    # the Hugging Face "auto" buckets: hidden^2 reduce, 0.9 hidden^2 prefetch
    auto = PROFILES["llamafactory"]
    auto_expected = HIDDEN**2 * 2 + MODULE.weights + MODULE.gradients + 0.9 * HIDDEN**2 * per_param
    assert memory.sharding_buffers(STATES, SPEC, auto, 3, 2, "none") == pytest.approx(auto_expected)


def test_fsdp_buffers():
    # FSDP1 FULL_SHARD: the root unit (embedding + LM head) gathered, plus the larger of its
    # gradients and the current layer with its gradient and the next layer prefetched
    fsdp, fsdp2 = PROFILES["hf"], PROFILES["torchtune"]
    root = EMBEDDING.weights + LM_HEAD.weights
    layer_moment = LAYER.weights + LAYER.gradients + LAYER.weights
    assert memory.sharding_buffers(STATES, SPEC, fsdp, 3, 2, "none") == root + layer_moment
    # FSDP2: the largest unit with its gradient (the LM head here) and the next layer
    largest = LM_HEAD.weights + LM_HEAD.gradients
    assert memory.sharding_buffers(STATES, SPEC, fsdp2, 3, 2, "none") == largest + LAYER.weights
    # SHARD_GRAD_OP: one layer's unsharded gradient
    assert memory.sharding_buffers(STATES, SPEC, fsdp, 2, 2, "none") == LAYER.gradients
    assert memory.sharding_buffers(STATES, SPEC, fsdp, 0, 2, "none") == 0.0
    assert memory.step_buffers(STATES, SPEC, fsdp, 3, 2) == 0.0


ACTS = Activations(stored=3e9, working_layer=0.5e9, logits=1e9)  # peak 4e9


def test_accumulating_gradients_add_to_the_activations():
    got = memory.breakdown(STATES, ACTS, buffers=0.2e9, fragmentation=0.05)
    allocated = 2 * P + 2 * P + 12 * P + 0.2e9 + 4e9
    assert got.gradients == 2.0 and got.activations == 4.0
    assert got.total == pytest.approx((allocated * 1.05) / 1e9 + memory.CUDA_CONTEXT_GB)


def test_without_accumulation_the_gradients_come_after_the_activations():
    # activation peak 4 GB >= all gradients 2 GB + one layer 0.5 GB: gradients not yet there
    got = memory.breakdown(STATES, ACTS, fragmentation=0.0, accumulating=False)
    assert (got.gradients, got.activations) == (0.0, 4.0)
    # small activations: all gradients and the layer recomputed at the end of backward
    small = Activations(stored=1e9, working_layer=0.5e9, logits=0.2e9)
    got = memory.breakdown(STATES, small, fragmentation=0.0, accumulating=False)
    assert (got.gradients, got.activations) == (2.0, 0.5)


def test_optimizer_in_backward_holds_one_modules_gradient():
    got = memory.breakdown(STATES, ACTS, fragmentation=0.0, optimizer_in_backward=True)
    assert got.gradients == MODULE.gradients / 1e9


def test_the_optimizer_step_is_the_peak_when_its_temporary_outgrows_the_activations():
    # at the step: weights 2 + all gradients 2 + optimizer 12 + temporary 5 > backward's 2+2+12+4
    got = memory.breakdown(STATES, ACTS, fragmentation=0.0, transient=5e9, step_buffers=0.1e9)
    assert (got.activations, got.optimizer, got.sharding_buffers) == (0.0, 17.0, 0.1)
    assert got.total == pytest.approx(2 + 2 + 12 + 5 + 0.1 + memory.CUDA_CONTEXT_GB)
    # the allocator margin is on what the step holds: 2 + 2 + 12 + 5 + 0.1 GB
    margin = memory.breakdown(STATES, ACTS, fragmentation=0.1, transient=5e9, step_buffers=0.1e9).overhead
    assert margin == pytest.approx(memory.CUDA_CONTEXT_GB + 0.1 * 21.1)
    below = memory.breakdown(STATES, ACTS, fragmentation=0.0, transient=3.9e9)
    assert below.activations == 4.0 and below.optimizer == 12.0


def test_the_allocator_margin_is_the_frameworks():
    assert memory.breakdown(STATES, ACTS, fragmentation=0.1).overhead == pytest.approx(
        memory.CUDA_CONTEXT_GB + 0.1 * 20
    )


def test_two_micro_batches_accumulate():
    # grad_accum 2 holds the gradients through the second forward; grad_accum 1 does not
    def peak(grad_accum: int) -> memory.Breakdown:
        sizing = prepare("llama-2-7b", "lora", TrainingSetup(grad_accum=grad_accum, framework="hf"))
        return sizing.replica

    assert peak(2).gradients > 0 and peak(1).gradients == 0


def test_two_gpus_add_the_sharding_buffers():
    sizing = prepare("llama-2-7b", "full", TrainingSetup(framework="deepspeed"))
    one, two = sizing.per_gpu(2, 1), sizing.per_gpu(2, 2)
    assert one.sharding_buffers == 0 and two.sharding_buffers == pytest.approx(5e8 * 2 / 1e9)


@pytest.mark.parametrize(
    ("loss", "chunks", "tp", "bytes_per_entry"),
    [
        ("fp32", 1, 1, 12),  # fp32 log-probabilities, their gradient and the logits' gradient
        ("fp32-copy", 1, 1, 16),  # transformers before early 2025: the shifted fp32 copy's gradient too
        ("vocab-parallel", 1, 2, 6 / 2),  # Megatron: one fp32 copy in place + bf16 gradient, over TP
        ("chunked", 8, 1, 2 + 14 / 8),  # torchtune: bf16 logits kept, the fp32 path a chunk at a time
    ],
)
def test_the_loss_peak_by_framework(loss, chunks, tp, bytes_per_entry):
    spec = resolve("llama-3.1-8b")
    tokens = 4096
    got = activations.loss_bytes(spec, loss, tokens, chunks, tp)
    assert got == pytest.approx(bytes_per_entry * tokens * spec.vocab)
    # Liger/Unsloth never hold the logits: 10 bytes a token per hidden element
    assert activations.loss_bytes(spec, "fused", tokens, 1, 1) == 10 * tokens * spec.hidden


def test_deepspeed_overlap_adds_no_bucket_at_stage_3():
    # overlap_comm's second IPG bucket belongs to stages 1-2 (stage_1_and_2.py); ZeRO-3 has one
    overlapped = replace(PROFILES["deepspeed"], overlap_comm=True)
    assert memory.step_buffers(STATES, SPEC, overlapped, 3, 2) == 5e8 * 2
    assert memory.step_buffers(STATES, SPEC, overlapped, 2, 2) == 2 * 5e8 * 2


def test_zero_1_2_step_holds_the_larger_of_the_flat_copy_and_the_temporary():
    # 16-bit gradients (2 bytes) and a foreach temporary of 4: the flat copy (2) or the temporary
    # less the freed 16-bit partition (4 - 2): 2 a parameter of the partition; a 6-byte temporary: 4
    partition = P / 4
    assert memory.step_transient(STATES, "foreach", 2, 4, "none", "deepspeed") == pytest.approx(2 * partition)
    wide = replace(STATES, step_temporary_bytes=6)
    assert memory.step_transient(wide, "foreach", 1, 4, "none", "deepspeed") == pytest.approx(4 * partition)
    # fp32 gradients (adapters): the flat copy is the fp32 gradient; the temporary adds on its own
    adapters = replace(STATES, gradients=4 * P, fp32_gradient_bytes=0.0, step_temporary_bytes=6)
    assert memory.step_transient(adapters, "foreach", 2, 4, "none", "deepspeed") == pytest.approx(
        6 * partition
    )
    assert memory.step_transient(adapters, "fused", 2, 4, "none", "deepspeed") == pytest.approx(4 * partition)
    # plain torch (no DeepSpeed): the temporary over the partition, none at stage 0 sharding
    assert memory.step_transient(STATES, "foreach", 3, 4, "none", "zero") == pytest.approx(4 * partition)
    assert memory.step_transient(STATES, "foreach", 0, 4, "none", "zero") == pytest.approx(4 * P)
    assert memory.step_transient(STATES, "foreach", 3, 4, "none", "zero", optimizer_in_backward=True) == 0.0


def test_zero_3_step_per_sub_group():
    # 8e9 parameters over 4 GPUs: a 2e9 partition in sub-groups of 1e9; fp32 gradient (4) and a
    # foreach temporary (4) of one sub-group, the 16-bit partition (2 x 2e9), less the 4 x 2e9 the
    # accounting holds: 8e9 + 4e9 - 8e9
    big = mixed_adam_states(8 * P, step_temporary_bytes=4)
    assert memory.step_transient(big, "foreach", 3, 4, "none", "deepspeed") == pytest.approx(4e9)
    assert memory.step_transient(big, "fused", 3, 4, "none", "deepspeed") == 0.0


def test_ties_show_the_backward_moment():
    # the step only takes over when it holds more; the activation peak only gives way to the end
    # of backward when that holds more
    tie = memory.breakdown(STATES, ACTS, fragmentation=0.0, transient=4e9)
    assert (tie.activations, tie.optimizer) == (4.0, 12.0)
    even = Activations(stored=2e9, working_layer=0.5e9, logits=0.5e9)  # peak 2.5 = 2 + 0.5
    got = memory.breakdown(STATES, even, fragmentation=0.0, accumulating=False)
    assert (got.gradients, got.activations) == (0.0, 2.5)

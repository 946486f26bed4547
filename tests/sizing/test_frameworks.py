"""Framework profiles: the loss computation, ZeRO-3/FSDP working memory and the sharded 4-bit
base, against formula identities and published measurements (sizing.md §6 tolerances: ±15% on
measured memory, ±25% where an unspecified optimization such as torch.compile ran).

Measured peaks from torchtune are "Peak Memory Active" (PyTorch's allocated bytes, GiB): they
hold neither the CUDA context nor allocator slack, so they are compared with our total less the
overhead part.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from sizing import activations, frameworks, memory
from sizing.catalog import find_gpu
from sizing.frameworks import FRAMEWORKS, PROFILES
from sizing.models import resolve
from sizing.planner import prepare
from sizing.setup import CHECKPOINTING, OPTIMIZERS, TrainingSetup

GIB = 2**30


def allocated_gib(breakdown: memory.Breakdown) -> float:
    return (breakdown.total - breakdown.overhead) * 1e9 / GIB


def test_every_profile_states_its_sources_and_valid_defaults():
    assert frameworks.DEFAULT_FRAMEWORK in FRAMEWORKS
    assert set(FRAMEWORKS) == {"hf", "llamafactory", "torchtune", "unsloth", "deepspeed", "megatron"}
    for profile in PROFILES.values():
        assert len(profile.sources) >= 3, profile.name
        assert profile.checkpointing in CHECKPOINTING and profile.optimizer in OPTIMIZERS
        assert 0 < profile.stack_efficiency <= 1 and 0 <= profile.fragmentation < 0.5
        assert TrainingSetup(framework=profile.name).loss == profile.loss


def test_a_framework_sets_defaults_and_a_user_setting_wins():
    tune = TrainingSetup(framework="torchtune")
    assert (tune.loss, tune.checkpointing) == ("chunked", "full")
    assert TrainingSetup(framework="unsloth").optimizer == "adamw-8bit"
    assert TrainingSetup(framework="unsloth", optimizer="adamw").optimizer == "adamw"
    assert TrainingSetup(framework="hf").checkpointing == "none"
    assert TrainingSetup(framework="hf", checkpointing="full").checkpointing == "full"
    assert TrainingSetup().framework == "llamafactory" and TrainingSetup().checkpointing == "full"


# Loss at a 128k vocabulary (Llama 3): 8 bytes per token x entry between the fp32 upcast and the
# chunked loss, so "about 4 GB" at batch 2 x 2048 tokens.
@pytest.mark.parametrize(
    ("loss", "bytes_per_entry"),
    [("fp32", 12.0), ("vocab-parallel", 6.0), ("chunked", 2 + 14 / 8)],
)
def test_loss_bytes_per_token_and_vocabulary_entry(loss, bytes_per_entry):
    spec = resolve("llama-3.1-8b")
    tokens = 2 * 2048
    assert activations.loss_bytes(spec, loss, tokens, 8, 1) == pytest.approx(
        bytes_per_entry * tokens * spec.vocab
    )


def test_chunked_against_full_logits_at_128k_vocabulary():
    spec = resolve("llama-3.1-8b")
    tokens = 2 * 2048
    full, chunked = (activations.loss_bytes(spec, loss, tokens, 8, 1) for loss in ("fp32", "chunked"))
    fused = activations.loss_bytes(spec, "fused", tokens, 1, 1)
    assert (full - chunked) / 1e9 == pytest.approx(4.0, rel=0.15)
    assert fused < chunked < full
    # vocab-parallel logits split over TP
    assert activations.loss_bytes(spec, "vocab-parallel", tokens, 1, 8) * 8 == activations.loss_bytes(
        spec, "vocab-parallel", tokens, 1, 1
    )


# torchtune README.md (pytorch/torchtune bd2a0fc7), "Optimization flags": Llama 3.2 3B,
# full_finetune_single_device, batch 2, sequence 4096, packed, bf16, A100, no gradient
# accumulation, each technique on top of the previous; compile on from the second row.
TORCHTUNE_ABLATION = [
    ("+ Compile", {"checkpointing": "none", "loss": "fp32"}, 51.0),
    ("+ Chunked Cross Entropy", {"checkpointing": "none"}, 42.9),
    ("+ Activation Checkpointing", {}, 24.9),
]


@pytest.mark.parametrize(("row", "options", "published_gib"), TORCHTUNE_ABLATION)
def test_torchtune_ablation(row, options, published_gib):
    # compile on from "+ Compile": its fused kernels keep no fp32 norm or RoPE copies
    setup = TrainingSetup(
        framework="torchtune", seq_len=4096, micro_batch=2, grad_accum=1, fused_kernels=True, **options
    )
    assert allocated_gib(prepare("llama-3.2-3b", "full", setup).replica) == pytest.approx(
        published_gib, rel=0.15
    )


def test_torchtune_chunked_loss_saving():
    def peak(loss: str) -> float:
        setup = TrainingSetup(
            framework="torchtune",
            seq_len=4096,
            micro_batch=2,
            grad_accum=1,
            checkpointing="none",
            fused_kernels=True,
        )
        return allocated_gib(prepare("llama-3.2-3b", "full", replace(setup, loss=loss)).replica)

    assert peak("fp32") - peak("chunked") == pytest.approx(51.0 - 42.9, rel=0.15)


# torchtune README.md, "Memory and training speed": batch 2, packed to 2048, compile on, no
# gradient accumulation (±25%: compile). The 8B full row runs the single-device config:
# PagedAdamW8bit with the optimizer step in backward.
TORCHTUNE_TABLE = [
    ("llama-3.1-8b", "full", "RTX 4090 24GB", 1, {"optimizer": "adamw-8bit", "paged_optimizer": True,
                                                  "optimizer_in_backward": True}, 18.9),
    ("llama-3.1-8b", "lora", "RTX 4090 24GB", 1, {}, 16.2),
    ("llama-3.1-8b", "qlora", "RTX 4090 24GB", 1, {}, 7.4),
    ("llama-3.1-70b", "lora", "A100 SXM 80GB", 8, {}, 27.6),
    # 70B full: fsdp_cpu_offload (parameters, gradients and the fused AdamW on the CPU), 13.9 GiB
    # a GPU (shared/reference/sizing.md §5, item 6)
    ("llama-3.1-70b", "full", "A100 SXM 80GB", 8, {"offload": "all"}, 13.9),
]  # fmt: skip


@pytest.mark.parametrize(("model", "method", "gpu", "count", "options", "published_gib"), TORCHTUNE_TABLE)
def test_torchtune_published_peaks(model, method, gpu, count, options, published_gib):
    setup = TrainingSetup(
        framework="torchtune", seq_len=2048, micro_batch=2, grad_accum=1, fused_kernels=True, **options
    )
    single = prepare(model, method, setup).estimate(gpu=gpu, gpu_count=count)
    assert single.requirement is not None and single.requirement.fits
    assert allocated_gib(single.per_gpu) == pytest.approx(published_gib, rel=0.25)


def test_zero3_buffers_formula():
    # Llama-3.1-8B full, ZeRO-3 on 8 GPUs: DeepSpeed gathers its largest module, the 525M-row
    # embedding (weights + gradient in bf16), prefetches up to its bucket, and reduces through
    # reduce_bucket_size elements; Hugging Face's "auto" sizes both buckets from hidden^2.
    spec = resolve("llama-3.1-8b")
    table = spec.vocab * spec.hidden
    h2 = spec.hidden**2
    expected = {
        "llamafactory": 4 * table + 2 * h2 + 2 * 0.9 * h2,
        "deepspeed": 4 * table + 2 * 5e8 + 2 * 5e7,
        "hf": 2 * 2 * table + max(2 * 2 * table, 6 * spec.layer_params),  # FSDP1: root unit held
        "torchtune": 4 * table + 2 * spec.layer_params,  # FSDP2: largest unit + next layer
    }
    for name, bytes_ in expected.items():
        sizing = prepare("llama-3.1-8b", "full", TrainingSetup(framework=name))
        buffers = memory.sharding_buffers(sizing.states, sizing.spec, sizing.setup.profile, 3, 8, "none")
        assert buffers == pytest.approx(bytes_), name


# hiyouga/LlamaFactory#5977 (2024-11): Llama-3-8B full fine-tuning with ZeRO-3 on 8 x RTX 3090 runs
# out of memory; with ZeRO-3 + optimizer offload it runs (~13 GB per card as nvidia-smi shows it).
# The Trainer's AdamW was foreach then (adamw_torch, torch < 2.8). The peak is the optimizer step:
# DeepSpeed makes one sub-group's fp32 gradients and the foreach AdamW a moment-sized temporary
# (4 + 4 bytes over the 1e9-element partition), beside the 16-bit gradient partition (2 bytes),
# less the fp32 gradient partition the accounting counts already (4): backward alone fits.
def test_zero3_on_8_x_24gb_decides_fit():
    def single(offload: str) -> tuple[memory.Breakdown, float]:
        setup = TrainingSetup(seq_len=1024, zero_stage=3, offload=offload, optimizer_step="foreach")
        sizing = prepare("llama-3.1-8b", "full", setup)
        estimate = sizing.estimate(gpu="RTX 3090 24GB", gpu_count=8)
        assert estimate.requirement is not None
        transient = memory.step_transient(sizing.states, "foreach", 3, 8, offload, "deepspeed")
        return estimate.per_gpu, transient / 1e9

    usable = find_gpu("RTX 3090 24GB").usable_memory_gb
    (plain, transient), (offloaded, _) = single("none"), single("optimizer")
    partition = prepare("llama-3.1-8b", "full").states.trainable_params / 8 / 1e9
    assert transient == pytest.approx((4 + 4) * min(partition, 1.0) + 2 * partition - 4 * partition)
    assert plain.activations == 0 and plain.total > usable  # out of memory at the optimizer step
    assert plain.total - transient * 1.05 < usable  # ... which is what decides it
    assert offloaded.total < usable


@pytest.mark.parametrize("gpus", [2, 8])
def test_sharded_against_whole_4bit_base(gpus):
    # FSDP-QLoRA (bnb_4bit_quant_storage): the packed 4-bit data shards over the GPUs, the
    # quantization constants stay on each; Unsloth's DDP keeps the whole base on every GPU.
    spec = resolve("llama-2-70b")
    sharded = prepare("llama-2-70b", "qlora", TrainingSetup(framework="hf")).per_gpu(3, gpus)
    whole = prepare("llama-2-70b", "qlora", TrainingSetup(framework="unsloth")).per_gpu(0, gpus)
    states = prepare("llama-2-70b", "qlora").states
    expected = (states.weights - states.replicated_weights) / gpus + states.replicated_weights
    assert sharded.weights == pytest.approx((expected + states.dequant_buffer) / 1e9)
    assert whole.weights == pytest.approx((states.weights + states.dequant_buffer) / 1e9)
    assert whole.weights / sharded.weights == pytest.approx(gpus, rel=0.1 * gpus)
    # 8/64 + 32/(64*256) bits of constants per weight (double quantization)
    assert states.replicated_weights == pytest.approx(spec.decoder_linear_params * (1 / 8 + 1 / 512) / 8)


# Answer.AI (2024-03-06, "You can now train a 70b language model at home"): FSDP + QLoRA trains
# a 70B model on two 24 GB GPUs; Kaitchup (2024-08, Llama 3.1 70B on 2 x RTX 3090: "What you can
# do with only 2x24 GB GPUs, and a lot of CPU RAM") offloads the parameters to host memory.
def test_fsdp_qlora_70b_on_two_24gb_gpus_with_cpu_offload():
    for model in ("llama-2-70b", "llama-3.1-70b"):
        for offload, fits in (("none", False), ("all", True)):
            setup = TrainingSetup(framework="hf", checkpointing="full", offload=offload, seq_len=2048)
            estimate = prepare(model, "qlora", setup).estimate(gpu="RTX 3090 24GB", gpu_count=2)
            assert estimate.requirement is not None and estimate.requirement.fits is fits, (model, offload)
        assert prepare(model, "qlora", setup).cpu_memory_gb() > 48  # "a lot of CPU RAM"

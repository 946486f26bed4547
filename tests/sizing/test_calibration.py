"""The throughput prior against published, measured fine-tuning and continued-pretraining runs
(docs/sizing.md, "Calibration"). The GEMM efficiency, the sustained bandwidth and the host time
per operator were fitted on the FIT runs; the HELD_OUT runs (other frameworks, GPUs and
authors) were not used to fit anything. Tokens per second per GPU throughout."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from sizing import hf_config
from sizing.catalog import find_gpu
from sizing.models import resolve
from sizing.planner import Sizing
from sizing.setup import TrainingSetup
from sizing.shapes import ModelSpec


def _qwen1(layers: int, hidden: int, heads: int, ffn: int, vocab: int, name: str) -> ModelSpec:
    """Qwen-1's shape (q/k/v biases as Qwen2, untied, MHA), from QwenLM/Qwen's config.json values."""
    config = {
        "model_type": "qwen2",
        "num_hidden_layers": layers,
        "hidden_size": hidden,
        "num_attention_heads": heads,
        "intermediate_size": ffn,
        "vocab_size": vocab,
        "tie_word_embeddings": False,
    }
    return hf_config.from_dict(config, source=name)


def _mpt(layers: int, hidden: int, heads: int) -> ModelSpec:
    """llm-foundry's MPT (scripts/train/yamls/pretrain/mpt-*.yaml): a 4h GeLU MLP, MHA, no biases,
    tied embeddings, vocabulary 50,368, ALiBi (no RoPE to count), no dropout."""
    gpt = resolve("gpt2-xl")
    return replace(
        gpt,
        preset=f"mpt ({layers} layers, hidden {hidden})",
        layers=layers,
        hidden=hidden,
        heads=heads,
        kv_heads=heads,
        ffn=4 * hidden,
        vocab=50368,
        bias="none",
        learned_positions=0,
        dropout=False,
    )


QWEN_7B = _qwen1(32, 4096, 32, 11008, 151936, "Qwen-7B")
QWEN_14B = _qwen1(40, 5120, 40, 13696, 152064, "Qwen-14B")
QWEN_72B = _qwen1(80, 8192, 64, 24576, 152064, "Qwen-72B")
MPT = {7: _mpt(32, 4096, 32), 13: _mpt(40, 5120, 40), 30: _mpt(48, 7168, 64), 70: _mpt(80, 8192, 64)}

# QwenLM/Qwen README.md (2df8e8ac), "Profiling of Memory and Speed": one A100-SXM4-80G, flash
# attention 2, batch 1, gradient accumulation 8, gradient checkpointing, LoRA r64 on all linears
# (finetune.py LoraArguments); s/it is one step of 8 micro-batches. 72B: DeepSpeed ZeRO-3
# (ds_config_zero3.json names AdamW: DeepSpeed's FusedAdam) on 4 GPUs.
QWEN = {"checkpointing": "full", "lora_rank": 64}
A100, A100_40, A800, H100 = "A100 SXM 80GB", "A100 SXM 40GB", "A800 SXM 80GB", "H100 SXM 80GB"
# llm-foundry scripts/train/benchmarking/README.md (8c8dd48f, tables of 2023-10): FSDP FULL_SHARD,
# amp_bf16 (70B: pure bf16), attn_impl triton, fused kernels; tokens/s/GPU as published.
FOUNDRY = {"fused_kernels": True, "zero_stage": 3}
# (id, model, method, framework, GPU, GPUs, sequence, micro-batch, accumulation, settings,
#  published tokens/s/GPU)
FIT: list[tuple[str, Any, str, str, str, int, int, int, int, dict[str, Any], float]] = [
    ("qwen-7b lora 256", QWEN_7B, "lora", "hf", A100, 1, 256, 1, 8, QWEN, 8 * 256 / 1.2),
    ("qwen-7b lora 512", QWEN_7B, "lora", "hf", A100, 1, 512, 1, 8, QWEN, 8 * 512 / 1.5),
    ("qwen-7b lora 1k", QWEN_7B, "lora", "hf", A100, 1, 1024, 1, 8, QWEN, 8 * 1024 / 2.8),
    ("qwen-7b lora 2k", QWEN_7B, "lora", "hf", A100, 1, 2048, 1, 8, QWEN, 8 * 2048 / 5.2),
    ("qwen-7b lora 4k", QWEN_7B, "lora", "hf", A100, 1, 4096, 1, 8, QWEN, 8 * 4096 / 10.1),
    ("qwen-7b lora 8k", QWEN_7B, "lora", "hf", A100, 1, 8192, 1, 8, QWEN, 8 * 8192 / 21.3),
    ("qwen-14b lora 512", QWEN_14B, "lora", "hf", A100, 1, 512, 1, 8, QWEN, 8 * 512 / 2.4),
    ("qwen-14b lora 2k", QWEN_14B, "lora", "hf", A100, 1, 2048, 1, 8, QWEN, 8 * 2048 / 8.4),
    ("qwen-14b lora 4k", QWEN_14B, "lora", "hf", A100, 1, 4096, 1, 8, QWEN, 8 * 4096 / 17.0),
    ("qwen-14b lora 8k", QWEN_14B, "lora", "hf", A100, 1, 8192, 1, 8, QWEN, 8 * 8192 / 36.0),
    ("qwen-72b lora zero3 2k", QWEN_72B, "lora", "deepspeed", A100, 4, 2048, 1, 8,
     {**QWEN, "zero_stage": 3}, 8 * 2048 / 45.7),
    ("qwen-72b lora zero3 8k", QWEN_72B, "lora", "deepspeed", A100, 4, 8192, 1, 8,
     {**QWEN, "zero_stage": 3}, 8 * 8192 / 161.5),
    ("mpt-7b 2k", MPT[7], "full", "hf", A100, 8, 2048, 6, 2,
     {**FOUNDRY, "checkpointing": "none"}, 4641),
    ("mpt-7b 8k", MPT[7], "full", "hf", A100, 8, 8192, 8, 2, {**FOUNDRY, "checkpointing": "full"}, 3206),
    ("mpt-13b 4k", MPT[13], "full", "hf", A100, 8, 4096, 10, 3,
     {**FOUNDRY, "checkpointing": "full"}, 2060),
    ("mpt-30b 2k", MPT[30], "full", "hf", A100, 8, 2048, 3, 21,
     {**FOUNDRY, "checkpointing": "full"}, 916),
    ("mpt-70b 2k", MPT[70], "full-bf16", "hf", A100, 64, 2048, 8, 4,
     {**FOUNDRY, "checkpointing": "full"}, 410),
]  # fmt: skip

# Held out, each from another source:
# LLaMA-Factory wiki "Performance comparison" (2024-04-15): LLaMA2-7B QLoRA, one A100 40GB,
#   batch 1, accumulation 4, LoRA r8 on all modules, FA2 ("FlashAttention2" row) or Unsloth.
# ms-swift docs/source_en/Megatron-SWIFT/Quick-start.md (3602360a) "Benchmark": Qwen2.5-14B full,
#   8 x A800, packing to 8192, examples/megatron/benchmark/deepspeed.sh (batch 1, accumulation 2,
#   gradient checkpointing, DeepSpeed ZeRO-2/3 with the Trainer's AdamW) and base_to_chat.sh
#   (Megatron TP4, selective recompute, sequence parallelism, global batch 16).
# torchtune README.md (bd2a0fc7): Llama 3.2 3B full single device on A100, batch 2, packed 4096,
#   compile (fused kernels), chunked loss from "+ Chunked Cross Entropy", activation checkpointing
#   from "+ Activation Checkpointing", LoRA with offloading; Llama 3.1 70B LoRA on 8 x A100, batch 2
#   packed 2048 (3,497 tokens/s over the 8 GPUs: 437 per GPU).
# NVIDIA-NeMo/Automodel docs/performance-summary.mdx (36044ad3): LoRA r16, one H100, batch 2 of
#   4096, accumulation 16, no activation checkpointing, Transformer Engine kernels.
# The wiki's runs (2024-04) ran transformers < 4.48, whose LlamaForCausalLM shifted its fp32 logits
# (`logits.float()`, then `shift_logits = logits[..., :-1, :].contiguous()`): the `fp32-copy` loss.
LF: dict[str, Any] = {"loss": "fp32-copy"}
LLAMA2 = "llama-2-7b"
UNSLOTH: dict[str, Any] = {}
SWIFT_DS = {"checkpointing": "full"}
SWIFT_MEGATRON = {"checkpointing": "selective", "tp": 4, "zero_stage": 1, "tp_comm_overlap": False}
TUNE = {"fused_kernels": True}
AUTOMODEL = {"checkpointing": "none", "lora_rank": 16, "fused_kernels": True}
HELD_OUT: list[tuple[str, Any, str, str, str, int, int, int, int, dict[str, Any], float]] = [
    ("llamafactory qlora 1k", LLAMA2, "qlora", "llamafactory", A100_40, 1, 1024, 1, 4, LF, 2295),
    ("llamafactory qlora 2k", LLAMA2, "qlora", "llamafactory", A100_40, 1, 2048, 1, 4, LF, 2741),
    ("llamafactory qlora 4k", LLAMA2, "qlora", "llamafactory", A100_40, 1, 4096, 1, 4, LF, 2926),
    ("llamafactory qlora 8k", LLAMA2, "qlora", "llamafactory", A100_40, 1, 8192, 1, 4, LF, 3128),
    ("llamafactory qlora 32k", LLAMA2, "qlora", "llamafactory", A100_40, 1, 32768, 1, 4, LF, 2216),
    ("unsloth qlora 2k", LLAMA2, "qlora", "unsloth", A100_40, 1, 2048, 1, 4, UNSLOTH, 3178),
    ("unsloth qlora 8k", LLAMA2, "qlora", "unsloth", A100_40, 1, 8192, 1, 4, UNSLOTH, 3632),
    ("unsloth qlora 32k", LLAMA2, "qlora", "unsloth", A100_40, 1, 32768, 1, 4, UNSLOTH, 2456),
    ("ms-swift 14b full zero2", "qwen2.5-14b", "full", "llamafactory", A800, 8, 8192, 1, 2,
     {**SWIFT_DS, "zero_stage": 2}, 16 * 8192 / 10.32 / 8),
    ("ms-swift 14b full zero3", "qwen2.5-14b", "full", "llamafactory", A800, 8, 8192, 1, 2,
     {**SWIFT_DS, "zero_stage": 3}, 16 * 8192 / 10.56 / 8),
    ("ms-swift 14b full megatron", "qwen2.5-14b", "full", "megatron", A800, 8, 8192, 1, 8,
     SWIFT_MEGATRON, 16 * 8192 / 9.04 / 8),
    ("torchtune 3b full", "llama-3.2-3b", "full", "torchtune", A100, 1, 4096, 2, 1,
     {**TUNE, "checkpointing": "none", "loss": "fp32"}, 8998),
    ("torchtune 3b chunked", "llama-3.2-3b", "full", "torchtune", A100, 1, 4096, 2, 1,
     {**TUNE, "checkpointing": "none"}, 9174),
    ("torchtune 3b checkpointed", "llama-3.2-3b", "full", "torchtune", A100, 1, 4096, 2, 1, TUNE, 7210),
    ("torchtune 3b lora", "llama-3.2-3b", "lora", "torchtune", A100, 1, 4096, 2, 1,
     {**TUNE, "checkpointing": "offload"}, 8210),
    ("torchtune 70b lora", "llama-3.1-70b", "lora", "torchtune", A100, 8, 2048, 2, 1, TUNE, 3497 / 8),
    ("automodel 8b lora", "llama-3.1-8b", "lora", "hf", H100, 1, 4096, 2, 16, AUTOMODEL, 12472.87),
    ("automodel qwen2.5-7b lora", "qwen2.5-7b", "lora", "hf", H100, 1, 4096, 2, 16, AUTOMODEL, 14110.05),
]  # fmt: skip


def _row(run: tuple[str, Any, str, str, str, int, int, int, int, dict[str, Any], float]) -> Any:
    """Our row for a published run: its model, method, framework, GPUs and settings."""
    name, model, method, framework, gpu, count, seq, micro, accumulation, settings, _ = run
    spec = resolve(model) if isinstance(model, str) else model
    setup = TrainingSetup(
        framework=framework, seq_len=seq, micro_batch=micro, grad_accum=accumulation, **settings
    )
    return Sizing(name, spec, method, setup).requirement(find_gpu(gpu), count)


def ours(run: tuple[str, Any, str, str, str, int, int, int, int, dict[str, Any], float]) -> float:
    """Our tokens per second per GPU for a published run."""
    return _row(run).tokens_per_second / run[5]


@pytest.mark.parametrize("run", FIT, ids=[run[0] for run in FIT])
def test_runs_the_prior_was_fitted_on(run):
    assert ours(run) == pytest.approx(run[-1], rel=0.15)


@pytest.mark.parametrize("run", HELD_OUT, ids=[run[0] for run in HELD_OUT])
def test_runs_held_out_of_the_fit(run):
    assert ours(run) == pytest.approx(run[-1], rel=0.25)


def test_the_calibration_spans_what_the_issue_asks():
    runs = FIT + HELD_OUT
    sizes = {round((resolve(run[1]) if isinstance(run[1], str) else run[1]).params / 1e9) for run in runs}
    assert min(sizes) <= 7 and max(sizes) >= 70
    assert {run[2] for run in runs} >= {"full", "lora", "qlora"}
    assert min(run[6] for run in runs) <= 2048 and max(run[6] for run in runs) >= 32768
    assert len(runs) >= 10 and len({run[3] for run in HELD_OUT}) >= 4


def test_held_out_runs_agree_as_a_whole():
    ratios = [ours(run) / run[-1] for run in HELD_OUT]
    geometric = 1.0
    for ratio in ratios:
        geometric *= ratio ** (1 / len(ratios))
    assert geometric == pytest.approx(1.0, abs=0.08)


# Peak memory the same sources publish per GPU (the Qwen README's "G", 72B over its 4 GPUs;
# LLaMA-Factory's "GB"; ms-swift's per-GPU figures; torchtune's 27.6 GiB active), against our
# total (CUDA context and allocator margin included, as a device-level reading is): ±15%.
PUBLISHED_MEMORY_GB = {
    "qwen-7b lora 256": 20.1,
    "qwen-7b lora 1k": 21.5,
    "qwen-7b lora 4k": 29.7,
    "qwen-7b lora 8k": 36.6,
    "qwen-14b lora 2k": 37.4,
    "qwen-14b lora 8k": 55.2,
    "qwen-72b lora zero3 2k": 228.8 / 4,
    "qwen-72b lora zero3 8k": 289.2 / 4,
    "llamafactory qlora 1k": 6,
    "llamafactory qlora 4k": 9,
    "llamafactory qlora 8k": 12,
    "llamafactory qlora 32k": 32,
    "ms-swift 14b full zero3": 58,
    "ms-swift 14b full megatron": 64,
}
RUNS = {run[0]: run for run in FIT + HELD_OUT}


@pytest.mark.parametrize(("name", "published_gb"), PUBLISHED_MEMORY_GB.items())
def test_memory_of_the_calibration_runs(name, published_gb):
    assert _row(RUNS[name]).per_gpu_memory_gb == pytest.approx(published_gb, rel=0.15)


def test_every_calibration_run_fits_the_gpus_it_ran_on():
    # All of them ran. ms-swift's ZeRO-2 run filled its 80 GB cards ("8*80GB"); we put its peak
    # (the fp32 loss of 8192 tokens x 152k vocabulary at the start of backward) 4% past them.
    for name, run in RUNS.items():
        row = _row(run)
        if name == "ms-swift 14b full zero2":
            assert row.per_gpu_memory_gb == pytest.approx(row.usable_memory_gb, rel=0.05)
        else:
            assert row.fits, name


# Tensor parallelism at TP 8, Megatron-style (docs/sizing.md, "TP 8"). Checked (they decided the
# megatron profile's default, TP collectives not overlapped): MindSpeed-LLM (then ModelLink, commit
# 27ac11d6, 2024-05-29) README.md "参考性能", the GPU reference figures in tokens/s per GPU beside
# the Ascend ones, with examples/*/pretrain_*_ptd*.sh at the same commit: TP 8, sequence
# parallelism, flash attention, no recompute, no --tp-comm-overlap (the scripts use MindSpeed's MC2
# on Ascend only). The reference GPU is not named; A800, as for LLaMA2-7B (test_parallel.py).
ML = {"checkpointing": "none", "sequence_parallel": True, "zero_stage": 1}


def _llama(
    layers: int, hidden: int, heads: int, kv_heads: int, ffn: int, vocab: int, name: str, bias: bool = False
) -> ModelSpec:
    """A Llama-shaped model from its config.json values (untied embeddings, SwiGLU, RMSNorm)."""
    config = {"model_type": "llama", "num_hidden_layers": layers, "hidden_size": hidden,
              "num_attention_heads": heads, "num_key_value_heads": kv_heads, "intermediate_size": ffn,
              "vocab_size": vocab, "attention_bias": bias}  # fmt: skip
    return hf_config.from_dict(config, source=name)


CODELLAMA_34B = _llama(48, 8192, 64, 8, 22016, 32000, "CodeLlama-34B")
YI_34B = _llama(60, 7168, 56, 8, 20480, 64000, "Yi-34B")
# MHA with q/k/v/o biases ("bias": true in its config.json)
INTERNLM_7B = _llama(32, 4096, 32, 32, 11008, 103168, "InternLM-7B", bias=True)


# (id, model, GPUs, PP, sequence, micro-batch, global batch, virtual stages, published)
TP8_CHECKED: list[tuple[str, Any, int, int, int, int, int, int, float]] = [
    ("llama2-13b tp8", "llama-2-13b", 8, 1, 4096, 4, 512, 1, 1920),
    ("codellama-34b tp8 pp2", CODELLAMA_34B, 16, 2, 4096, 2, 1024, 1, 796),
    ("llama3-8b tp8", "llama-3.1-8b", 8, 1, 8192, 2, 64, 1, 2674),
    ("llama3-70b tp8 pp8", "llama-3.1-70b", 64, 8, 8192, 1, 512, 1, 355),
    ("llama-65b tp8 pp4", "llama-65b", 32, 4, 2048, 2, 128, 1, 426),
    ("yi-34b tp8 pp2", YI_34B, 16, 2, 4096, 2, 1024, 1, 730),
    # --num-layers-per-virtual-pipeline-stage 5 over 20 layers a stage: 4 virtual stages
    ("llama2-70b tp8 pp4 vp4", "llama-2-70b", 32, 4, 4096, 1, 1024, 4, 430),
    ("internlm-7b tp8", INTERNLM_7B, 8, 1, 2048, 8, 64, 1, 2854),
]  # fmt: skip


def _gpt(layers: int, hidden: int, heads: int) -> ModelSpec:
    """Narayanan et al.'s GPT: vocabulary 51,200, sequence 2048, learned positions, 4h GeLU MLP."""
    config = {"model_type": "gpt2", "n_layer": layers, "n_embd": hidden, "n_head": heads, "vocab_size": 51200,
              "n_positions": 2048}  # fmt: skip
    return hf_config.from_dict(config, source=f"GPT ({layers} layers, hidden {hidden})")


def _eq3_tokens(tflops: float, layers: int, hidden: int) -> float:
    """Tokens/s/GPU from the paper's teraFLOP/s per GPU by its own count (Eq. 3: 96·B·s·l·h²·(1 +
    s/6h + V/16lh) per iteration, the recomputed forward included), per token."""
    seq, vocab = 2048, 51200
    return (
        tflops * 1e12 / (96 * layers * hidden**2 * (1 + seq / (6 * hidden) + vocab / (16 * layers * hidden)))
    )


# Held back (no part in choosing the default: they ran before Transformer Engine's overlap existed,
# so they check the exposed TP time itself): Narayanan et al., "Efficient Large-Scale Language
# Model Training on GPU Clusters Using Megatron-LM" (SC21), Table 1, the TP 8 rows: A100 80GB
# (Selene), full recompute, no sequence parallelism or flash attention then. The micro-batch is
# not stated in Table 1: 1 assumed (the paper's §5.5 finds 1-2 best at these sizes); plain 1F1B
# assumed.
# (params in billions, heads, hidden, layers, PP, GPUs, global batch, teraFLOP/s per GPU)
TP8_HELD_OUT = [
    (18.4, 48, 6144, 40, 1, 256, 1024, 135),
    (39.1, 64, 8192, 48, 2, 512, 1536, 138),
    (76.1, 80, 10240, 60, 4, 1024, 1792, 140),
    (145.6, 96, 12288, 80, 8, 1536, 2304, 148),
    (310.1, 128, 16384, 96, 16, 1920, 2160, 155),
    (529.6, 128, 20480, 105, 35, 2520, 2520, 163),
    (1008.0, 160, 25600, 128, 64, 3072, 3072, 163),
]


def _tp8_row(run: tuple[str, Any, int, int, int, int, int, int, float], **settings: Any) -> Any:
    name, model, count, pp, seq, micro, batch, virtual, _ = run
    spec = resolve(model) if isinstance(model, str) else model
    dp = count // (8 * pp)
    setup = TrainingSetup(
        framework="megatron", seq_len=seq, micro_batch=micro, grad_accum=batch // dp // micro, tp=8, pp=pp,
        virtual_stages=virtual, **{**ML, **settings},
    )  # fmt: skip
    return Sizing(name, spec, "full", setup).requirement(find_gpu(A800), count)


def _geometric(ratios: list[float]) -> float:
    product = 1.0
    for ratio in ratios:
        product *= ratio
    return product ** (1 / len(ratios))


@pytest.mark.parametrize("run", TP8_CHECKED, ids=[run[0] for run in TP8_CHECKED])
def test_tp8_runs_without_overlap(run):
    row = _tp8_row(run)
    assert row.fits and (row.tp, row.pp) == (8, run[3])
    assert row.tokens_per_second / run[2] == pytest.approx(run[-1], rel=0.25)


def test_tp8_runs_read_high_when_their_collectives_are_taken_as_hidden():
    # The issue's "about 1.5x high": the same runs with Transformer Engine's overlap assumed
    # (the profile's default before) read 1.00-1.47x, 1.15 in the geometric mean; as run 0.84-1.08, 0.92.
    plain = [_tp8_row(run).tokens_per_second / run[2] / run[-1] for run in TP8_CHECKED]
    hidden = [_tp8_row(run, tp_comm_overlap=True).tokens_per_second / run[2] / run[-1] for run in TP8_CHECKED]
    assert _geometric(plain) == pytest.approx(0.92, abs=0.05)
    assert _geometric(hidden) > 1.1 and max(hidden) > 1.4


@pytest.mark.parametrize("run", TP8_HELD_OUT, ids=[f"{run[0]}B tp8 pp{run[4]}" for run in TP8_HELD_OUT])
def test_tp8_runs_held_back(run):
    params, heads, hidden, layers, pp, count, batch, tflops = run
    dp = count // (8 * pp)
    setup = TrainingSetup(
        framework="megatron", seq_len=2048, micro_batch=1, grad_accum=batch // dp, checkpointing="full", tp=8,
        pp=pp, sequence_parallel=False, flash_attention=False, virtual_stages=1, zero_stage=0,
    )  # fmt: skip
    row = Sizing(f"gpt {params}B", _gpt(layers, hidden, heads), "full", setup).requirement(
        find_gpu(A100), count
    )
    assert row.fits and (row.tp, row.pp) == (8, pp)
    assert row.tokens_per_second / count == pytest.approx(_eq3_tokens(tflops, layers, hidden), rel=0.25)

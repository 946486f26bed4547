"""The assumptions behind an estimate, in words, for tables and --json output."""

from __future__ import annotations

from sizing import catalog, frameworks, kernels, memory, methods, throughput
from sizing.parallel import DATA_PARALLEL, Layout
from sizing.planner import Sizing

_METHOD_WORDS = {
    "full": "full fine-tuning, bf16 mixed precision with fp32 master weights",
    "full-bf16": "full fine-tuning in pure bf16 (no fp32 master copy)",
    "lora": "LoRA on a frozen bf16 base, adapters trained in fp32",
    "qlora": "QLoRA: NF4 base with double quantization, fp32 adapters",
    "freeze": "freeze-tuning: the last layers train in fp32, the rest stay frozen in bf16",
}
_OPTIMIZER_WORDS = {"adamw": "AdamW", "adamw-8bit": "8-bit AdamW (bitsandbytes)", "sgd": "SGD with momentum"}
_CHECKPOINTING_WORDS = {
    "none": "no activation recompute",
    "selective": "selective recompute of the attention scores",
    "full": "full activation checkpointing (each layer's input kept, recomputed in backward)",
    "offload": "full activation checkpointing with each layer's input offloaded to host RAM",
}
_LOSS_WORDS = {
    "fp32": f"fp32 logits upcast for the loss ({frameworks.FP32_LOSS_BYTES:.0f} bytes per token and "
    "vocabulary entry at the backward peak)",
    "vocab-parallel": "vocab-parallel cross-entropy in one fp32 copy "
    f"({frameworks.VOCAB_PARALLEL_LOSS_BYTES:.0f} bytes per token and vocabulary entry, over TP)",
    "chunked": "chunked cross-entropy (bf16 logits kept, the fp32 path one chunk at a time)",
    "fused": "fused linear cross-entropy (no full logits held)",
}
_SHARDING_WORDS = {
    "deepspeed": "DeepSpeed ZeRO",
    "fsdp": "FSDP (FSDP1, layer-wrapped; the root unit holds the embeddings and LM head)",
    "fsdp2": "FSDP2 (layers, embeddings and LM head as separate units)",
    "megatron": "Megatron distributed optimizer (ZeRO-1 over data parallel)",
    "ddp": "DDP replicas (no sharding)",
}
# MindSpeed-LLM (then ModelLink) README, 2024-07 (Ascend/MindSpeed-LLM, parent of a27b45f0):
# LLaMA2-7B pretraining, TP1 PP2, sequence 4096, 8 NPUs of an Atlas 900 A2 PODc, 4,241 tokens/s
# per NPU (examples/llama2/README.md), i.e. 199 model TFLOPS per NPU at 6N + attention FLOPs.
MINDSPEED_LLAMA2_7B_TOKENS_PER_NPU = 4241
MINDSPEED_LLAMA2_7B_MODEL_TFLOPS = 199


def _ascend_line() -> str:
    return (
        "Ascend 910B: no published fine-tuning MFU; the prior is the framework's GEMM efficiency on the "
        f"default matmul ceiling ({throughput.DEFAULT_MATMUL_CEILING:.2f}), checked against MindSpeed-LLM's "
        f"LLaMA2-7B pretraining figure ({MINDSPEED_LLAMA2_7B_TOKENS_PER_NPU:,} tokens/s per NPU on an "
        f"Atlas 900 A2 PODc, {MINDSPEED_LLAMA2_7B_MODEL_TFLOPS} model TFLOPS/NPU; the NPU variant is not "
        "stated); HCCS collectives at the measured all_reduce bus bandwidth "
        "(18/30/72 GB/s at 2/4/8 NPUs, limulidae)"
    )


def describe(sizing: Sizing, layout: Layout = DATA_PARALLEL, gpu: catalog.GpuSpec | None = None) -> list[str]:
    """One line per assumption, settings first, then the constants with their sources."""
    s = sizing.setup
    profile = s.profile
    spec = sizing.spec
    lines = [f"model shape: {spec.preset} ({spec.params / 1e9:.2f}B parameters; {spec.source})"]
    if spec.experts > 1:
        lines.append(
            f"mixture of experts: {spec.experts} routed experts, {spec.experts_per_token} per token; "
            f"{spec.active_params / 1e9:.2f}B parameters active per token (FLOPs), all "
            f"{spec.params / 1e9:.2f}B held (memory)"
        )
    if spec.fields_read:
        lines.append("config.json fields read: " + ", ".join(spec.fields_read))
    method = methods.full_precision(sizing.method, s)
    lines.append(f"framework: {profile.name} ({profile.description})")
    lines.append(f"method: {_METHOD_WORDS[method]}; optimizer: {_OPTIMIZER_WORDS[s.optimizer]}")
    if method != sizing.method:
        lines.append(f"{profile.name}'s full fine-tuning keeps no fp32 master copy: counted as full-bf16")
    if s.paged_optimizer:
        lines.append(
            "paged optimizer: its states live in host-backed unified memory, counted in cpu_memory_gb"
        )
    if sizing.method in ("lora", "qlora"):
        targets = "all linear layers" if s.lora_targets == ("all",) else ", ".join(s.lora_targets)
        adapters = methods.lora_params(spec, s)
        lines.append(f"LoRA rank {s.lora_rank} on {targets}: {adapters / 1e6:.1f}M trainable parameters")
    if sizing.method == "freeze":
        lines.append(f"freeze-tuning trains the last {sizing.backward_layers} layers")
    lines.append(
        f"sequence {s.seq_len} tokens, micro-batch {s.micro_batch} per GPU, "
        f"{s.grad_accum} micro-batches per step; "
        f"{_CHECKPOINTING_WORDS[s.checkpointing]}; flash attention {'on' if s.flash_attention else 'off'}"
    )
    lines.append(f"loss: {_LOSS_WORDS[s.loss]}")
    zero = "the smallest ZeRO stage that fits" if s.zero_stage is None else f"ZeRO stage {s.zero_stage}"
    lines.append(
        f"sharding: {_SHARDING_WORDS[profile.sharding]}, {zero} (FSDP equivalent); CPU offload: {s.offload}; "
        f"accounting: {s.sharded_accounting}"
    )
    lines.append(_layout_line(sizing, layout))
    lines.append(
        f"GB = 1e9 bytes; usable GPU memory = what the device reports to PyTorch: "
        f"{catalog.USABLE_FRACTION:.1%} of the nameplate in GiB "
        f"({catalog.ECC_GDDR_USABLE_FRACTION:.1%} on ECC GDDR cards, "
        f"{catalog.ASCEND_USABLE_FRACTION:.1%} on Ascend)"
    )
    lines.append(
        f"overhead = {memory.CUDA_CONTEXT_GB:.1f} GB CUDA context + "
        f"{profile.fragmentation:.0%} allocator margin"
    )
    if s.mfu is not None:
        lines.append(f"throughput: MFU {s.mfu:.0%} as given (--mfu)")
    else:
        kernels_word = "fused" if s.uses_fused_kernels else "eager (Hugging Face modelling code)"
        lines.append(
            f"throughput: GEMMs at {s.efficiency:.0%} of each GPU's measured matmul ceiling; "
            f"{'flash' if s.flash_attention else 'eager'} attention with a causal mask at its kernel's "
            f"rate; {kernels_word} element-wise kernels at {kernels.BANDWIDTH_EFFICIENCY:.0%} of memory "
            f"bandwidth; {kernels.HOST_SECONDS_PER_OP * 1e6:.0f} us of host time per operator launched"
            + (", waited on every layer" if profile.host_syncs else ", overlapped")
            + f"; collectives at {throughput.COLLECTIVE_EFFICIENCY:.0%} of link bandwidth, overlapped "
            "with compute (pipeline hand-offs are not; tensor-parallel ones "
            + (
                "hidden behind the GEMMs where they fit, but for the last of "
                f"{throughput.TE_PIPELINE_SPLITS} chunks of the forward reduce-scatters"
                if s.overlaps_tp_comm
                else "are not"
            )
            + f"); {s.internode_gb_per_s * 8:g} Gb/s ({s.internode_gb_per_s:g} GB/s) per GPU between nodes, "
            "one direction (the fabric's; 400 when none is named, docs/sizing.md)"
        )
        lines.append(
            "MFU counts model FLOPs: 6N-style per token plus the attention products at half the s x s "
            "square under the causal mask (Megatron-Core's convention; llm-foundry and torchtitan count "
            "the full square, which reads higher at long sequences); recompute is not counted"
        )
    if gpu is None or gpu.interconnect == "HCCS":
        lines.append(_ascend_line())
    lines.append("tokens/s counts processed tokens: padding in unpacked batches is not modelled")
    return lines


def _layout_line(sizing: Sizing, layout: Layout) -> str:
    s = sizing.setup
    if layout.model_parallel > 1:
        sp = "with" if s.uses_sequence_parallel else "without"
        return (
            f"layout: {layout.describe()} {sp} sequence parallelism; activations per GPU after Korthikanti "
            "et al. (arXiv 2205.05198), the first stage holding min(PP, micro-batches) in flight; "
            f"pipeline bubble (PP - 1)/{s.grad_accum} micro-batches"
        )
    if s.profile.model_parallel:
        return (
            "layout: data parallel; where no ZeRO stage fits, the planner tries TP inside a node, then PP "
            "across nodes (the first layout that fits, least model parallelism first); across nodes, the "
            "fastest layout that fits at the fabric's bandwidth"
        )
    return f"layout: data parallel ({s.profile.name} runs no tensor or pipeline parallelism)"

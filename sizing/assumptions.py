"""The assumptions behind an estimate, in words, for tables and --json output."""

from __future__ import annotations

from sizing import catalog, memory, methods, throughput
from sizing.planner import Sizing

_METHOD_WORDS = {
    "full": "full fine-tuning, bf16 mixed precision with fp32 master weights",
    "full-bf16": "full fine-tuning in pure bf16 (no fp32 master copy)",
    "lora": "LoRA on a frozen bf16 base, adapters trained in fp32",
    "qlora": "QLoRA: NF4 base with double quantization, fp32 adapters, paged optimizer (counted on the GPU)",
    "freeze": "freeze-tuning: the last layers train in fp32, the rest stay frozen in bf16",
}
_OPTIMIZER_WORDS = {"adamw": "AdamW", "adamw-8bit": "8-bit AdamW (bitsandbytes)", "sgd": "SGD with momentum"}
_CHECKPOINTING_WORDS = {
    "none": "no activation recompute",
    "selective": "selective recompute of the attention scores",
    "full": "full activation checkpointing (each layer's input kept, recomputed in backward)",
}


def describe(sizing: Sizing) -> list[str]:
    """One line per assumption, settings first, then the constants with their sources."""
    s = sizing.setup
    lines = [
        f"model shape: {sizing.spec.preset} ({sizing.spec.params / 1e9:.2f}B parameters; "
        f"{sizing.spec.source})"
    ]
    lines.append(f"method: {_METHOD_WORDS[sizing.method]}; optimizer: {_OPTIMIZER_WORDS[s.optimizer]}")
    if sizing.method in ("lora", "qlora"):
        targets = "all linear layers" if s.lora_targets == ("all",) else ", ".join(s.lora_targets)
        adapters = methods.lora_params(sizing.spec, s)
        lines.append(f"LoRA rank {s.lora_rank} on {targets}: {adapters / 1e6:.1f}M trainable parameters")
    if sizing.method == "freeze":
        lines.append(f"freeze-tuning trains the last {sizing.backward_layers} layers")
    lines.append(
        f"sequence {s.seq_len} tokens, micro-batch {s.micro_batch} per GPU, "
        f"{s.grad_accum} micro-batches per step; "
        f"{_CHECKPOINTING_WORDS[s.checkpointing]}; flash attention {'on' if s.flash_attention else 'off'}"
    )
    zero = "the smallest ZeRO stage that fits" if s.zero_stage is None else f"ZeRO stage {s.zero_stage}"
    lines.append(
        f"sharding: {zero} (FSDP equivalent); CPU offload: {s.offload}; accounting: {s.state_accounting}"
    )
    lines.append(
        f"GB = 1e9 bytes; usable GPU memory = {catalog.USABLE_FRACTION:.0%} of the nameplate in GiB "
        "(Ascend 910B2C reports 62,432 of 65,536 MiB)"
    )
    lines.append(
        f"overhead = {memory.CUDA_CONTEXT_GB:.1f} GB CUDA context + {memory.FRAGMENTATION:.0%} fragmentation "
        f"margin; logits at {memory.LOGITS_BYTES_PER_ENTRY} bytes per token and vocabulary entry"
    )
    if s.mfu is not None:
        lines.append(f"throughput: MFU {s.mfu:.0%} as given (--mfu)")
    else:
        lines.append(
            f"throughput: {s.stack_efficiency:.0%} of each GPU's measured matmul ceiling on executed FLOPs"
            + (
                f", x{throughput.LORA_EFFICIENCY:.2f} for LoRA adapters"
                if sizing.method in ("lora", "qlora")
                else ""
            )
            + f"; collectives at {throughput.COLLECTIVE_EFFICIENCY:.0%} of link bandwidth, "
            "overlapped with compute; "
            f"{s.internode_gb_per_s:.0f} GB/s per GPU between nodes"
        )
    lines.append(
        "tokens/s counts processed tokens: padding in unpacked batches is not modelled; tensor and pipeline "
        "parallelism are not modelled (data parallel with ZeRO/FSDP only)"
    )
    return lines

"""Training-framework profiles: what each stack does by default that changes memory and speed.

A profile fixes, each with its source (cited in `docs/sizing.md`): how the loss is computed
(`loss`), the default activation checkpointing, the default optimizer, what "full" training
keeps in which precision, which sharding engine runs ZeRO/FSDP and with which buckets, whether
it shards a 4-bit QLoRA base, the allocator margin, whether it runs tensor/pipeline
parallelism, and the stack efficiency the throughput prior uses. Settings a user gives
(`TrainingSetup` fields) override the profile's defaults.
"""

from __future__ import annotations

from dataclasses import dataclass

# Bytes per (token x vocabulary entry) at the loss's peak, by how the loss is computed.
# fp32: transformers' ForCausalLMLoss upcasts the logits (`logits.float()`,
#   src/transformers/loss/loss_utils.py) and cross-entropy keeps fp32 log-probabilities for
#   backward (4); backward then holds their fp32 gradient (4) and the fp32 gradient of the
#   logits (4) at once: 12. (vram.asmirnov.xyz budgets 8, B x S x V x 4 x 2: it leaves out the
#   gradients; see docs/sizing.md for why we follow the backward peak.)
# vocab-parallel: Megatron's vocab_parallel_cross_entropy computes softmax in place in one fp32
#   copy and writes the gradient into it (megatron/core/tensor_parallel/cross_entropy.py): 4,
#   plus the bf16 gradient of the logits handed back to the output layer (2): 6, over TP.
# chunked: torchtune's LinearCrossEntropyLoss/CEWithChunkedOutputLoss (num_output_chunks=8)
#   keeps bf16 logits of every chunk for backward (2) and runs the fp32 path (12) and the bf16
#   gradient (2) one chunk at a time: 2 + 14 / chunks.
# fused: Liger's fused linear cross-entropy and Unsloth's fused CE compute the gradient in the
#   forward pass chunk by chunk and never hold full logits; what remains is counted per token
#   (FUSED_LOSS_BYTES_PER_TOKEN_HIDDEN below).
# fp32-copy: transformers before early 2025 (releases up to 4.48, a judgement from the PR dates):
#   the causal-LM loss shifted the logits, not the labels (`shift_logits = logits[..., :-1, :]
#   .contiguous()` on fp32 logits), so one more fp32 logits-sized tensor lived at the backward
#   peak: the slice's full-size gradient beside the shifted one (huggingface/transformers #35646
#   moved the shift to the labels): 16.
FP32_LOSS_BYTES = 12.0
FP32_COPY_LOSS_BYTES = FP32_LOSS_BYTES + 4.0
VOCAB_PARALLEL_LOSS_BYTES = 6.0
CHUNKED_LOSS_SAVED_BYTES = 2.0
CHUNK_WORKING_BYTES = 14.0
# A fused chunk holds about as many logits as the hidden states have elements (Liger sizes its
# chunks to ceil(B*T / ceil(V/H)) tokens, linkedin/Liger-Kernel
# src/liger_kernel/ops/fused_linear_cross_entropy.py), in fp32 with their gradient (8), plus the
# bf16 gradient of the hidden states (2): bytes per token x hidden element.
FUSED_LOSS_BYTES_PER_TOKEN_HIDDEN = 10.0
LOSSES = ("fp32", "fp32-copy", "vocab-parallel", "chunked", "fused")

# Sharding engines. deepspeed: ZeRO gathers one module (nn.Linear/Embedding) at a time and
# prefetches up to a bucket; fsdp: FSDP1 wraps each decoder layer and keeps the root unit
# (embeddings, LM head) gathered from forward to the end of backward; fsdp2: each layer and the
# embeddings/LM head are their own units (torchtune's custom_sharded_layers); megatron: the
# distributed optimizer over data parallel, contiguous fp32 gradient buffer; ddp: replicas only.
SHARDING = ("deepspeed", "fsdp", "fsdp2", "megatron", "ddp")

# PyTorch's caching allocator strands blocks between sizes (ZeRO §3.2 saw >30% in extreme cases).
# At out-of-memory time, real runs' messages show 0.5-8.5% of what was allocated reserved but
# unallocated (494 MiB of 76.9 GiB, 1.21 of 74.0, 4.07 of 56.6, 4.37 of 73.9, 5.94 of 70.1 GiB;
# docs/sizing.md): 5%. With expandable_segments (set by Unsloth and ms-swift's scripts) freed
# pages are remapped into one growing segment: half that, a judgement.
FRAGMENTATION = 0.05
FRAGMENTATION_EXPANDABLE = 0.025

# Fraction of each GPU's measured matmul ceiling (MAMF) the training GEMMs sustain; the rest of a
# step (attention kernels, memory-bound element-wise work, LoRA adapters, host dispatch, the
# optimizer, exposed communication) is counted on its own (sizing/kernels.py). Calibrated on the
# Qwen README's LoRA/full fine-tuning runs and llm-foundry's MPT runs on A100, checked on runs
# it was not fitted to (docs/sizing.md, "Calibration"); the same for every stack, since the
# GEMMs are cuBLAS's whoever calls them.
GEMM_EFFICIENCY = 0.82
# Megatron's published runs sustain less of the ceiling in their GEMMs: fitted on the three
# Megatron-family runs we have (GPT-3 175B on 1024 A100s, 2022 README; MindSpeed-LLM's A800
# reference for LLaMA2-7B; ms-swift's Megatron Qwen2.5-14B on 8 A800s): 0.72. Their layouts split
# every GEMM over TP (smaller shapes) and their configs are pretraining-sized.
MEGATRON_GEMM_EFFICIENCY = 0.72
# Llama 2's model card GPU-hours (sizing.md §3.3) with a fused pretraining stack at sequence 4096
# on A100: what --stack-efficiency takes to reproduce them (case 20); Meta's 2023 stack ran its
# GEMMs below today's.
PRETRAIN_STACK_EFFICIENCY = 0.50


@dataclass(frozen=True)
class Framework:
    """One training stack's defaults. Buckets are in elements (DeepSpeed's units); None means
    the Hugging Face "auto" rule (hidden x hidden for reduce_bucket_size, 0.9 x hidden x hidden
    for stage3_prefetch_bucket_size; reduce_bucket is stage 3's, zero12_reduce_bucket stages
    0-2's, whose shipped configs differ). `stages` are the ZeRO stages (FSDP equivalents) it runs;
    `overlap_comm` is DeepSpeed's at stages 1-2 (a second gradient bucket); `full_is_pure_bf16`
    says that its "full" fine-tuning keeps weights, gradients and AdamW moments in bf16 (no
    fp32 master copy)."""

    name: str
    description: str
    loss: str
    loss_chunks: int
    checkpointing: str
    optimizer: str
    full_is_pure_bf16: bool
    sharding: str
    stages: tuple[int, ...]
    shards_quantized_base: bool
    reduce_bucket: float | None
    zero12_reduce_bucket: float | None
    prefetch_bucket: float | None
    overlap_comm: bool
    state_accounting: str
    fragmentation: float
    stack_efficiency: float
    model_parallel: bool
    sources: tuple[str, ...]
    single_gpu_accounting: str | None = None  # states on one GPU without ZeRO, when they differ
    optimizer_step: str = "fused"  # "foreach": torch's foreach AdamW (a moment-sized temporary)
    fused_kernels: bool = False  # fused norms, RoPE and activations (Triton, Transformer Engine)
    host_syncs: bool = True  # the host waits on the GPU once a layer (HF's flash-attention path)
    attention_kernel: str = "flash2"  # FlashAttention-2 (SDPA's flash backend) or "cudnn" (TE)
    interleaved_pipeline: bool = False  # virtual pipeline stages (Megatron's interleaved 1F1B)
    tp_comm_overlap: bool = False  # tensor-parallel collectives overlapped with the layer's GEMMs
    # MoE experts in grouped GEMMs over the routed tokens (torchtune's GroupedExperts, Megatron's
    # TEGroupedMLP); otherwise Hugging Face's modelling code, which for some models multiplies every
    # token through every expert (ModelSpec.experts_run_dense)
    grouped_experts: bool = False

    def __post_init__(self) -> None:
        if self.loss not in LOSSES:
            raise ValueError(f"{self.name}: loss must be one of {', '.join(LOSSES)}")
        if self.sharding not in SHARDING:
            raise ValueError(f"{self.name}: sharding must be one of {', '.join(SHARDING)}")

    def reduce_bucket_elements(self, hidden: int, stage: int) -> float:
        bucket = self.reduce_bucket if stage == 3 else self.zero12_reduce_bucket
        return hidden * hidden if bucket is None else bucket

    def prefetch_bucket_elements(self, hidden: int) -> float:
        return 0.9 * hidden * hidden if self.prefetch_bucket is None else self.prefetch_bucket


_PROFILES = (
    Framework(
        name="llamafactory",
        description="LLaMA-Factory (Hugging Face Trainer; DeepSpeed ZeRO with its shipped configs)",
        loss="fp32",
        loss_chunks=1,
        checkpointing="full",
        optimizer="adamw",
        full_is_pure_bf16=False,
        sharding="deepspeed",
        stages=(0, 1, 2, 3),
        shards_quantized_base=True,
        reduce_bucket=None,
        zero12_reduce_bucket=5e8,
        prefetch_bucket=None,
        overlap_comm=False,
        state_accounting="deepspeed",
        fragmentation=FRAGMENTATION,
        stack_efficiency=GEMM_EFFICIENCY,
        model_parallel=True,
        optimizer_step="fused",
        sources=(
            "optimizer step: torch.optim.AdamW fused (the Trainer's default optim adamw_torch_fused with "
            "torch >= 2.8, transformers training_args.py default_optim; adamw_torch, foreach, before: "
            "--optimizer-step foreach); the DeepSpeed configs name no optimizer, so DeepSpeed wraps the "
            "Trainer's; kernels: Hugging Face's eager modelling code",
            "loss: Trainer + transformers ForCausalLMLoss (enable_liger_kernel and use_unsloth default "
            "False, src/llamafactory/hparams/model_args.py)",
            "checkpointing: disable_gradient_checkpointing default False (model_args.py)",
            "optimizer: Trainer optim adamw_torch",
            "states: DeepSpeed's (fp32 gradient partition beside the optimizer, 16-bit gradients "
            "unsharded below stage 3) whenever ZeRO runs; on one GPU without it the Trainer's 16 bytes/param",
            "ZeRO: examples/deepspeed/ds_z3_config.json (reduce_bucket_size and stage3_prefetch_bucket_size "
            "'auto', overlap_comm false); ds_z2_config.json reduce_bucket_size 5e8",
            "4-bit base sharded under ZeRO-3/FSDP: bnb_4bit_quant_storage set 'crucial for fsdp+qlora' "
            "(src/llamafactory/model/model_utils/quantization.py)",
            "TP/PP: Megatron-core backend through mcore_adapter (README, 2025-10-26)",
        ),
        single_gpu_accounting="zero",
    ),
    Framework(
        name="hf",
        description="Hugging Face Trainer with accelerate FSDP",
        loss="fp32",
        loss_chunks=1,
        checkpointing="none",
        optimizer="adamw",
        full_is_pure_bf16=False,
        sharding="fsdp",
        stages=(0, 2, 3),
        shards_quantized_base=True,
        reduce_bucket=None,
        zero12_reduce_bucket=None,
        prefetch_bucket=None,
        overlap_comm=False,
        state_accounting="zero",
        fragmentation=FRAGMENTATION,
        stack_efficiency=GEMM_EFFICIENCY,
        model_parallel=False,
        optimizer_step="fused",
        sources=(
            "optimizer step: the Trainer's default optim adamw_torch_fused with torch >= 2.8 (transformers "
            "training_args.py default_optim; adamw_torch, foreach, before: --optimizer-step foreach); "
            "kernels: Hugging Face's eager modelling "
            "code (LlamaRMSNorm, apply_rotary_pos_emb), waiting on the GPU once a layer in its flash path",
            "loss: logits.float() in ForCausalLMLoss (src/transformers/loss/loss_utils.py)",
            "checkpointing: TrainingArguments.gradient_checkpointing default False",
            "FSDP: FULL_SHARD, TRANSFORMER_BASED_WRAP, BACKWARD_PRE (accelerate's FSDP defaults, as "
            "LLaMA-Factory's examples/accelerate/fsdp_config.yaml); FSDP has no optimizer-only stage",
            "FSDP-QLoRA: bnb_4bit_quant_storage in the model dtype lets FSDP shard the 4-bit base",
        ),
    ),
    Framework(
        name="torchtune",
        description="torchtune recipes (FSDP2)",
        loss="chunked",
        loss_chunks=8,
        checkpointing="full",
        optimizer="adamw",
        full_is_pure_bf16=True,
        sharding="fsdp2",
        stages=(0, 2, 3),
        shards_quantized_base=True,
        reduce_bucket=None,
        zero12_reduce_bucket=None,
        prefetch_bucket=None,
        overlap_comm=True,
        state_accounting="zero",
        fragmentation=FRAGMENTATION,
        stack_efficiency=GEMM_EFFICIENCY,
        model_parallel=False,
        optimizer_step="fused",
        host_syncs=False,
        grouped_experts=True,
        sources=(
            "MoE: GroupedExperts with grouped_mm over the routed tokens (torchtune/modules/moe/experts.py)",
            "optimizer step: AdamW fused: True in the recipe configs; kernels eager unless compile: True "
            "(compile defaults to False); no host sync per layer",
            "loss: LinearCrossEntropyLoss, num_output_chunks=8 "
            "(torchtune/modules/loss/cross_entropy_loss.py; recipes/configs/llama3_1/8B_full.yaml)",
            "checkpointing: enable_activation_checkpointing: True in the recipe configs",
            "full = bf16 weights, gradients and AdamW states (dtype: bf16 in the configs, no fp32 master)",
            "optimizer: torch.optim.AdamW in distributed configs (single-device full configs use "
            "bitsandbytes PagedAdamW8bit with optimizer_in_bwd: pass --optimizer adamw-8bit)",
            "FSDP2 with tok_embeddings and output sharded as their own units (custom_sharded_layers); "
            "QLoRA's NF4Tensor shards under FSDP2 (405B_qlora configs)",
        ),
    ),
    Framework(
        name="unsloth",
        description="Unsloth (single GPU or DDP)",
        loss="fused",
        loss_chunks=1,
        checkpointing="offload",
        optimizer="adamw-8bit",
        full_is_pure_bf16=True,
        sharding="ddp",
        stages=(0,),
        shards_quantized_base=False,
        reduce_bucket=None,
        zero12_reduce_bucket=None,
        prefetch_bucket=None,
        overlap_comm=False,
        state_accounting="zero",
        fragmentation=FRAGMENTATION_EXPANDABLE,
        stack_efficiency=GEMM_EFFICIENCY,
        model_parallel=False,
        optimizer_step="fused",
        fused_kernels=True,
        sources=(
            "kernels: Triton RMSNorm, RoPE, SwiGLU and fast_lora (unsloth/kernels)",
            "loss: unsloth_fused_ce_loss, chunked so no full logits are held (unsloth/models/llama.py; "
            "unsloth-zoo unsloth_zoo/fused_losses/cross_entropy_loss.py)",
            "checkpointing: use_gradient_checkpointing='unsloth' offloads layer inputs to host RAM",
            "optimizer: optim='adamw_8bit' in Unsloth's example notebooks and README",
            "allocator: PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (unsloth_zoo/__init__.py)",
            "no ZeRO/FSDP: multi-GPU runs are DDP replicas, so the 4-bit base is whole on every GPU",
        ),
    ),
    Framework(
        name="deepspeed",
        description="DeepSpeed engine with its own config defaults",
        loss="fp32",
        loss_chunks=1,
        checkpointing="none",
        optimizer="adamw",
        full_is_pure_bf16=False,
        sharding="deepspeed",
        stages=(0, 1, 2, 3),
        shards_quantized_base=True,
        reduce_bucket=5e8,
        zero12_reduce_bucket=5e8,
        prefetch_bucket=5e7,
        overlap_comm=False,
        state_accounting="deepspeed",
        fragmentation=FRAGMENTATION,
        stack_efficiency=GEMM_EFFICIENCY,
        model_parallel=True,
        optimizer_step="fused",
        sources=(
            "optimizer step: DeepSpeed's FusedAdam when its config names AdamW (deepspeed/ops/adam)",
            "buckets: reduce_bucket_size 5e8, stage3_prefetch_bucket_size 5e7, "
            "stage3_max_live_parameters 1e9 (deepspeed/runtime/zero/config.py); "
            "overlap_comm defaults to True at stage 3 only",
            "states: bf16 weights and gradients, fp32 master, moments and gradient partition (the 18 "
            "bytes/param of deepspeed/runtime/zero/stage3.py's estimator)",
            "checkpointing: activation_checkpointing is opt-in in the DeepSpeed config",
            "TP/PP: PipelineModule and AutoTP (ZeRO-1 with pipeline parallelism)",
        ),
    ),
    Framework(
        name="megatron",
        description="Megatron-LM / Megatron-core (NeMo, Megatron-Bridge)",
        loss="vocab-parallel",
        loss_chunks=1,
        checkpointing="none",
        optimizer="adamw",
        full_is_pure_bf16=False,
        sharding="megatron",
        stages=(0, 1),
        shards_quantized_base=False,
        reduce_bucket=None,
        zero12_reduce_bucket=None,
        prefetch_bucket=None,
        overlap_comm=True,
        state_accounting="megatron",
        fragmentation=FRAGMENTATION,
        stack_efficiency=MEGATRON_GEMM_EFFICIENCY,
        model_parallel=True,
        optimizer_step="fused",
        fused_kernels=True,
        host_syncs=False,
        attention_kernel="cudnn",
        interleaved_pipeline=True,
        tp_comm_overlap=False,
        grouped_experts=True,
        sources=(
            "MoE: TEGroupedMLP, grouped GEMM with expert parallelism (--moe-grouped-gemm in MoE recipes)",
            "kernels: Transformer Engine (fused norms, cuDNN attention); interleaved pipeline as its recipes "
            "run it (Megatron-Bridge perf recipes)",
            "TP collectives exposed: --tp-comm-overlap is store_true, off unless given "
            "(megatron/training/arguments.py), and the published TP 8 runs (MindSpeed-LLM's GPU references, "
            "Megatron-LM's 2021 weak-scaling table) ran without it; tp_comm_overlap=True for a run "
            "that sets it",
            "loss: vocab_parallel_cross_entropy on an fp32 copy, softmax and gradient in place "
            "(megatron/core/tensor_parallel/cross_entropy.py)",
            "checkpointing: --recompute-granularity defaults to None; attention runs in fused/flash kernels, "
            "so no s x s scores are stored (what selective recompute would save)",
            "states: bf16 parameters, fp32 main gradients: 18 bytes/param, 6 + 12/d with the distributed "
            "optimizer (docs/user-guide/features/dist_optimizer.md)",
            "sequence parallelism with TP (--sequence-parallel in the published configs)",
            "MFU 41-47% on H100 (README, Performance Benchmarking)",
        ),
    ),
)

PROFILES: dict[str, Framework] = {profile.name: profile for profile in _PROFILES}
FRAMEWORKS: tuple[str, ...] = tuple(PROFILES)
# LLaMA-Factory is what most of the fine-tuning questions we answer run on, and its defaults are
# the ones gpuplan's sizing followed before profiles existed (full checkpointing, fp32 logits).
DEFAULT_FRAMEWORK = "llamafactory"


def framework(name: str) -> Framework:
    """The profile called `name`; ValueError naming the known ones otherwise."""
    try:
        return PROFILES[name.strip().lower()]
    except KeyError:
        raise ValueError(f"framework must be one of {', '.join(FRAMEWORKS)}, got {name!r}") from None

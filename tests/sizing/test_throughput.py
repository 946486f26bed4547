"""sizing/throughput.py: FLOP identities, the MFU prior's direction, and case 20 (Llama 2)."""

from __future__ import annotations

import pytest

from sizing import throughput
from sizing.catalog import find_gpu
from sizing.frameworks import PRETRAIN_STACK_EFFICIENCY
from sizing.planner import prepare, requirements
from sizing.setup import TrainingSetup


def test_full_flops_are_6n_plus_the_causal_attention_term():
    # MosaicML's 6 x params + 12 x layers x hidden x seq per token counts the full s x s square; a
    # causal kernel does half of it (Megatron-Core's counter): 6N + 6Lhs, the MFU convention
    seq = 4096
    sizing = prepare("llama-2-7b", "full", TrainingSetup(seq_len=seq, checkpointing="none"))
    spec = sizing.spec
    six_n = 6 * spec.active_matmul_params_per_token
    lhs = spec.layers * spec.hidden * seq
    assert sizing.work.model_flops_per_token == six_n + 6 * lhs
    # executed: FlashAttention-2's backward recomputes the scores, 2.5 forwards of 2Lhs each
    assert sizing.work.gemm_flops_per_token == six_n
    assert sizing.work.attention_flops_per_token == pytest.approx(2 * lhs * 3.5)
    # without flash the products are GEMMs over the whole square, backward twice forward
    eager = prepare(
        "llama-2-7b", "full", TrainingSetup(seq_len=seq, checkpointing="none", flash_attention=False)
    )
    assert eager.work.gemm_flops_per_token == six_n + 12 * lhs
    assert eager.work.attention_flops_per_token == 0


def test_full_recompute_adds_one_forward_of_the_layers():
    seq = 2048
    sizing = prepare("llama-2-7b", "full", TrainingSetup(seq_len=seq, checkpointing="full"))
    spec = sizing.spec
    layer_matmuls = 2 * (spec.active_matmul_params_per_token - spec.vocab * spec.hidden)
    causal_attention = 2 * spec.layers * spec.hidden * seq  # one causal forward of the products
    # the forward again (matmuls and attention), and the kernel's backward recompute (0.5 of it)
    assert sizing.work.hardware_flops_per_token - sizing.work.model_flops_per_token == pytest.approx(
        layer_matmuls + causal_attention * 1.5
    )


def test_mfu_override_sets_tokens_per_second():
    gpu = find_gpu("H100 SXM 80GB")
    sizing = prepare("7B", "lora", TrainingSetup(mfu=0.3))
    tokens, mfu = throughput.tokens_per_second(sizing.work, gpu, 4, 0, sizing.setup)
    assert mfu == 0.3
    assert tokens == pytest.approx(4 * 989e12 * 0.3 / sizing.work.model_flops_per_token)


def _single_gpu_tokens(model: str, method: str, gpu: str = "A100 SXM 80GB", **options: object) -> float:
    sizing = prepare(model, method, TrainingSetup(**options))  # type: ignore[arg-type]
    return throughput.tokens_per_second(sizing.work, find_gpu(gpu), 1, 0, sizing.setup)[0]


def test_lora_is_about_a_quarter_faster_than_full():
    # LoRA paper (GPT-3 175B): 25% faster than full fine-tuning (its setup is not stated, so
    # ±15%). Counted, not assumed: 4N instead of 6N FLOPs (1.5x), less the adapters' memory
    # traffic and launches. Short sequences, so the attention term (the same for both) is small;
    # long steps, so full's optimizer update is.
    options = {"seq_len": 256, "checkpointing": "none", "grad_accum": 512}
    ratio = _single_gpu_tokens("70B", "lora", **options) / _single_gpu_tokens("70B", "full", **options)
    assert ratio == pytest.approx(1.25, rel=0.15)
    assert ratio < 1.5


def test_qlora_pays_for_dequantisation_and_offload_for_the_host_link():
    assert _single_gpu_tokens("7B", "qlora") < _single_gpu_tokens("7B", "lora")
    sizing = prepare("70B", "full")
    offloaded = prepare("70B", "full", TrainingSetup(offload="optimizer"))
    gpu = find_gpu("H100 SXM 80GB")
    plain = throughput.step_seconds(sizing.work, gpu, 8, 3, "none", sizing.setup.efficiency, 50)
    slow = throughput.step_seconds(offloaded.work, gpu, 8, 3, "optimizer", sizing.setup.efficiency, 50)
    assert slow > plain


def _mfu(rows, gpu_model: str, gpu_count: int) -> float:
    return next(r.mfu for r in rows if r.gpu_model == gpu_model and r.gpu_count == gpu_count)


def test_pcie_only_scales_worse_than_nvlink():
    # same A100 silicon and peak; ZeRO-3 moves 1.5x the model per micro-batch
    rows = requirements(
        "8B",
        "full",
        gpu_counts=(1, 8),
        gpus=["A100 SXM 80GB", "A100 PCIe 80GB"],
        setup=TrainingSetup(zero_stage=3, seq_len=1024),
    )
    assert _mfu(rows, "A100 PCIe 80GB", 8) < _mfu(rows, "A100 SXM 80GB", 8)
    assert _mfu(rows, "A100 PCIe 80GB", 8) < _mfu(rows, "A100 PCIe 80GB", 1)


def test_multi_node_scales_worse():
    rows = requirements(
        "70B", "full", gpu_counts=(8, 16), gpus=["H100 SXM 80GB"], setup=TrainingSetup(zero_stage=3)
    )
    one_node, two_nodes = (next(r for r in rows if r.gpu_count == n) for n in (8, 16))
    assert not one_node.multi_node and two_nodes.multi_node
    assert two_nodes.mfu < one_node.mfu


# Case 20: Llama 2 pretraining, 2T tokens on A100-80GB (model card GPU-hours), ±15% with a
# pretraining stack (fused kernels, no recompute, sequences of 4096, ZeRO-3 on a node).
@pytest.mark.parametrize(
    ("model", "gpu_hours"), [("llama-2-7b", 184_320), ("llama-2-13b", 368_640), ("llama-2-70b", 1_720_320)]
)
def test_case_20_llama_2_gpu_hours(model, gpu_hours):
    setup = TrainingSetup(
        seq_len=4096,
        grad_accum=16,
        checkpointing="none",
        stack_efficiency=PRETRAIN_STACK_EFFICIENCY,
        fused_kernels=True,
    )
    sizing = prepare(model, "full", setup)
    tokens_per_s, mfu = throughput.tokens_per_second(
        sizing.work, find_gpu("A100 SXM 80GB"), 8, 3, sizing.setup
    )
    assert 2e12 / (tokens_per_s / 8) / 3600 == pytest.approx(gpu_hours, rel=0.15)
    # the implied MFU band with causal attention FLOPs counted (0.41-0.44)
    assert 0.40 <= mfu <= 0.50

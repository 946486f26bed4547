"""sizing/throughput.py term by term: each test pins one term of a micro-batch or a step to a case
computed by hand from its source, exactly (to rounding), so a term doubled, halved, dropped or
allowed below zero fails. Rates and byte counts are round numbers chosen to give each term its
own size in seconds."""

from __future__ import annotations

from dataclasses import replace

import pytest
from synthetic_states import mixed_adam_states

from sizing import collectives, hf_config, kernels, throughput
from sizing.catalog import find_gpu, load_gpus
from sizing.methods import NF4_DQ_BYTES_PER_PARAM
from sizing.parallel import Layout, stage_share
from sizing.planner import prepare
from sizing.setup import TrainingSetup

H100 = find_gpu("H100 SXM 80GB")  # NVLink 4: 900 GB/s both ways, 8 a node, PCIe 5.0 to the host
LLAMA_7B = prepare("llama-2-7b", "full")  # LLaMA-Factory: full checkpointing, seq 2048, batch 1
WORK = LLAMA_7B.work
RATES = throughput.GpuRates(gemm_flops_per_s=1e15, attention_flops_per_s=0.5e15, bytes_per_s=2e12)
NVLINK_GB_PER_S = 900 / 2 * 0.8  # one direction at nccl-tests' 80%
INTERNODE = 50.0


# MAMF finder (stas00/ml-engineering compute/accelerator/README.md, 744d01e1): the measured BF16
# matmul TFLOPS and the peak it was measured against.
MAMF_TFLOPS = {
    "A100": (271.2, 312),
    "A800": (271.2, 312),  # A100 silicon
    "H100": (794.5, 989),
    "H800": (794.5, 989),  # H100 silicon
    "H200": (794.5, 989),  # "H200 is the same"
    "GH200": (828.6, 989),
    "B200": (1745, 2250),
    "B300": (1769, 2250),
    "GB200": (1822, 2500),
    "MI300X": (668.4, 1300),
    "MI325X": (784.9, 1300),
    "MI355X": (1565, 2500),
    "Gaudi 2": (418.7, 432),
    "Gaudi 3": (1243, 1677),
}


@pytest.mark.parametrize("family", MAMF_TFLOPS)
def test_every_measured_cards_matmul_ceiling(family):
    measured, peak = MAMF_TFLOPS[family]
    for gpu in (gpu for gpu in load_gpus() if gpu.family == family):
        rates = throughput.gpu_rates(gpu, 1.0, "flash2")
        assert rates.gemm_flops_per_s / (gpu.bf16_dense_tflops * 1e12) == pytest.approx(measured / peak)


def test_rates_at_the_stack_efficiency_and_sustained_bandwidth():
    rates = throughput.gpu_rates(H100, 0.5, "flash2")
    assert rates.gemm_flops_per_s == pytest.approx(794.5e12 * 0.5)
    # FlashAttention-2 on H100: 0.40 of the ceiling (FlashAttention-3 paper, Fig. 5-6); cuDNN 0.62
    assert rates.attention_flops_per_s == pytest.approx(794.5e12 * 0.40)
    assert throughput.gpu_rates(H100, 0.5, "cudnn").attention_flops_per_s == pytest.approx(794.5e12 * 0.62)
    assert rates.bytes_per_s == pytest.approx(3350e9 * 0.9)


def _layout_work(layout: Layout, tp_bytes: float = 0.0, handoff_bytes: float = 0.0) -> throughput.LayoutWork:
    # 1 s of GEMMs, 1 s of attention, 1 s of memory-bound work and 0.5 s of host launches
    return throughput.LayoutWork(layout, 1e15, 0.5e15, 2e12, 0.5, tp_bytes, handoff_bytes, 1, 1.0)


def test_host_launches_add_when_the_host_waits_and_overlap_otherwise():
    lw = _layout_work(Layout())
    assert throughput.microbatch_seconds(WORK, H100, RATES, lw, INTERNODE) == pytest.approx(3.5)
    free = replace(WORK, host_syncs=False)
    assert throughput.microbatch_seconds(free, H100, RATES, lw, INTERNODE) == pytest.approx(3.0)


def test_tensor_parallel_bytes_at_tp_2():
    # Megatron's f/g all-reduces: 4 a layer, 6 with full recompute, each ring all-reduce moving
    # 2 (t - 1)/t of one layer's activation (batch x seq x hidden x 2 bytes) per GPU
    message = 1 * 2048 * 4096 * 2
    lw = throughput.layout_work(WORK, Layout(tp=2))
    assert WORK.tp_collectives_per_layer == 6
    assert lw.tp_bytes == pytest.approx(32 * 6 * 2 * (1 / 2) * message)
    assert throughput.layout_work(WORK, Layout()).tp_bytes == 0.0


def test_exposed_tensor_parallel_communication():
    # 720 GB over NVLink's 360 GB/s: 2 s; not overlapped it all adds, overlapped only what the
    # GEMMs' 1 s does not hide, and never less than nothing
    lw = _layout_work(Layout(tp=2), tp_bytes=2 * NVLINK_GB_PER_S * 1e9)
    plain = replace(WORK, tp_comm_overlap=False, host_syncs=False)
    assert throughput.microbatch_seconds(plain, H100, RATES, lw, INTERNODE) == pytest.approx(3 + 2)
    overlapped = replace(plain, tp_comm_overlap=True)
    assert throughput.microbatch_seconds(overlapped, H100, RATES, lw, INTERNODE) == pytest.approx(3 + 1)
    # 0.5 s of collectives behind 1 s of GEMMs: all hidden but the last of Transformer Engine's 4
    # chunks of the forward reduce-scatters after the projection and FC2 (with full recompute two
    # forward passes of the 6 all-reduce equivalents, each one all-reduce's bytes of them): 0.5/12
    hidden = _layout_work(Layout(tp=2), tp_bytes=0.5 * NVLINK_GB_PER_S * 1e9)
    assert throughput.microbatch_seconds(overlapped, H100, RATES, hidden, INTERNODE) == pytest.approx(
        3 + 0.5 * 2 / 6 / 4
    )


def test_pipelined_reduce_scatter_tail():
    # transformer_engine/pytorch/module/base.py: proj_fprop and fc2_fprop overlap as "pipeline" with
    # num_splits 4. Without recompute a layer moves 4 all-reduce equivalents (2 forward, 2 backward);
    # the forward's two reduce-scatters are one all-reduce's bytes, a quarter of the layer's; the
    # last of 4 chunks of them stays exposed: 1/16. With full recompute 2 of 6, a quarter: 1/12.
    assert throughput.TE_PIPELINE_SPLITS == 4
    assert throughput.pipelined_tail(replace(WORK, tp_collectives_per_layer=4)) == pytest.approx(1 / 16)
    assert throughput.pipelined_tail(WORK) == pytest.approx(1 / 12)


def test_pipeline_handoffs_inside_a_node_and_across_nodes():
    # One activation forward and one gradient backward a boundary: 2 x message (split over TP
    # with sequence parallelism), per virtual stage
    message = 1 * 2048 * 4096 * 2
    assert throughput.layout_work(WORK, Layout(pp=2), virtual=3).handoff_bytes == 2 * 3 * message
    sp = replace(WORK, sequence_parallel=True)
    assert throughput.layout_work(sp, Layout(tp=2, pp=2)).handoff_bytes == 2 * message / 2
    assert throughput.layout_work(WORK, Layout(tp=2)).handoff_bytes == 0.0
    free = replace(WORK, host_syncs=False, tp_comm_overlap=True)
    # inside a node at NVLink's one direction (360 GB/s): 1 s for 360 GB
    inside = _layout_work(Layout(pp=2), handoff_bytes=NVLINK_GB_PER_S * 1e9)
    assert throughput.microbatch_seconds(free, H100, RATES, inside, INTERNODE) == pytest.approx(3 + 1)
    # TP8 x PP2 spans two nodes: the same bytes at the network's 50 GB/s x 0.8 (9 s)
    across = _layout_work(Layout(tp=8, pp=2), handoff_bytes=NVLINK_GB_PER_S * 1e9)
    seconds = throughput.microbatch_seconds(free, H100, RATES, across, INTERNODE)
    assert seconds == pytest.approx(3 + NVLINK_GB_PER_S / (INTERNODE * 0.8))


def test_a_split_layouts_share_of_the_micro_batch():
    # TP2 x PP2 of 32 layers: the last stage's 16 layers and the LM head over 2 GPUs for GEMMs;
    # its 16 layers over 2 for attention, element-wise bytes; host launches for 16 of 32 layers
    spec, tokens = LLAMA_7B.spec, 2048
    head = spec.vocab * spec.hidden
    layers = spec.active_matmul_params_per_token - head
    gemm_share = (layers / 2 + head) / spec.active_matmul_params_per_token / 2
    lw = throughput.layout_work(WORK, Layout(tp=2, pp=2))
    assert lw.gemm_flops == pytest.approx(tokens * WORK.gemm_flops_per_token * gemm_share)
    assert lw.attention_flops == pytest.approx(tokens * WORK.attention_flops_per_token / 4)
    assert lw.memory_bytes == pytest.approx(WORK.memory_bytes_per_microbatch / 4)
    assert lw.host_seconds == pytest.approx(WORK.host_ops_per_microbatch * 10e-6 / 2)


STATES = mixed_adam_states(1_000_000_000)
STEP_WORK = replace(WORK, states=STATES, grad_accum=4, accounting="zero")


def _step(gpu_count: int, stage: int, offload: str, microbatch: float) -> float:
    lw = _layout_work(Layout())
    return throughput._step_seconds(STEP_WORK, H100, gpu_count, stage, offload, INTERNODE, microbatch, lw)


def test_the_optimizer_update_reads_gradients_and_reads_and_writes_the_states():
    # one GPU: 4 micro-batches of 1 s, then 2 x 12 GB of states and 2 GB of gradients at 3.35 TB/s
    assert _step(1, 0, "none", 1.0) == pytest.approx(4 + (2 * 12 + 2) / 3350)
    # ZeRO-1 over 8 on one node: each GPU updates an eighth; the gradients' all-reduce per step
    # (2 x 7/8 x 2 GB at 360 GB/s) hides behind the last micro-batch
    assert _step(8, 1, "none", 1.0) == pytest.approx(4 + (2 * 12 + 2) / 8 / 3350)


def test_collectives_the_micro_batches_cannot_hide():
    # ZeRO-3 over 16 GPUs on two nodes: every micro-batch all-gathers the weights twice and
    # reduce-scatters the gradients, 15/16 x (2 x 2 + 2) GB at the network's 40 GB/s
    comm = 15 / 16 * 6 / 40
    update = (2 * 12 + 2) / 16 / 3350
    assert _step(16, 3, "none", 0.01) == pytest.approx(4 * comm + update)
    assert _step(16, 3, "none", 1.0) == pytest.approx(4 * 1.0 + update)
    # ZeRO-2: the reduce-scatter each micro-batch, the updated weights' all-gather (2 bytes a
    # parameter) once, behind the last one
    per_micro, per_step = 15 / 16 * 2 / 40, 15 / 16 * 2 / 40
    assert _step(16, 2, "none", 0.01) == pytest.approx(4 * per_micro + per_step + update)


def test_the_pipeline_bubble():
    # 1F1B over 4 stages: (p - 1) more micro-batch slots; interleaved v = 2 halves them
    lw = replace(_layout_work(Layout(pp=4)), share=0.25)
    base = throughput._step_seconds(STEP_WORK, H100, 4, 0, "none", INTERNODE, 1.0, lw)
    update = (2 * 12 + 2) * 0.25 / 3350
    assert base == pytest.approx(4 + 3 + update)
    interleaved = throughput._step_seconds(
        STEP_WORK, H100, 4, 0, "none", INTERNODE, 1.0, replace(lw, virtual=2)
    )
    assert interleaved == pytest.approx(4 + 1.5 + update)


def test_offload_timing():
    # ZeRO-Offload over 16 GPUs on 2 nodes: each GPU sends its gradient shard down and takes its
    # bf16 weights back over PCIe 5.0 (64 GB/s one way), then each node's CPUs read and write the
    # optimizer states of its GPUs at 100 GB/s; offloading all also brings each GPU's weight shard
    # up twice (forward and backward) every micro-batch
    host = collectives.host_link_gb_per_s(H100)
    assert host == 64.0
    link = (2 + 2 * 1) / 16 / host
    cpu = 2 * 12 / 2 / collectives.CPU_MEMORY_GB_PER_S
    assert _step(16, 3, "optimizer", 1.0) == pytest.approx(4 + link + cpu)
    weights = 4 * 2 * 2 / 16 / host
    assert _step(16, 3, "all", 1.0) == pytest.approx(4 + link + cpu + weights)


def test_freeze_flops():
    # Freeze-tuning 2 of 32 layers: the forward through everything (2N), backward only through the
    # LM head's input gradient (2 x vocab x hidden) and the 2 trained layers (4 x their weights);
    # attention backward for those 2 layers
    seq = 2048
    sizing = prepare(
        "llama-2-7b", "freeze", TrainingSetup(seq_len=seq, checkpointing="none", freeze_trainable_layers=2)
    )
    spec = sizing.spec
    head = spec.vocab * spec.hidden
    layer = (spec.active_matmul_params_per_token - head) / spec.layers
    attention = 0.5 * 2 * spec.layers * seq * 2 * spec.hidden  # causal: half the square
    matmul = 2 * spec.active_matmul_params_per_token + 2 * head + 2 * 2 * 2 * layer
    assert sizing.work.model_flops_per_token == pytest.approx(matmul + attention * (1 + 2 * 2 / 32))
    assert sizing.work.gemm_flops_per_token == pytest.approx(matmul)


def test_lora_flops():
    # forward 2N, input gradients 2N, no weight gradients of the base; 6 per adapter parameter
    seq = 2048
    sizing = prepare("llama-2-7b", "lora", TrainingSetup(seq_len=seq, checkpointing="none"))
    spec = sizing.spec
    adapters = 19_988_480
    attention = 0.5 * 2 * spec.layers * seq * 2 * spec.hidden
    expected = 4 * spec.active_matmul_params_per_token + 6 * adapters + 3 * attention
    assert sizing.work.model_flops_per_token == pytest.approx(expected)


def test_tokens_per_second_and_mfu_of_a_step():
    sizing = prepare("llama-2-7b", "lora")
    w, setup = sizing.work, sizing.setup
    tokens, mfu = throughput.tokens_per_second(w, H100, 8, 0, setup)
    seconds = throughput.step_seconds(w, H100, 8, 0, "none", setup.efficiency, setup.internode_gb_per_s)
    assert tokens == pytest.approx(8 * setup.grad_accum * 2048 / seconds)
    assert mfu == pytest.approx(tokens * w.model_flops_per_token / (8 * 989e12))


@pytest.mark.parametrize("model", ["H20 96GB", "H20 141GB", "L20 48GB"])
def test_cards_below_their_power_budget_run_gemms_at_full_clock(model):
    # no MAMF measurement: the A100's 0.869 at the 1305 of 1410 MHz it holds at its power limit
    # is a pipeline of 0.939 at full clock, which a card far below its power budget keeps
    gpu = find_gpu(model)
    rates = throughput.gpu_rates(gpu, 1.0, "flash2")
    assert rates.gemm_flops_per_s == pytest.approx(
        gpu.bf16_dense_tflops * 1e12 * 0.8686 * 1410 / 1305, rel=1e-3
    )


# (card, datasheet board watts, expected ceiling): under the A100's 312 TFLOPS / 400 W = 0.78 dense
# TFLOPS a watt a card of the A100's lineage holds its clock (0.939); past it, the default 0.803
POWER_BUDGET_CASES = [
    ("RTX 3090 24GB", 350, 0.939),  # 71 / 350 = 0.20
    ("RTX 4090 24GB", 450, 0.939),  # 165.2 / 450 = 0.37
    ("RTX 4090D 24GB", 425, 0.939),
    ("RTX 4080 16GB", 320, 0.939),
    ("RTX 4080 SUPER 16GB", 320, 0.939),
    ("RTX A4000 16GB", 140, 0.939),
    ("RTX A5000 24GB", 230, 0.939),
    ("RTX A6000 48GB", 300, 0.939),
    ("RTX 2000 Ada 16GB", 70, 0.939),  # 48 / 70 = 0.69
    ("RTX 4000 Ada 20GB", 130, 0.939),
    ("A40 48GB", 300, 0.939),
    ("L40 48GB", 300, 0.939),
    ("L20 48GB", 275, 0.939),  # 119.5 / 275 = 0.43
    ("H20 96GB", 400, 0.939),  # 148 / 400 = 0.37
    ("RTX 6000 Ada 48GB", 300, 0.803),  # 364.2 / 300 = 1.21: throttles, unmeasured
    ("A10 24GB", 150, 0.803),  # 125 / 150 = 0.83
    ("L4 24GB", 72, 0.803),  # 121 / 72 = 1.68
    ("L40S 48GB", 350, 0.803),  # 362 / 350 = 1.03
]


@pytest.mark.parametrize(("model", "watts", "ceiling"), POWER_BUDGET_CASES)
def test_unmeasured_cards_ceiling_from_their_own_power_budget(model, watts, ceiling):
    gpu = find_gpu(model)
    assert throughput.BOARD_POWER_W[gpu.family] == watts
    assert (gpu.bf16_dense_tflops / watts < 312 / 400) == (ceiling > 0.9)
    rates = throughput.gpu_rates(gpu, 1.0, "flash2")
    assert rates.gemm_flops_per_s / (gpu.bf16_dense_tflops * 1e12) == pytest.approx(ceiling, abs=1e-3)


@pytest.mark.parametrize(
    "model", ["V100 SXM 32GB", "T4 16GB", "RTX 5090 32GB", "MI250 64GB", "Ascend 910B 64GB"]
)
def test_cards_outside_the_lineage_keep_the_default_ceiling(model):
    gpu = find_gpu(model)
    assert throughput.matmul_ceiling(gpu) == pytest.approx(794.5 / 989)


def test_h20_attention_from_its_own_balance_of_tensor_and_vector_rates():
    # the H100's FlashAttention-2 spends 1/0.40 - 1 = 1.5 of its matmul time outside the tensor
    # cores (cuDNN 1/0.62 - 1); the H20 does that work at 44 of the H100's 66.9 vector TFLOPS and its
    # matmuls at 139 of 794.5
    h20 = find_gpu("H20 96GB")
    matmul = 148 * 271.2 / 312 * 1410 / 1305
    for kernel, h100 in (("flash2", 0.40), ("cudnn", 0.62)):
        expected = 1 / (1 + (1 / h100 - 1) * (66.9 / 44) * (matmul / 794.5))
        rates = throughput.gpu_rates(h20, 1.0, kernel)
        assert rates.attention_flops_per_s == pytest.approx(matmul * 1e12 * expected)
    assert 0.70 < 1 / (1 + 1.5 * (66.9 / 44) * (matmul / 794.5)) < 0.73


# meta-llama/Llama-4-Scout-17B-16E config.json's text model: 16 experts, 1 a token
SCOUT = {
    "model_type": "llama4",
    "text_config": {
        "model_type": "llama4_text",
        "num_hidden_layers": 48,
        "hidden_size": 5120,
        "num_attention_heads": 40,
        "num_key_value_heads": 8,
        "head_dim": 128,
        "intermediate_size": 8192,
        "vocab_size": 202048,
        "num_local_experts": 16,
        "num_experts_per_tok": 1,
        "tie_word_embeddings": False,
    },
}


@pytest.mark.parametrize(("method", "passes"), [("lora", 2), ("full", 3)])
def test_a_dense_loop_over_all_experts_multiplies_every_token_through_them(method, passes):
    # Hugging Face's Llama4TextMoe runs all 16 experts on every token: 15 idle experts' gate, up
    # and down (3 x 5120 x 8192 each) in 48 layers, forward and backward (input gradients, and
    # weight gradients in full training); torchtune's grouped experts run the routed one only
    spec = hf_config.from_dict(SCOUT, "scout")
    assert spec.experts_run_dense
    idle = 48 * 15 * 3 * 5120 * 8192
    assert throughput.idle_expert_params(spec) == idle
    setups = {fw: TrainingSetup(framework=fw, checkpointing="none") for fw in ("hf", "torchtune")}
    hf, grouped = (prepare(spec, method, setup).work for setup in setups.values())
    assert hf.gemm_flops_per_token - grouped.gemm_flops_per_token == pytest.approx(passes * 2 * idle)
    assert hf.model_flops_per_token == grouped.model_flops_per_token  # MFU counts the routed experts
    # full recompute runs the forward through all of them once more
    recomputed = prepare(spec, method, TrainingSetup(framework="hf", checkpointing="full")).work
    plain = prepare(spec, method, TrainingSetup(framework="torchtune", checkpointing="full")).work
    assert recomputed.gemm_flops_per_token - plain.gemm_flops_per_token == pytest.approx(
        (passes + 1) * 2 * idle
    )


def test_routed_loops_count_the_routed_experts_only():
    mixtral = prepare("mixtral-8x7b", "lora", TrainingSetup(framework="hf", checkpointing="none")).work
    grouped = prepare("mixtral-8x7b", "lora", TrainingSetup(framework="torchtune", checkpointing="none")).work
    assert mixtral.gemm_flops_per_token == grouped.gemm_flops_per_token


def test_tensor_parallel_overlap_needs_cuda():
    # Transformer Engine's userbuffers overlap (Megatron's --tp-comm-overlap) runs on NVIDIA GPUs
    # only: on an Ascend the TP collectives are all exposed (MindSpeed's MC2 is opt-in)
    ascend = find_gpu("Ascend 910B2 64GB")
    assert not ascend.runs_cuda and H100.runs_cuda and not find_gpu("MI300X 192GB").runs_cuda
    overlapped = replace(WORK, tp_comm_overlap=True, host_syncs=False)
    lw = _layout_work(Layout(tp=2), tp_bytes=0.5 * NVLINK_GB_PER_S * 1e9)
    comm = lw.tp_bytes / (collectives.collective_gb_per_s(ascend, 2, INTERNODE) * 1e9)
    assert throughput.microbatch_seconds(overlapped, ascend, RATES, lw, INTERNODE) == pytest.approx(3 + comm)
    assert throughput.microbatch_seconds(overlapped, H100, RATES, lw, INTERNODE) == pytest.approx(
        3 + 0.5 / 12
    )


def test_freeze_executes_attention_and_memory_work_for_its_trained_layers():
    # 2 of 32 layers trained (share 1/16): flash attention forward everywhere, FlashAttention-2's
    # backward (2.5 forwards) and the recomputed forward only where backward runs
    seq, share = 2048, 2 / 32
    setup = TrainingSetup(seq_len=seq, checkpointing="full", freeze_trainable_layers=2, framework="hf")
    sizing = prepare("llama-2-7b", "freeze", setup)
    spec, w = sizing.spec, sizing.work
    attention = 0.5 * 2 * spec.layers * seq * 2 * spec.hidden
    assert w.attention_flops_per_token == pytest.approx(attention * (1 + 2.5 * share + share))
    # element-wise bytes: the forward, the recomputed forward of the trained layers, backward at twice
    # the forward's bytes there
    elementwise = 2048 * kernels.elementwise_bytes_per_token(spec, fused=False)
    assert w.memory_bytes_per_microbatch == pytest.approx(elementwise * (1 + share + 2 * share))
    # launches: every layer forward, the trained ones recomputed and backward
    assert w.host_ops_per_microbatch == (32 + 2 * 2) * kernels.layer_ops(False, 0, 0)
    # without flash: the score and value products as GEMMs over the full square, the same passes
    eager = prepare("llama-2-7b", "freeze", replace(setup, flash_attention=False)).work
    full_square = 2 * spec.layers * seq * 2 * spec.hidden
    assert eager.gemm_flops_per_token - w.gemm_flops_per_token == pytest.approx(full_square * (1 + 3 * share))
    scores = 24 * spec.heads * seq * spec.layers * 2048
    assert eager.memory_bytes_per_microbatch - w.memory_bytes_per_microbatch == pytest.approx(
        scores * (1 + 2 * share + share)
    )


def test_tp_collectives_without_recompute_and_the_shares_of_a_data_parallel_layout():
    plain = prepare("llama-2-7b", "full", TrainingSetup(checkpointing="none")).work
    assert plain.tp_collectives_per_layer == 4  # Megatron's f/g: two forward, two backward
    lw = throughput.layout_work(plain, Layout())
    assert (lw.share, lw.virtual, lw.host_seconds) == (
        1.0,
        1,
        pytest.approx(plain.host_ops_per_microbatch * 10e-6),
    )
    assert lw.gemm_flops == pytest.approx(2048 * plain.gemm_flops_per_token)
    split = throughput.layout_work(plain, Layout(tp=2, pp=2))
    assert split.share == pytest.approx(stage_share(LLAMA_7B.spec, Layout(tp=2, pp=2), True))


@pytest.mark.parametrize("checkpointing", ["none", "full"])
def test_lora_and_qlora_memory_traffic_and_launches(checkpointing):
    # LoRA adds its adapters' traffic (forward per forward pass, backward once) and A, B, scale and
    # add launches per adapted linear; QLoRA dequantises every NF4 linear's weights to bf16 once a
    # forward and once in backward (read 0.516 + write 2 bytes a weight), plus a dequantisation
    # launch pair per linear
    setup = TrainingSetup(seq_len=2048, checkpointing=checkpointing, framework="hf")
    full = prepare("llama-2-7b", "full", setup).work
    lora = prepare("llama-2-7b", "lora", setup).work
    qlora = prepare("llama-2-7b", "qlora", setup).work
    spec, tokens = LLAMA_7B.spec, 2048
    recomputes = checkpointing == "full"
    forward, backward = kernels.lora_bytes_per_token(spec, False, ("all",))
    adapters = tokens * (forward * (2 if recomputes else 1) + backward)
    assert lora.memory_bytes_per_microbatch - full.memory_bytes_per_microbatch == pytest.approx(adapters)
    dequant = (3 if recomputes else 2) * spec.decoder_linear_params * (NF4_DQ_BYTES_PER_PARAM + 2)
    assert qlora.memory_bytes_per_microbatch - lora.memory_bytes_per_microbatch == pytest.approx(dequant)
    passes = 32 + 32 * (2 if recomputes else 1)
    assert lora.host_ops_per_microbatch == passes * (40 + 4 * 7)
    assert qlora.host_ops_per_microbatch == passes * (40 + 4 * 7 + 2 * 7)
    assert full.host_ops_per_microbatch == passes * 40


def test_eager_scores_are_read_again_only_where_the_forward_reruns():
    # eager attention's score traffic: forward, backward at twice it, and once more where selective
    # (or full) recompute re-runs the products; no recompute reads them twice only
    seq = 2048
    spec = LLAMA_7B.spec
    flash = prepare("llama-2-7b", "full", TrainingSetup(seq_len=seq, checkpointing="none")).work
    scores = 24 * spec.heads * seq * spec.layers * seq
    for checkpointing, passes in (("none", 1 + 2), ("selective", 1 + 2 + 1)):
        setup = TrainingSetup(seq_len=seq, checkpointing=checkpointing, flash_attention=False)
        eager = prepare("llama-2-7b", "full", setup).work
        assert eager.memory_bytes_per_microbatch - flash.memory_bytes_per_microbatch == pytest.approx(
            scores * passes
        )

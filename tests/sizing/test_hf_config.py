"""sizing/hf_config.py: any model from its Hugging Face config.json, dense and MoE.

Fixtures in tests/sizing/fixtures/configs/ (their README says where each comes from). Published
totals: Mixtral-8x7B 46.7B / 12.9B active; Qwen3-30B-A3B 30.5B / 3.3B activated; DeepSeek-V3
671B / 37B activated (±1%); dense configs equal our presets exactly.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sizing import hf_config, kernels, throughput
from sizing.activations import layer_bytes
from sizing.models import resolve
from sizing.planner import prepare
from sizing.setup import TrainingSetup
from sizing.shapes import ModelSpec

CONFIGS = Path(__file__).parent / "fixtures" / "configs"


def config(name: str) -> ModelSpec:
    """The fixture's shape, as `config.model_files` gives it to sizing (the text, parsed)."""
    path = CONFIGS / f"{name}.json"
    return hf_config.parse(path.read_text(encoding="utf-8"), str(path))


@pytest.mark.parametrize(
    ("name", "total_b", "active_b"),
    [("mixtral-8x7b", 46.7, 12.9), ("qwen3-30b-a3b", 30.5, 3.3), ("deepseek-v3", 671, 37)],
)
def test_moe_total_for_memory_active_for_flops(name, total_b, active_b):
    spec = resolve(config(name))
    assert spec.params / 1e9 == pytest.approx(total_b, rel=0.01)
    assert spec.active_params / 1e9 == pytest.approx(active_b, rel=0.02)
    sizing = prepare(config(name), "full", TrainingSetup(checkpointing="none"))
    # memory holds every expert (16 B/param of states) ...
    assert sizing.states.total == 16 * spec.params
    # ... FLOPs run through k of E: 6 x active matmul weights + the causal attention term
    matmul, attention = throughput.forward_flops_per_token(spec, 2048)
    assert sizing.work.model_flops_per_token == pytest.approx(3 * (matmul + attention / 2))
    assert matmul == 2 * spec.active_matmul_params_per_token < 2 * spec.params / 2


@pytest.mark.parametrize(
    ("name", "preset"), [("llama-3-8b", "llama-3.1-8b"), ("qwen2-72b-instruct", "qwen2.5-72b")]
)
def test_dense_configs_match_the_presets(name, preset):
    from_file, from_preset = resolve(config(name)), resolve(preset)
    assert from_file.params == from_preset.params
    assert from_file.active_matmul_params_per_token == from_preset.active_matmul_params_per_token
    assert prepare(config(name), "lora").replica.total == pytest.approx(prepare(preset, "lora").replica.total)


# volcengine/verl tests/utils/test_flops_counter.py (commit d43ed3ee9b): training FLOPs of a
# batch of sequences 512, 1024, 2048 as verl's FlopsCounter counts them. verl also counts the
# embedding lookup as a matmul (6 x vocab x hidden per token) and, for MLA, the attention-value
# product at the query head width (192) rather than the value's (128); without those two
# conventions the counts agree exactly.
@pytest.mark.parametrize(
    ("name", "verl_flops"), [("qwen3-30b-a3b", 85087060230144), ("deepseek-v3", 906535995703296)]
)
def test_flops_agree_with_verls_counter(name, verl_flops):
    spec = resolve(config(name))
    seqlens = (512, 1024, 2048)
    ours = 0.0
    for seq in seqlens:
        matmul, attention = throughput.forward_flops_per_token(spec, seq)
        ours += 3 * (matmul + attention) * seq
    embedding = 6 * spec.vocab * spec.hidden * sum(seqlens)
    av_width = (
        6 * spec.layers * spec.heads * (spec.q_dim // spec.heads - spec.attention_out_dim // spec.heads)
    )
    verl_convention = ours + embedding + av_width * sum(s * s for s in seqlens)
    assert verl_convention == pytest.approx(verl_flops, rel=1e-9)
    assert ours < verl_flops  # an embedding lookup does no matmul


def test_fields_read_are_reported():
    spec = resolve(config("qwen3-30b-a3b"))
    read = dict(field.split("=", 1) for field in spec.fields_read if "=" in field)
    assert read["num_experts"] == "128" and read["moe_intermediate_size"] == "768"
    assert read["head_dim"] == "128" and read["tie_word_embeddings"] == "False"
    mixtral = resolve(config("mixtral-8x7b"))
    assert "tie_word_embeddings absent: False" in mixtral.fields_read  # MixtralConfig's default
    assert mixtral.source == "config.json of MixtralForCausalLM"
    assert not any("shared_expert" in field or "kv_lora_rank" in field for field in mixtral.fields_read)


def test_deepseek_dense_layers_shared_experts_and_latent_attention():
    spec = resolve(config("deepseek-v3"))
    dense, sparse = spec.layer_groups
    assert (dense.count, sparse.count) == (3, 58)
    assert sparse.shared_ffn == 2048 and sparse.routed == 8
    # verl's per-layer MLA weights:
    # 1536*7168 + 128*192*1536 + 7168*(512+64) + 128*(128+128)*512 + 128*128*7168
    assert sum(linear.params for linear in spec.attention_linears) == 187_105_280


def test_a_config_json_path_is_read_by_the_edge_not_here():
    with pytest.raises(ValueError, match=r"is a config\.json: gpuplan reads it where it is named"):
        resolve(str(CONFIGS / "mixtral-8x7b.json"))


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not JSON"),
        ("[1, 2]", "one JSON object"),
        (
            json.dumps({"hidden_size": 4096, "num_attention_heads": 32, "vocab_size": 32000}),
            "num_hidden_layers",
        ),
        (
            json.dumps(
                {"num_hidden_layers": 2, "hidden_size": 100, "num_attention_heads": 3, "vocab_size": 10}
            ),
            "not a multiple",
        ),
        (
            json.dumps(
                {
                    "num_hidden_layers": 2,
                    "hidden_size": 64,
                    "num_attention_heads": 4,
                    "vocab_size": 10,
                    "num_experts": 4,
                }
            ),
            "num_experts_per_tok",
        ),
    ],
)
def test_bad_configs_are_one_clear_line(content, message):
    with pytest.raises(ValueError, match=message) as raised:
        hf_config.parse(content, "config.json")
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize(
    ("name", "block", "rotary", "billions"),
    [
        ("phi-2", "parallel-shared", 0.4, 2.7),
        ("pythia-2.8b", "parallel", 0.25, 2.8),
        ("gpt-j-6b", "parallel-shared", 0.25, 6.0),
    ],
)
def test_parallel_residual_blocks_read_from_config(name, block, rotary, billions):
    spec = config(name)
    assert (spec.block, spec.layer_norm, spec.rotary_fraction) == (block, True, rotary)
    assert not spec.rms_norm and spec.mlp == "gelu"
    assert spec.params / 1e9 == pytest.approx(billions, rel=0.05)


def test_a_parallel_block_stores_one_input_and_one_norm_input():
    # phi-2 (PhiDecoderLayer): one LayerNorm feeds attention and the MLP, so a layer keeps the
    # residual input (2th) and the norm's output (2th) where a Llama block keeps two norm inputs and
    # two outputs (8th); resid_pdrop 0.1 keeps two dropout masks (th each). Eager RoPE copies only
    # the rotary 40% of q and k (4 bytes a rotated element); nn.LayerNorm adds no fp32 copy.
    spec = config("phi-2")
    t, h = 4096, spec.hidden
    got = layer_bytes(spec, spec.main_group, t, t, keep_attention_scores=False, eager_kernels=True)
    assert got.replicated == 2 * t * h + 2 * t * h + 2 * t * h
    fused = layer_bytes(spec, spec.main_group, t, t, keep_attention_scores=False)
    assert got.parallel - fused.parallel == pytest.approx(4 * t * (spec.q_dim + spec.kv_dim) * 0.4)
    neox = config("pythia-2.8b")  # two norms of the same input: 2th + two outputs 4th
    assert layer_bytes(neox, neox.main_group, t, t, keep_attention_scores=False).replicated == 6 * t * h
    # element-wise traffic: one LayerNorm (read 2, write 2), two residual adds, the GeLU over the
    # MLP width, eager RoPE (20 bytes a rotated element) over 40% of q and k
    per_layer = 4 * h + 2 * 6 * h + 4 * spec.ffn + 20 * 0.4 * (spec.q_dim + spec.kv_dim)
    assert kernels.elementwise_bytes_per_token(spec, fused=False) == pytest.approx(spec.layers * per_layer)

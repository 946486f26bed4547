"""sizing/models.py: parameter counts derived from shapes, bare sizes, forgiving names."""

from __future__ import annotations

import pytest

from sizing.models import presets, resolve

# Published totals (model cards / Hugging Face safetensors metadata). A preset's count is
# derived from its shape, so an exact match checks the shape.
PUBLISHED_PARAMS = {
    "llama-2-7b": 6_738_415_616,
    "llama-2-13b": 13_015_864_320,
    "llama-2-70b": 68_976_648_192,
    "llama-3.1-8b": 8_030_261_248,
    "llama-3.1-70b": 70_553_706_496,
    "llama-3.1-405b": 405_853_388_800,
    "llama-3.2-1b": 1_235_814_400,
    "llama-3.2-3b": 3_212_749_824,
    "qwen2.5-7b": 7_615_616_512,
    "qwen2.5-14b": 14_770_033_664,
    "qwen2.5-32b": 32_763_876_352,
    "qwen2.5-72b": 72_706_203_648,
    "mistral-7b": 7_241_732_096,
    "mixtral-8x7b": 46_702_792_704,
    "llama-65b": 65_285_660_672,
    "gpt2-xl": 1_557_611_200,
}


@pytest.mark.parametrize(("preset", "params"), PUBLISHED_PARAMS.items())
def test_params_from_shape_match_published_totals(preset, params):
    assert resolve(preset).params == params


def test_mixtral_active_parameters():
    spec = resolve("mixtral-8x7b")
    # 12.9B active per token including the 131M embedding, which does no matmul
    assert spec.active_matmul_params_per_token + spec.embedding_params == pytest.approx(12.88e9, rel=0.005)


def test_every_issue_family_has_presets():
    names = {spec.preset for spec in presets()}
    expected = {"llama-2-7b", "llama-2-13b", "llama-2-70b", "llama-3.1-8b", "llama-3.1-70b", "llama-3.1-405b"}
    expected |= {"qwen2.5-7b", "qwen2.5-14b", "qwen2.5-32b", "qwen2.5-72b", "mistral-7b", "mixtral-8x7b"}
    assert expected <= names


@pytest.mark.parametrize(
    ("asked", "preset"),
    [
        ("7B", "llama-2-7b"),
        ("7b", "llama-2-7b"),
        ("13B", "llama-2-13b"),
        ("14B", "qwen2.5-14b"),
        ("30B", "llama-33b"),
        ("65B", "llama-65b"),
        ("70B", "llama-3.1-70b"),
        ("72B", "qwen2.5-72b"),
        ("Llama-2-7b-hf", "llama-2-7b"),
        ("meta-llama/Meta-Llama-3-8B-Instruct", "llama-3.1-8b"),
        ("Qwen2.5 72B Instruct", "qwen2.5-72b"),
        ("MIXTRAL_8X7B", "mixtral-8x7b"),
    ],
)
def test_resolve(asked, preset):
    assert resolve(asked).preset == preset


@pytest.mark.parametrize("asked", ["1.5B", "20B", "180B", "500M"])
def test_bare_size_without_a_preset_scales_the_nearest_shape(asked):
    spec = resolve(asked)
    target = float(asked[:-1]) * (1e9 if asked.endswith("B") else 1e6)
    assert "scaled to" in spec.preset
    # one layer of rounding at most
    assert abs(spec.params - target) <= spec.layer_params


@pytest.mark.parametrize("asked", ["gpt-5", "0B", "seven billion", ""])
def test_unknown_models_are_refused(asked):
    with pytest.raises(ValueError):
        resolve(asked)

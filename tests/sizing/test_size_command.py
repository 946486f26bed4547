"""gpuplan/commands/size.py: the `gpuplan size` table and its --json contract."""

from __future__ import annotations

import json

import pytest
import typer
from typer.testing import CliRunner

BREAKDOWN_KEYS = {"weights", "gradients", "optimizer", "sharding_buffers", "activations", "overhead"}
PLAN_KEYS = {"gpu", "gpu_count", "per_gpu_memory_gb", "tokens_per_second"}


def run(app: typer.Typer, *args: str) -> typer.testing.Result:
    # wide enough that rich does not wrap GPU names
    return CliRunner(env={"COLUMNS": "200"}).invoke(app, ["size", *args])


def test_json_contract(app):
    result = run(app, "7B", "--method", "full", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["params"] == 6_738_415_616
    assert set(data["breakdown_gb"]) == BREAKDOWN_KEYS
    assert data["total_memory_gb"] == pytest.approx(sum(data["breakdown_gb"].values()), abs=0.01)
    assert data["model_preset"] == "llama-2-7b"
    assert any("sequence 2048 tokens" in line for line in data["assumptions"])
    assert data["plans"] and all(set(plan) >= PLAN_KEYS for plan in data["plans"])
    assert "per_gpu_memory_gb" not in data  # only with --gpu/--gpus/--zero


def test_json_single_configuration(app):
    result = run(
        app, "llama-3.1-8b", "-m", "full", "--gpu", "h100-sxm-80gb", "--gpus", "4", "--zero", "3", "--json"
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["gpu"] == "H100 SXM 80GB" and data["gpu_count"] == 4 and data["zero_stage"] == 3
    assert data["per_gpu_breakdown_gb"]["sharding_buffers"] > 0
    assert data["fits"] is True and data["tokens_per_second"] > 0
    assert data["per_gpu_memory_gb"] < data["total_memory_gb"]
    assert all(plan["gpu_count"] == 4 for plan in data["plans"])


def test_json_count_without_a_gpu_has_no_verdict(app):
    data = json.loads(run(app, "7B", "-m", "lora", "--gpus", "4", "--json").output)
    assert data["per_gpu_memory_gb"] > 0
    assert data["fits"] is None and data["tokens_per_second"] is None


def test_mfu_override_and_article(app):
    data = json.loads(run(app, "7B", "-m", "full", "--mfu", "0.5", "--vs-article", "--json").output)
    assert {plan["mfu"] for plan in data["plans"]} == {0.5}
    assert data["article"]["rule_gb"] == pytest.approx([20.2, 27.0], abs=0.1)
    assert data["article"]["explanation"]


def test_table_shows_breakdown_assumptions_and_plans(app):
    result = run(app, "70B", "--method", "qlora", "--vs-article", "--explain")
    assert result.exit_code == 0, result.output
    for text in ("weights", "Assumptions", "flash attention on", "A100 SXM 80GB", "The article beside us"):
        assert text in result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("gpt-9", "-m", "full"), "unknown model"),
        (("7B", "-m", "full", "--gpu", "TPU v4"), "unknown GPU"),
        (("7B", "-m", "dpo"), "dpo"),
        (("7B", "-m", "full", "--zero", "0", "--offload", "optimizer"), "needs ZeRO stage 1"),
    ],
)
def test_bad_input_exits_non_zero_with_a_message(app, args, message):
    result = run(app, *args)
    assert result.exit_code != 0
    assert message in result.output


def test_framework_settings_and_layout_in_json(app):
    data = json.loads(
        run(app, "70B", "-m", "full", "-f", "megatron", "--gpu", "H100 SXM 80GB", "--gpus", "32", "--tp", "8",
            "--pp", "4", "--json").output
    )  # fmt: skip
    assert data["framework"] == "megatron" and data["settings"]["framework"] == "megatron"
    assert (data["tp"], data["pp"], data["settings"]["sequence_parallel"]) == (8, 4, True)
    assert data["settings"]["loss"] == "vocab-parallel" and data["settings"]["state_accounting"] == "megatron"
    assert data["fits"] is True and data["tokens_per_second"] > 0
    assert all(plan["gpu_count"] % 32 == 0 for plan in data["plans"])  # counts the layout divides
    assert any("TP8 x PP4" in line for line in data["assumptions"])


def test_one_prepare_per_command(app, monkeypatch):
    from sizing import planner

    calls = []
    real = planner.prepare
    monkeypatch.setattr(planner, "prepare", lambda *args: calls.append(args) or real(*args))
    result = run(app, "7B", "-m", "full", "--gpu", "A100 SXM 80GB", "--vs-article", "--json")
    assert result.exit_code == 0, result.output
    assert len(calls) == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("7B", "-m", "qlora", "-f", "megatron"), "no QLoRA"),
        (("7B", "-m", "full", "-f", "hf", "--tp", "2"), "no tensor or pipeline parallelism"),
        (("7B", "-m", "full", "-f", "jax"), "jax"),
        (("7B", "-m", "full", "--tp", "8", "--gpus", "4"), "multiple of 8"),
        (("no-such-dir/config.json", "-m", "lora"), "model config no-such-dir/config.json: not found"),
    ],
)
def test_framework_and_layout_errors(app, args, message):
    result = run(app, *args)
    assert result.exit_code != 0
    assert message in result.output


@pytest.mark.parametrize(
    ("name", "gpu", "note"),
    [
        ("H100", "H100 SXM 80GB", "also: H100 PCIe 80GB, H100 NVL 94GB"),
        ("A100-80GB", "A100 SXM 80GB", "also: A100 PCIe 80GB"),
        ("4090", "RTX 4090 24GB", None),
        ("910B", "Ascend 910B 64GB", None),
        ("A10G", "A10G 24GB", None),  # AWS's most rented card
        ("Gaudi2", "Gaudi 2 96GB", None),
        ("MI300X", "MI300X 192GB", None),
    ],
)
def test_gpu_names_as_people_write_them(app, name, gpu, note):
    data = json.loads(run(app, "7B", "-m", "qlora", "--gpu", name, "--json").output)
    assert data["gpu"] == gpu
    assert data["gpu_note"] is None if note is None else note in data["gpu_note"]
    table = run(app, "7B", "-m", "qlora", "--gpu", name)
    assert table.exit_code == 0 and (note is None or note in table.output)

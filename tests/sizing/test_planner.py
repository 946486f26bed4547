"""sizing/planner.py: the rows the pipeline joins with offers, and the per-GPU plan."""

from __future__ import annotations

import dataclasses

import pytest

from sizing.catalog import find_gpu, load_gpus
from sizing.planner import DEFAULT_GPU_COUNTS, Requirement, estimate, plan, prepare, requirements
from sizing.setup import TrainingSetup


def test_one_row_per_catalog_gpu_and_count():
    rows = requirements("7B", "lora")
    assert len(rows) == len(load_gpus()) * len(DEFAULT_GPU_COUNTS)
    assert {(r.gpu_model, r.gpu_count) for r in rows} == {
        (gpu.gpu_model, n) for gpu in load_gpus() for n in DEFAULT_GPU_COUNTS
    }
    row = rows[0]
    assert isinstance(row, Requirement)
    assert (row.model, row.model_preset, row.method) == ("7B", "llama-2-7b", "lora")
    assert row.params == 6_738_415_616
    for field in ("per_gpu_memory_gb", "tokens_per_second", "mfu"):
        assert all(getattr(r, field) > 0 for r in rows), field


def test_frozen_and_flat_for_a_dataframe():
    row = requirements("7B", "qlora", gpu_counts=(1,), gpus=["L20 48GB"])[0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        row.fits = False  # type: ignore[misc]
    assert all(isinstance(v, (str, int, float, bool)) for v in dataclasses.asdict(row).values())


def test_rows_hold_every_field_as_the_dataclass_builds_them():
    # The planner builds rows with Requirement.row, which sets the fields without __init__: each
    # must still hold every field, and equal (and hash as) the row __init__ builds from them.
    names = {field.name for field in dataclasses.fields(Requirement)}
    setups = (TrainingSetup(framework="megatron"), TrainingSetup(framework="megatron", tp=8))
    for row in [row for setup in setups for row in requirements("70B", "full", setup=setup)]:
        assert vars(row).keys() == names
        built = Requirement(**vars(row))
        assert built == row and hash(built) == hash(row)


@pytest.mark.parametrize(
    ("model", "method", "gpu", "count", "fits", "stage"),
    [
        ("7B", "full", "A100 SXM 80GB", 1, False, 0),
        # DeepSpeed's fp32 gradient partition (18 B/param at stage 3): stage 2 needs 85 GB
        ("7B", "full", "A100 SXM 80GB", 2, True, 3),
        ("7B", "full", "A100 SXM 80GB", 4, True, 1),  # optimizer sharding is enough
        ("7B", "full", "RTX 4090 24GB", 8, True, 3),  # needs everything sharded
        ("7B", "qlora", "RTX 4090 24GB", 1, True, 0),
        ("70B", "qlora", "A100 SXM 80GB", 1, True, 0),
        ("405B", "full", "RTX 4090 24GB", 64, False, 3),  # least memory when nothing fits
    ],
)
def test_smallest_zero_stage_that_fits(model, method, gpu, count, fits, stage):
    row = requirements(model, method, gpu_counts=(count,), gpus=[gpu])[0]
    assert (row.fits, row.zero_stage) == (fits, stage)
    assert (row.per_gpu_memory_gb <= row.usable_memory_gb) == fits


def test_memory_falls_and_nodes_grow_with_the_count():
    rows = requirements("70B", "full", gpus=["H800 SXM 80GB"])
    # where nothing fits the planner shows the least memory; where something does, the fastest
    # layout that fits (across nodes a pipeline may hold more than ZeRO-3 would)
    unfit = [r.per_gpu_memory_gb for r in rows if not r.fits]
    assert len(unfit) == 4 and unfit == sorted(unfit, reverse=True)
    assert all(r.per_gpu_memory_gb <= r.usable_memory_gb < unfit[-1] for r in rows if r.fits)
    assert [r.nodes for r in rows] == [1, 1, 1, 1, 2, 4, 8]
    assert [r.multi_node for r in rows] == [r.gpu_count > 8 for r in rows]
    gh200 = requirements("7B", "lora", gpu_counts=(2,), gpus=["GH200 96GB"])[0]
    assert gh200.multi_node  # one GPU per node


def test_plan_keeps_the_smallest_fitting_count_per_gpu():
    plans = {r.gpu_model: r for r in plan("7B", "full")}
    assert len(plans) == len(load_gpus())
    assert plans["A100 SXM 80GB"].gpu_count == 2 and plans["A100 SXM 80GB"].fits
    assert plans["H200 SXM 141GB"].gpu_count == 1
    nothing = plan("405B", "full", gpus=["RTX 4090 24GB"])[0]
    assert not nothing.fits and nothing.gpu_count == max(DEFAULT_GPU_COUNTS)


def test_fixed_stage_and_offload():
    sizing = prepare("7B", "full")
    # ZeRO-0 on 8 GPUs: the DeepSpeed engine's fp32 gradients and its bucket on top of a replica
    assert sizing.per_gpu(0, 8).total > sizing.replica.total > find_gpu("H100 SXM 80GB").usable_memory_gb
    # no ZeRO stage 0 replica fits, so the planner splits the layers inside the node: TP2 holds
    # 18 bytes/param of half the model (61 GB) with the Trainer's fused AdamW; a foreach AdamW
    # step's fp32 temporary over that half (13.5 GB) takes it past the card, so TP4
    for step, tp in (("fused", 2), ("foreach", 4)):
        setup = TrainingSetup(zero_stage=0, optimizer_step=step)
        row = requirements("7B", "full", gpu_counts=(8,), gpus=["H100 SXM 80GB"], setup=setup)[0]
        assert (row.fits, row.zero_stage, row.tp, row.pp) == (True, 0, tp, 1), step
    replica = sizing.replica.total
    offloaded = requirements(
        "7B", "full", gpu_counts=(1,), gpus=["RTX 4090 48GB"], setup=TrainingSetup(offload="optimizer")
    )[0]
    assert offloaded.zero_stage == 1 and offloaded.offload == "optimizer"
    assert offloaded.per_gpu_memory_gb < replica / 4


def test_estimate_picks_the_smallest_count_for_a_named_gpu():
    single = estimate("13B", "full", gpu="h100 sxm")
    assert single.requirement is not None and single.requirement.fits
    assert single.gpu_count == 4
    assert single.per_gpu.total == pytest.approx(single.requirement.per_gpu_memory_gb)
    memory_only = estimate("13B", "full", gpu_count=8)
    assert memory_only.requirement is None and memory_only.zero_stage == 3


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: requirements("7B", "dpo"), "method must be one of"),
        (lambda: TrainingSetup(framework="jax"), "framework must be one of"),
        (lambda: requirements("7B", "lora", gpu_counts=(0, 2)), "from 1 to 100,000"),
        (lambda: TrainingSetup(seq_len=10**20), "seq_len must be from 1 to 10,000,000"),
        (lambda: requirements("7B", "lora", gpus=["TPU v4"]), "unknown GPU"),
        (
            lambda: requirements("7B", "lora", setup=TrainingSetup(checkpointing="some")),
            "checkpointing must be",
        ),
        (
            lambda: requirements("7B", "full", setup=TrainingSetup(offload="optimizer", zero_stage=0)),
            "needs ZeRO stage 1",
        ),
        (lambda: requirements("7B", "lora", setup=TrainingSetup(mfu=1.5)), "mfu"),
        (
            lambda: requirements("7B", "lora", setup=TrainingSetup(lora_targets=("q", "attn"))),
            "unknown LoRA target",
        ),
        (lambda: requirements("gpt-9", "lora"), "unknown model"),
    ],
)
def test_bad_input_is_a_clear_value_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_gpu_usable_memory_is_the_catalog_figure():
    row = requirements("7B", "lora", gpu_counts=(1,), gpus=["H20 96GB"])[0]
    assert row.usable_memory_gb == find_gpu("H20 96GB").usable_memory_gb

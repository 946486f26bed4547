"""sizing/fabric.py: the cluster table, `gpuplan size --internode-gbps` at the fabric's speed, the
fastest layout across nodes, and the goodput factor."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from sizing import fabric
from sizing.catalog import find_gpu
from sizing.planner import prepare
from sizing.setup import TrainingSetup

# llama-3.1-70b (sizing/data/models.csv): parameters; full fine-tuning under LLaMA-Factory's
# DeepSpeed keeps bf16 weights and gradients, 2 bytes each per parameter, and 12 bytes of fp32
# AdamW state (ZeRO paper §3, docs/sizing.md).
PARAMS = 70_553_706_496
WEIGHT_BYTES = GRADIENT_BYTES = 2 * PARAMS
OPTIMIZER_BYTES = 12 * PARAMS
H100_MEMORY_BYTES_PER_S = 3_350e9  # H100 SXM HBM3 (sizing/data/gpus.csv)
NCCL_EFFICIENCY = 0.8  # nccl-tests at about 80% of the link (sizing.collectives)
GRAD_ACCUM, SEQUENCE = 8, 2048  # LLaMA-Factory's example configs (sizing.setup)


def sized(app: typer.Typer, *args: str) -> dict:
    result = CliRunner(env={"COLUMNS": "200"}).invoke(app, ["size", *args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def zero3_tokens_per_second(gpus: int, gbps_per_gpu: float) -> float:
    """ZeRO-3 across nodes by hand: each micro-batch all-gathers the weights forward and backward
    and reduce-scatters the gradients, (n - 1)/n of (2 W + G) per GPU (ZeRO §7), over the fabric at
    nccl's efficiency; the communication outlasts the micro-batch's compute, so the step is
    grad_accum of them plus the memory-bound AdamW update of each GPU's shard."""
    link_bytes_per_s = gbps_per_gpu / 8 * 1e9 * NCCL_EFFICIENCY
    per_microbatch = (gpus - 1) / gpus * (2 * WEIGHT_BYTES + GRADIENT_BYTES) / link_bytes_per_s
    update = (2 * OPTIMIZER_BYTES + GRADIENT_BYTES) / gpus / H100_MEMORY_BYTES_PER_S
    return gpus * GRAD_ACCUM * SEQUENCE / (GRAD_ACCUM * per_microbatch + update)


@pytest.mark.parametrize(
    ("gbps", "expected_per_gpu"),
    [
        (400, 199.7),  # NDR InfiniBand / EFA on p5: 50 GB/s per GPU, ~10 s of gathers per micro-batch
        (20, 9.987),  # Alibaba ebmgn8v eRDMA: 2.5 GB/s per GPU, twenty times slower
    ],
)
def test_size_moves_throughput_with_the_fabric_as_zero3_volume_says(app, gbps, expected_per_gpu):
    data = sized(
        app,
        "70B",
        "-m",
        "full",
        "--gpu",
        "H100",
        "--gpus",
        "32",
        "--zero",
        "3",
        "--internode-gbps",
        str(gbps),
    )
    assert data["settings"]["internode_gbps_per_gpu"] == gbps
    assert data["fits"] and data["zero_stage"] == 3
    assert data["tokens_per_second"] == pytest.approx(zero3_tokens_per_second(32, gbps), rel=1e-4)
    assert data["tokens_per_second"] / 32 == pytest.approx(expected_per_gpu, rel=1e-3)
    stated = f"{gbps} Gb/s ({gbps / 8:g} GB/s) per GPU between nodes"
    assert any(stated in line for line in data["assumptions"])


def test_the_fabric_does_not_touch_one_node(app):
    args = ("7B", "-m", "full", "--gpu", "H100", "--gpus", "8")
    fast, slow = sized(app, *args, "--internode-gbps", "400"), sized(app, *args, "--internode-gbps", "20")
    assert fast["tokens_per_second"] == slow["tokens_per_second"]


def test_default_is_the_models_400_and_the_option_is_bounded(app):
    default = sized(app, "7B", "-m", "lora")
    assert default["settings"]["internode_gbps_per_gpu"] == fabric.DEFAULT_INTERNODE_GBPS_PER_GPU == 400
    result = CliRunner().invoke(app, ["size", "7B", "-m", "lora", "--internode-gbps", "25600"])
    assert result.exit_code != 0 and "3200" in result.output


def test_across_nodes_a_slow_fabric_takes_the_pipeline_over_zero3():
    h100 = find_gpu("H100 SXM 80GB")
    for gb_per_s in (50.0, 2.5):
        sizing = prepare("70B", "full", TrainingSetup(internode_gb_per_s=gb_per_s))
        row = sizing.requirement(h100, 32)
        zero3, _ = sizing.clock.tokens_per_second(h100, 32, 3)
        assert row.fits and row.tp == 8 and row.zero_stage <= 1
        assert row.tokens_per_second > zero3
    # on one node the least memory still decides (the smallest stage that fits)
    one_node = prepare("7B", "full").requirement(h100, 8)
    assert (one_node.tp, one_node.pp) == (1, 1)


def test_goodput_is_llama3s_at_16k_gpus_and_grows_with_gpus_and_length():
    assert fabric.goodput(16_384) == pytest.approx(0.90)
    # 466 / (16,384 x 54 x 24) per GPU-hour; (1/0.9 - 1) x 1,296 h / 466 lost each
    assert pytest.approx(2.1946e-5, rel=1e-4) == fabric.INTERRUPTIONS_PER_GPU_HOUR
    assert pytest.approx(0.30901, rel=1e-4) == fabric.HOURS_LOST_PER_INTERRUPTION
    assert fabric.goodput(512) == pytest.approx(1 / (1 + 512 * 2.1946e-5 * 0.30901), rel=1e-6)
    assert fabric.goodput(8) > fabric.goodput(64) > fabric.goodput(512)
    lost = [fabric.wall_hours(hours, gpus) - hours for gpus, hours in ((64, 100), (512, 100), (512, 400))]
    assert lost[0] < lost[1] < lost[2] and lost[2] == pytest.approx(4 * lost[1])
    assert "466 interruptions in 54 days on 16,384 GPUs" in fabric.goodput_line(512)


def test_table_rows_derive_their_per_gpu_figure_and_name_a_source():
    rows = fabric.load_fabrics()
    assert rows and all(row.source and row.sale_mode in fabric.SALE_MODES for row in rows)
    for row in rows:
        assert row.internode_gbps_per_gpu == pytest.approx(row.quoted_gbps / row.quoted_over_gpus)
    p5 = fabric.fabric_for("aws", "p5.48xlarge/us-east-1")
    assert p5 is not None and p5.internode_gbps_per_gpu == 400 and p5.label == "EFA 400"
    assert fabric.fabric_for("aws", "p5.4xlarge/us-east-1") is None  # one GPU: nothing to join
    assert fabric.fabric_for("lambda", "NVIDIA H100 SXM 80 GB/8x") is None  # on-demand: never joined
    assert fabric.fabric_for("vastai", "28941031") is None  # an overlay network is no fabric
    runpod = [row for row in rows if row.platform == "runpod"]
    # RunPod's Instant Clusters are crawled (scrapers/spiders/runpod.py), sold only as 2-8 nodes
    assert runpod and all(
        row.crawled and row.joined_only and row.node_counts(64) == (2, 3, 4, 6, 8) for row in runpod
    )
    assert fabric.fabric_for("runpod", "NVIDIA H100 80GB HBM3/cluster/US-KS-2") is runpod[0]
    assert fabric.fabric_for("runpod", "NVIDIA H100 80GB HBM3/secure/8x") is None  # a pod is never joined


def test_a_row_whose_figure_is_not_its_quote_per_gpu_is_refused(tmp_path, monkeypatch):
    text = fabric.CLUSTERS_PATH.read_text(encoding="utf-8").splitlines()
    bad = text[0] + "\n" + text[1].replace(",400,instance,8,50,", ",400,instance,8,400,") + "\n"
    path = tmp_path / "clusters.csv"
    path.write_text(bad, encoding="utf-8")
    monkeypatch.setattr(fabric, "CLUSTERS_PATH", path)
    fabric._table.cache_clear()
    try:
        with pytest.raises(ValueError, match=r"clusters\.csv line 2: internode_gbps_per_gpu 400 is not 400"):
            fabric.load_fabrics()
    finally:
        monkeypatch.undo()
        fabric._table.cache_clear()


def test_every_bundled_offer_matches_at_most_one_row_and_only_whole_fabric_nodes():
    """Over every spider's recorded items: no two rows claim one offer, and each row with a pattern
    matches some offer we crawl (a pattern matching nothing is a typo, or a product renamed)."""
    fixtures = Path(__file__).resolve().parents[2] / "scrapers" / "fixtures"
    offers = [
        json.loads(line)
        for path in sorted(fixtures.glob("*/expected.jsonl"))
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    rows = [row for row in fabric.load_fabrics() if row.crawled]
    used = set()
    for item in offers:
        claims = [row for row in rows if row.matches(item["platform"], item["offer_id"])]
        assert len(claims) <= 1, (item["offer_id"], [row.product for row in claims])
        if claims:
            used.add(claims[0].product)
            assert item["gpu_count"] == claims[0].quoted_over_gpus or claims[0].quoted_per == "GPU"
    assert used == {row.product for row in rows}

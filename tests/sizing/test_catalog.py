"""sizing/catalog.py and data/gpus.csv: the canonical names, the columns, forgiving lookup."""

from __future__ import annotations

import csv

import pytest

from sizing.catalog import CATALOG_PATH, USABLE_FRACTION, find_gpu, load_gpus

# The names scrapers and the warehouse join on (the catalog contract): never renamed.
CANONICAL_NAMES = [
    "RTX 3090 24GB", "RTX 4090 24GB", "RTX 4090 48GB", "RTX 4090D 24GB", "RTX 5090 32GB",
    "RTX A6000 48GB", "RTX 6000 Ada 48GB", "A10 24GB", "A40 48GB", "L4 24GB", "L20 48GB",
    "L40 48GB", "L40S 48GB", "V100 SXM 16GB", "V100 SXM 32GB", "V100 PCIe 16GB", "V100 PCIe 32GB",
    "A100 SXM 40GB", "A100 SXM 80GB", "A100 PCIe 40GB", "A100 PCIe 80GB", "A800 SXM 80GB",
    "A800 PCIe 80GB", "H100 SXM 80GB", "H100 PCIe 80GB", "H100 NVL 94GB", "H800 SXM 80GB",
    "H800 PCIe 80GB", "H20 96GB", "H20 141GB", "H200 SXM 141GB", "H200 NVL 141GB", "GH200 96GB",
    "B200 180GB", "MI300X 192GB", "Ascend 910B 64GB", "Ascend 910B1 64GB", "Ascend 910B2 64GB",
    "Ascend 910B3 64GB", "Ascend 910B4 64GB",
]  # fmt: skip

COLUMNS = [
    "gpu_model", "family", "form", "memory_gb", "bf16_dense_tflops", "memory_bandwidth_gb_per_s",
    "interconnect", "interconnect_gb_per_s", "gpus_per_node", "verified", "source",
]  # fmt: skip


def test_columns_are_the_documented_ones():
    with CATALOG_PATH.open(encoding="utf-8") as handle:
        assert next(csv.reader(handle)) == COLUMNS


def test_every_canonical_name_is_kept():
    names = [gpu.gpu_model for gpu in load_gpus()]
    assert set(CANONICAL_NAMES) <= set(names)
    assert len(names) == len(set(names))


def test_values_are_physical():
    for gpu in load_gpus():
        assert gpu.memory_gb > 0 and gpu.bf16_dense_tflops > 0, gpu.gpu_model
        assert gpu.memory_bandwidth_gb_per_s > 0 and gpu.interconnect_gb_per_s > 0, gpu.gpu_model
        assert 1 <= gpu.gpus_per_node <= 8, gpu.gpu_model
        assert gpu.source, gpu.gpu_model


def test_unverified_rows_say_why():
    unverified = {gpu.gpu_model: gpu for gpu in load_gpus() if not gpu.verified}
    # sizing.md marks these [U]: no primary datasheet, or a value from memory
    for name in ("Ascend 910B 64GB", "Ascend 910B2 64GB", "H20 141GB", "H200 NVL 141GB", "RTX 4090 48GB"):
        assert name in unverified
    for gpu in unverified.values():
        assert "[U]" in gpu.source or "no vendor datasheet" in gpu.source, gpu.gpu_model


@pytest.mark.parametrize(
    ("name", "interconnect", "bandwidth"),
    [
        ("Ascend 910B 64GB", "HCCS", None),
        ("H800 SXM 80GB", "NVLink 4", 400),
        ("A800 SXM 80GB", "NVLink 3", 400),
        ("H100 SXM 80GB", "NVLink 4", 900),
        ("RTX 4090 24GB", "PCIe 4.0", None),
        ("RTX 4090 48GB", "PCIe 4.0", None),
        ("L20 48GB", "PCIe 4.0", None),
    ],
)
def test_china_market_interconnects(name, interconnect, bandwidth):
    gpu = find_gpu(name)
    assert gpu.interconnect == interconnect
    if bandwidth is not None:
        assert gpu.interconnect_gb_per_s == bandwidth


@pytest.mark.parametrize(
    ("asked", "expected"),
    [
        ("H100 SXM 80GB", "H100 SXM 80GB"),
        ("h100-sxm-80gb", "H100 SXM 80GB"),
        ("  rtx4090 48gb ", "RTX 4090 48GB"),
        ("ascend_910b_64gb", "Ascend 910B 64GB"),
        ("H100 SXM", "H100 SXM 80GB"),  # a unique prefix
        ("mi300x", "MI300X 192GB"),
    ],
)
def test_find_gpu_is_forgiving(asked, expected):
    assert find_gpu(asked).gpu_model == expected


@pytest.mark.parametrize(
    ("asked", "message"), [("RTX 4090", "ambiguous"), ("TPU v5", "unknown"), ("", "empty")]
)
def test_find_gpu_refuses_clearly(asked, message):
    with pytest.raises(ValueError, match=message):
        find_gpu(asked)


@pytest.mark.parametrize(
    ("name", "reported_gib"),
    [
        # what the device reports to PyTorch ("GPU 0 has a total capacity of ..."); for the L40S
        # only Vast's nvidia-smi figure, which runs 0.5-1 GiB above PyTorch's (A100: 81,920 MiB)
        ("H100 SXM 80GB", 79.11),
        ("A100 SXM 80GB", 79.15),
        ("A100 SXM 40GB", 39.39),
        ("H200 SXM 141GB", 139.80),
        ("RTX 3090 24GB", 23.69),
        ("A10G 24GB", 22_515.75 / 1024),  # ECC on: 1/16 held back
        ("L4 24GB", 22.06),
        ("L40S 48GB", 46_068 / 1024),
        ("Ascend 910B 64GB", 62_432 / 1024),  # the 910B2C's total_memory
    ],
)
def test_usable_memory_is_what_the_device_reports(name, reported_gib):
    gpu = find_gpu(name)
    assert gpu.usable_memory_gb == pytest.approx(reported_gib * 2**30 / 1e9, rel=0.02)
    assert gpu.usable_memory_gb < gpu.memory_gb * 2**30 / 1e9


def test_hbm_and_geforce_cards_offer_the_same_share():
    assert (
        find_gpu("H100 SXM 80GB").usable_fraction
        == USABLE_FRACTION
        == find_gpu("RTX 4090 24GB").usable_fraction
    )

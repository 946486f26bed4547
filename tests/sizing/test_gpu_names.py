"""Raw GPU names -> canonical models of sizing/data/gpus.csv, never guessed."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from sizing.gpu_names import (
    FAMILIES_PATH,
    GpuIdentity,
    UnknownGpu,
    aliases,
    canonical_models,
    identify,
    identify_first,
    resolve,
    short_name,
)

GPUS_CSV = Path(__file__).parents[2] / "sizing" / "data" / "gpus.csv"

CASES = [
    # (raw name, memory hint GB, gpu_model, gpu_memory_gb, gpu_form)
    ("NVIDIA H100 80GB HBM3", None, "H100 SXM 80GB", 80, "SXM"),  # RunPod id: HBM3 is the SXM board
    ("H100 SXM", None, "H100 SXM 80GB", 80, "SXM"),
    ("H100_SXM5_80GB", None, "H100 SXM 80GB", 80, "SXM"),
    ("gpu_1x_h100_sxm5", None, "H100 SXM 80GB", 80, "SXM"),  # Lambda instance type
    ("H100 PCIe", None, "H100 PCIe 80GB", 80, "PCIe"),
    ("NVIDIA H100 NVL", 94, "H100 NVL 94GB", 94, "NVL"),
    ("H100", 94, "H100 NVL 94GB", 94, "NVL"),  # only the NVL has 94 GB
    ("H100", 80, None, 80, None),  # SXM or PCIe: not guessed
    ("A100-SXM4-80GB", None, "A100 SXM 80GB", 80, "SXM"),
    ("NVIDIA A100 80GB PCIe", None, "A100 PCIe 80GB", 80, "PCIe"),
    ("A100 SXM4", 81920 / 1024, "A100 SXM 80GB", 80, "SXM"),  # Vast: gpu_ram in MiB
    ("1x A100 (40 GB SXM4)", None, "A100 SXM 40GB", 40, "SXM"),  # Lambda description
    ("A100", None, None, None, None),
    ("Tesla V100-SXM2-16GB", None, "V100 SXM 16GB", 16, "SXM"),
    ("Tesla V100-PCIE-16GB", None, "V100 PCIe 16GB", 16, "PCIe"),
    ("Tesla V100", 16, "V100 16GB", 16, None),  # form not stated: the form-less row
    ("Tesla V100", None, None, None, None),  # 16 or 32 GB: not guessed
    ("RTX 4090", None, "RTX 4090 24GB", 24, None),
    ("NVIDIA GeForce RTX 4090", 24, "RTX 4090 24GB", 24, None),
    ("RTX 4090", 48, "RTX 4090 48GB", 48, None),  # the modified card: a different product
    ("RTX 4090", 49140 / 1024, "RTX 4090 48GB", 48, None),  # Vast's 49140 MiB
    ("4090 48G", None, "RTX 4090 48GB", 48, None),
    ("RTX 4090", 32, None, 32, None),  # no such card: not merged into 24 or 48
    ("RTX 4090D", None, "RTX 4090D 24GB", 24, None),
    ("4090D", None, "RTX 4090D 24GB", 24, None),
    ("RTX 4090D 48G", None, None, 48, None),  # not in the catalog
    ("RTX 3090 Ti", 24, None, 24, None),  # a different product from the RTX 3090
    ("RTX 3090", None, "RTX 3090 24GB", 24, None),
    ("RTX 5090", 32607 / 1024, "RTX 5090 32GB", 32, None),
    ("RTX 6000Ada", None, "RTX 6000 Ada 48GB", 48, None),  # Vast spelling
    ("NVIDIA RTX 6000 Ada Generation", 48, "RTX 6000 Ada 48GB", 48, None),  # RunPod id
    ("RTX A6000 48GB", None, "RTX A6000 48GB", 48, None),
    ("RTX PRO 6000", 96, "RTX PRO 6000 96GB", 96, None),  # AutoDL's name
    ("NVIDIA RTX PRO 6000 Blackwell Server Edition MIG 1g.24gb", 24, None, 24, None),  # a slice
    ("NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition", 96, None, 96, None),  # 300 W
    ("H20", None, None, None, None),  # 96 or 141 GB: not guessed
    ("H20", 96, "H20 96GB", 96, None),
    ("H20 141G", None, "H20 141GB", 141, None),
    ("H200", None, "H200 SXM 141GB", 141, "SXM"),  # NVIDIA sells "H200" (SXM) and "H200 NVL"
    ("NVIDIA H200 NVL", 143, "H200 NVL 141GB", 141, "NVL"),  # RunPod reports 143 GB
    ("H200", 143771 / 1024, "H200 SXM 141GB", 141, "SXM"),
    ("H800", None, "H800 80GB", 80, None),  # form not stated: the form-less row, PCIe figures
    ("H800 SXM5 80GB", None, "H800 SXM 80GB", 80, "SXM"),
    ("A800 80G", None, "A800 80GB", 80, None),
    ("H800 80G", None, "H800 80GB", 80, None),
    ("H20", None, None, None, None),  # 96 or 141 GB: not guessed
    ("A800 PCIE", None, "A800 PCIe 80GB", 80, "PCIe"),
    ("L20", None, "L20 48GB", 48, None),
    ("L40S", None, "L40S 48GB", 48, None),
    ("L40", None, "L40 48GB", 48, None),
    ("NVIDIA L4", 24, "L4 24GB", 24, None),
    ("1x A10 (24 GB PCIe)", None, "A10 24GB", 24, None),
    ("A10G", 24, "A10G 24GB", 24, None),  # AWS's card (EC2 G5), its own row, not Lambda's A10
    ("NVIDIA A10G", None, "A10G 24GB", 24, None),
    ("NVIDIA L4", None, "L4 24GB", 24, None),
    ("L40S", 46068 / 1024, "L40S 48GB", 48, None),  # Vast's gpu_ram for an L40S (ECC on)
    ("NVIDIA GB200", None, "GB200 186GB", 186, None),
    ("GB200 NVL72", None, "GB200 186GB", 186, None),  # the rack's name, the chip is a GB200
    ("B200", None, "B200 180GB", 180, None),  # 'GB200' is never read as a B200, nor this as GB200
    ("GH200 144GB", None, "GH200 141GB", 141, None),  # NVIDIA's 144GB HBM3e marketing snaps to 141
    ("GH200", None, "GH200 96GB", 96, None),
    ("MI300X", None, "MI300X 192GB", 192, None),
    ("AMD Instinct MI325X", 256, "MI325X 256GB", 256, None),
    ("MI355X", None, "MI355X 288GB", 288, None),
    ("MI250X", 64, "MI250X 64GB", 64, None),  # one GCD, the GPU a process sees
    ("MI250X", None, None, None, None),  # module or GCD: not guessed
    ("MI250X", 128, None, 128, None),  # a two-GCD module: never halved into a GCD row
    ("AMD Instinct MI250 64GB", None, "MI250 64GB", 64, None),
    ("Gaudi2", None, "Gaudi 2 96GB", 96, None),
    ("Intel Gaudi 2", 96, "Gaudi 2 96GB", 96, None),
    ("HL-225", None, "Gaudi 2 96GB", 96, None),  # Intel's part number
    ("Gaudi3", None, "Gaudi 3 128GB", 128, None),
    ("Habana Gaudi", 32, None, 32, None),  # the first Gaudi (HL-205, AWS DL1) is not in the catalog
    ("NVIDIA Quadro RTX 6000", 24, None, 24, None),  # Lambda's Turing card: not in the catalog
    ("RTX 6000", 24, None, 24, None),  # Quadro or Ada (48 GB): not guessed from the name alone
    ("NVIDIA RTX 4000 Ada Generation", 20, "RTX 4000 Ada 20GB", 20, None),  # RunPod
    ("RTX 4000 SFF Ada", 20, None, 20, None),  # the small-form-factor card is another product
    ("NVIDIA RTX 2000 Ada Generation", None, "RTX 2000 Ada 16GB", 16, None),
    ("Trainium2", 96, None, 96, None),  # AWS Trainium is no GPU: left unknown
    ("GH200 (96 GB)", None, "GH200 96GB", 96, None),
    ("B200 SXM6 180GB", None, "B200 180GB", 180, None),
    ("AMD Instinct MI300X OAM", 192, "MI300X 192GB", 192, None),
    ("Ascend 910B", None, "Ascend 910B 64GB", 64, None),
    ("910B2", None, "Ascend 910B2 64GB", 64, None),
    ("昇腾910B", None, "Ascend 910B 64GB", 64, None),
    ("华为昇腾910B3", None, "Ascend 910B3 64GB", 64, None),
    ("Mystery GPU 9000", 24, None, 24, None),
    ("", None, None, None, None),
]


@pytest.mark.parametrize(
    ("raw", "hint", "model", "memory", "form"), CASES, ids=[c[0] or "empty" for c in CASES]
)
def test_identify(
    raw: str, hint: float | None, model: str | None, memory: float | None, form: str | None
) -> None:
    assert identify(raw, hint) == GpuIdentity(model, memory, form)


def test_every_canonical_name_is_a_row_of_the_sizing_catalog() -> None:
    with GPUS_CSV.open(encoding="utf-8", newline="") as rows:
        catalog = {row["gpu_model"] for row in csv.DictReader(rows)}
    assert catalog >= canonical_models(), (
        f"not in sizing/data/gpus.csv: {sorted(canonical_models() - catalog)}"
    )


def test_every_identified_model_is_canonical() -> None:
    assert {c[2] for c in CASES if c[2]} <= canonical_models()


def test_identify_first_falls_back_to_the_next_name() -> None:
    assert identify_first(["Tesla V100-FHHL", "V100 SXM2 32GB"], 32).gpu_model == "V100 SXM 32GB"
    assert identify_first(["Mystery", ""], 24) == GpuIdentity(None, 24, None)


# Names people write (SkyPilot's, the platforms', Chinese spellings) -> the card, and whether a note
# names other variants (a family name resolves to the card most people mean).
PEOPLE = [
    ("A100-80GB", "A100 SXM 80GB", True),  # SkyPilot
    ("A100 80GB", "A100 SXM 80GB", True),
    ("A100-40GB", "A100 SXM 40GB", True),
    ("A100 PCIe", "A100 PCIe 80GB", True),
    ("H100", "H100 SXM 80GB", True),  # SkyPilot's H100 is the SXM board
    ("H100-80GB", "H100 SXM 80GB", True),
    ("H100 NVL", "H100 NVL 94GB", False),
    ("L40S", "L40S 48GB", False),
    ("4090", "RTX 4090 24GB", False),  # AutoDL, 恒源云
    ("RTX4090", "RTX 4090 24GB", False),
    ("4090 48G", "RTX 4090 48GB", False),  # the Chinese platforms' modified card
    ("910B", "Ascend 910B 64GB", False),
    ("昇腾910B", "Ascend 910B 64GB", False),
    ("A800-80G", "A800 80GB", False),  # form not stated: the form-less row
    ("H20", "H20 96GB", True),
    ("V100-32GB", "V100 32GB", False),  # the form is not stated: the form-less row
    ("V100 SXM2 32GB", "V100 SXM 32GB", False),
    ("h100 sxm 80gb", "H100 SXM 80GB", False),  # the canonical name, loosely
    ("A10G", "A10G 24GB", False),  # AWS's most rented card
    ("A100 80GB PCIe", "A100 PCIe 80GB", False),  # Azure's NC A100 v4 name
    ("MI300X", "MI300X 192GB", False),
    ("Gaudi2", "Gaudi 2 96GB", False),
    ("HL-225", "Gaudi 2 96GB", False),
    ("MI250X", "MI250X 64GB", False),  # a person means the accelerator: sized per GCD
    ("GB200", "GB200 186GB", False),
]


@pytest.mark.parametrize(("name", "gpu_model", "noted"), PEOPLE, ids=[case[0] for case in PEOPLE])
def test_names_people_write_resolve(name: str, gpu_model: str, noted: bool) -> None:
    match = resolve(name)
    assert match.gpu_model == gpu_model
    assert (match.note is not None) == noted
    if noted:
        assert match.note and gpu_model in match.note and len(match.variants) > 1
        assert all(variant in match.note for variant in match.variants)


@pytest.mark.parametrize(
    ("name", "nearest"),
    [("H999", None), ("4090 96G", "RTX 4090 24GB"), ("A10X", "A10"), ("", None)],
)
def test_an_unknown_name_says_so_and_suggests_the_nearest(name: str, nearest: str | None) -> None:
    with pytest.raises(UnknownGpu) as raised:
        resolve(name)
    if nearest is not None:
        assert nearest in str(raised.value)


def test_every_card_has_names_that_resolve_back_to_it() -> None:
    for model in canonical_models():
        names = aliases(model)
        assert names, f"{model} has no name people could write"
        assert all(resolve(name).gpu_model == model for name in names)


def test_every_family_of_the_catalog_has_its_row() -> None:
    """gpu_families.csv and gpus.csv agree: each family has its match rule and a default card."""
    with GPUS_CSV.open(encoding="utf-8", newline="") as rows:
        families = {row["family"] for row in csv.DictReader(rows)}
    with FAMILIES_PATH.open(encoding="utf-8", newline="") as rows:
        described = [row["family"] for row in csv.DictReader(rows)]
    assert sorted(described) == sorted(families)
    assert len(described) == len(set(described))


@pytest.mark.parametrize(
    ("gpu_model", "short"),
    [
        ("Ascend 910B 64GB", "910B"),
        ("RTX 4090 48GB", "4090 48G"),
        ("H100 SXM 80GB", "H100"),
        ("A100 PCIe 40GB", "A100 PCIe 40GB"),
    ],
)
def test_a_card_s_short_name_is_the_shortest_that_means_it(gpu_model: str, short: str) -> None:
    assert short_name(gpu_model) == short


def test_every_card_s_short_name_resolves_back_to_it() -> None:
    for gpu_model in canonical_models():
        assert resolve(short_name(gpu_model)).gpu_model == gpu_model

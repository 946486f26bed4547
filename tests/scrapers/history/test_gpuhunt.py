"""dstack gpuhunt catalog CSV reader, on synthetic fixtures in the documented format (see their README)."""

from __future__ import annotations

import datetime as dt

import pytest

from scrapers.history import formats
from scrapers.history.offers import PlatformDay


def test_v2_catalog(fixtures) -> None:
    imported = formats.get("gpuhunt").read(fixtures / "gpuhunt" / "20260402-7" / "runpod.csv")
    items = imported.items.set_index(["offer_id", "pricing_type"])
    assert imported.days == (PlatformDay("runpod", dt.date(2026, 4, 2)),)  # the version folder's date
    assert (imported.rows_read, imported.rows_not_gpu, len(items)) == (8, 1, 6)
    assert imported.rejected["reason"].tolist() == ["price is not a number"]
    on_demand = items.loc[("NVIDIA H100 80GB HBM3@EU-RO-1/1x", "on_demand")]
    spot = items.loc[("NVIDIA H100 80GB HBM3@EU-RO-1/1x", "spot")]
    assert (on_demand["price_amount"], spot["price_amount"]) == (2.69, 1.75)
    eight = items.loc[("NVIDIA H100 80GB HBM3@EU-RO-1/8x", "on_demand")]
    assert (eight["price_per"], eight["gpu_count"], eight["gpu_model"]) == ("instance", 8, "H100 SXM 80GB")
    cluster = items.loc[("NVIDIA H100 80GB HBM3@US-KS-2/8x", "on_demand")]
    assert cluster["extra"]["flags"] == "runpod-cluster"
    assert cluster["extra"]["provider_data"] == {"pod_counts": [2, 3, 4, 5, 6, 7, 8]}
    assert imported.items["available_gpus"].isna().all()  # a catalog lists offers, not stock counts
    assert items.loc[("NVIDIA A100 80GB PCIe@US/1x", "on_demand")]["gpu_model"] == "A100 PCIe 80GB"


def test_v1_catalog_and_provider_alias(fixtures) -> None:
    imported = formats.get("gpuhunt").read(fixtures / "gpuhunt" / "v1-20240301-1" / "lambdalabs.csv")
    assert imported.days == (PlatformDay("lambda", dt.date(2024, 3, 1)),)  # lambdalabs is our `lambda`
    assert imported.items["gpu_model"].tolist() == ["H100 PCIe 80GB", "A100 SXM 80GB"]
    assert imported.rows_not_gpu == 1


def test_options_override_path(fixtures) -> None:
    imported = formats.get("gpuhunt").read(
        fixtures / "gpuhunt" / "20260402-7" / "runpod.csv", observed_on=dt.date(2026, 4, 3), platform="RunPod"
    )
    assert imported.days == (PlatformDay("runpod", dt.date(2026, 4, 3)),)


def test_header_only_and_not_a_catalog(tmp_path) -> None:
    folder = tmp_path / "20260402-1"
    folder.mkdir()
    empty = folder / "runpod.csv"
    empty.write_text("instance_name,location,price,cpu,memory,gpu_count,gpu_name,gpu_memory,spot,disk_size\n")
    imported = formats.get("gpuhunt").read(empty)
    assert imported.items.empty and "not a sold-out provider" in imported.problem
    wrong = folder / "vastai.csv"
    wrong.write_text("a,b\n1,2\n")
    with pytest.raises(ValueError, match="not a gpuhunt catalog CSV"):
        formats.get("gpuhunt").read(wrong)

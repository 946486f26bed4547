"""SkyPilot vms.csv reader on the real Lambda and Vast catalogs."""

from __future__ import annotations

import datetime as dt

import pytest

from scrapers.history import formats
from scrapers.history.offers import ITEM_COLUMNS, PlatformDay
from scrapers.items import OfferItem


@pytest.fixture
def lambda_catalog(sample):
    """`lambda_catalog("2026-04-02")`: the real Lambda catalog of that day, read."""
    return lambda day: formats.get("skypilot").read(sample(f"skypilot_catalog_format/lambda_vms_{day}.csv"))


def test_lambda_rows_are_per_instance_on_demand_with_unknown_stock(lambda_catalog) -> None:
    imported = lambda_catalog("2026-04-02")
    items = imported.items
    assert imported.days == (PlatformDay("lambda", dt.date(2026, 4, 2)),)
    # 272 rows = 16 instance types x 17 regions; the CPU type is skipped and counted
    assert (imported.rows_read, imported.rows_not_gpu, len(items)) == (272, 17, 255)
    assert set(items["price_per"]) == {"instance"}
    assert set(items["pricing_type"]) == {"on_demand"}  # Lambda writes no SpotPrice
    assert items["available_gpus"].isna().all()  # a row per region whatever the capacity: not stock
    assert items["observed_at"].eq("2026-04-02T00:00:00Z").all()
    h100 = items[items["offer_id"] == "gpu_8x_h100_sxm5@us-east-1"].iloc[0]
    assert (h100["gpu_count"], h100["price_amount"], h100["gpu_model"]) == (8, 27.52, "H100 SXM 80GB")
    assert h100["gpu_memory_gb"] == 80.0  # Lambda's GpuInfo memory is per GPU, not per instance


@pytest.mark.parametrize(("day", "price"), [("2026-04-02", 3.78), ("2026-04-06", 4.29), ("2026-05-07", 4.29)])
def test_lambda_h100_sxm_price_per_catalog_day(lambda_catalog, day: str, price: float) -> None:
    items = lambda_catalog(day).items
    one_gpu = items[items["offer_id"].str.startswith("gpu_1x_h100_sxm5@")]
    assert len(one_gpu) == 17  # one per region
    assert set(one_gpu["price_amount"]) == {price}


def test_header_only_catalog_is_a_problem_not_an_empty_catalog(lambda_catalog) -> None:
    imported = lambda_catalog("2026-05-07_header_only")
    assert imported.items.empty and imported.rows_read == 0
    assert imported.days == (PlatformDay("lambda", dt.date(2026, 5, 7)),)
    assert "header and no rows" in imported.problem and "not a sold-out" in imported.problem


def test_vast_memory_is_per_instance_and_spot_zero_means_none(sample) -> None:
    imported = formats.get("skypilot").read(sample("skypilot_catalog_format/vast_vms_2026-04-29.csv"))
    items = imported.items
    assert imported.days == (PlatformDay("vastai", dt.date(2026, 4, 29)),)
    assert len(items) == 64 and set(items["pricing_type"]) == {"on_demand"}  # SpotPrice 0.00 everywhere
    two_5090 = items[items["offer_id"].str.startswith("2x-RTX_5090-32-65536@")].iloc[0]
    # GpuInfo says 65214 MiB for the 2-GPU instance: 32 GB per card
    assert (two_5090["gpu_model"], two_5090["gpu_memory_gb"]) == ("RTX 5090 32GB", 32.0)
    nvl = items[items["offer_id"].str.startswith("1x-H100_NVL-32-65536@")].iloc[0]
    assert nvl["gpu_model"] == "H100 NVL 94GB"  # AcceleratorName says only "H100"
    assert items["region"].str.endswith((", NA", ", EU", ", AS")).all()  # kept as written


def test_items_are_offer_items(lambda_catalog) -> None:
    items = lambda_catalog("2026-04-20").items
    assert tuple(items.columns) == ITEM_COLUMNS
    for record in items.head(20).to_dict(orient="records"):
        OfferItem(**record)  # every column is a contract field, every required one is there


def test_date_and_cloud_come_from_options_when_the_name_has_none(sample, tmp_path) -> None:
    renamed = tmp_path / "vms.csv"
    renamed.write_bytes(sample("skypilot_catalog_format/lambda_vms_2026-04-02.csv").read_bytes())
    with pytest.raises(ValueError, match="--date"):
        formats.get("skypilot").read(renamed)
    imported = formats.get("skypilot").read(renamed, observed_on=dt.date(2026, 4, 3), platform="lambdalabs")
    assert imported.days == (PlatformDay("lambda", dt.date(2026, 4, 3)),)


def test_bad_rows_are_refused_with_reasons_and_the_rest_loads(tmp_path) -> None:
    catalog = tmp_path / "lambda_vms_2026-04-02.csv"
    catalog.write_text(
        "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,GpuInfo,SpotPrice\n"
        "gpu_1x_a10,A10,1.0,30.0,200.0,0.86,us-east-1,,\n"
        "gpu_1x_a10,A10,1.0,30.0,200.0,,us-west-1,,\n"
        "gpu_share_a16,A16,0.25,6.0,16.0,0.13,us-east-1,,\n"
        "gpu_1x_a10,A10,1.0,30.0,200.0,0.86,us-south-1,not a dict,0.40\n"
    )
    imported = formats.get("skypilot").read(catalog)
    # the spiders' reasons; the row without a price is an offer the warehouse's checks reject
    assert imported.rejected["reason"].tolist() == ["gpu_count_invalid"]
    assert imported.items["price_amount"].isna().sum() == 1
    # an unreadable GpuInfo costs only the memory hint; the spot price makes a second offer
    assert sorted(imported.items["pricing_type"]) == ["on_demand", "on_demand", "on_demand", "spot"]


def test_missing_columns_fail_clearly(tmp_path) -> None:
    wrong = tmp_path / "lambda_vms_2026-04-02.csv"
    wrong.write_text("name,price\nx,1\n")
    with pytest.raises(ValueError, match=r"not a SkyPilot vms\.csv, missing columns"):
        formats.get("skypilot").read(wrong)

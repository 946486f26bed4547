"""Daily observations CSV reader on the real 33,654-row file."""

from __future__ import annotations

import datetime as dt

import pytest

from scrapers.history import formats
from scrapers.history.offers import ITEM_COLUMNS, PlatformDay

OBSERVATIONS = "price_history/cherielilili_observations_2026-02-11_to_2026-07-20.csv"


@pytest.fixture(scope="module")
def imported(sample):
    return formats.get("observations").read(sample(OBSERVATIONS))


def test_every_row_becomes_one_offer_outliers_included(imported) -> None:
    items = imported.items
    assert imported.rows_read == 33_654 and len(items) == 33_654 and imported.rejected.empty
    assert tuple(items.columns) == ITEM_COLUMNS
    days = {platform_day.day for platform_day in imported.days}
    assert len(days) == 159 and min(days) == dt.date(2026, 2, 11) and max(days) == dt.date(2026, 7, 20)
    # the Vast 1x RTX 4090 on-demand minimum jumps 0.40 -> 1.05 around 2026-05-28: kept as it was
    vast_4090 = items[
        (items["platform"] == "vastai")
        & (items["gpu_name_raw"] == "RTX_4090")
        & (items["gpu_count"] == 1)
        & (items["pricing_type"] == "on_demand")
    ]
    daily_min = vast_4090.groupby("observed_at")["price_amount"].min()
    assert daily_min["2026-05-25T00:00:00Z"] == 0.40 and daily_min["2026-05-28T00:00:00Z"] == 1.0521


def test_units_prices_stock_and_platforms(imported) -> None:
    items = imported.items
    assert set(items["price_per"]) == {"gpu"} and set(items["price_currency"]) == {"USD"}
    assert set(items["pricing_type"]) == {"on_demand", "spot"}
    assert items["available_gpus"].isna().all()  # n_offers counts offers, not GPUs
    assert {"vastai", "runpod", "lambda", "massedcompute", "datacrunch"} <= set(items["platform"])
    first = items.iloc[0]
    assert first["extra"]["n_offers"] == 9 and "price_median_usd_per_gpu_hour" in first["extra"]
    assert PlatformDay("lambda", dt.date(2026, 5, 8)) in imported.days


def test_minimum_is_the_price_median_and_max_are_kept(imported) -> None:
    items = imported.items
    extra_median = items["extra"].map(lambda extra: extra["price_median_usd_per_gpu_hour"])
    extra_max = items["extra"].map(lambda extra: extra["price_max_usd_per_gpu_hour"])
    assert (items["price_amount"] <= extra_median).all() and (extra_median <= extra_max).all()


def test_canonical_models_from_tracker_names(imported) -> None:
    names = imported.items.drop_duplicates("gpu_name_raw").set_index("gpu_name_raw")["gpu_model"]
    assert names["H100_SXM"] == "H100 SXM 80GB"
    assert names["A100_PCIE_40GB"] == "A100 PCIe 40GB"
    assert names["RTX_4090"] == "RTX 4090 24GB"
    assert names["B300"] == "B300 279GB"  # in the catalog since issue 15
    assert names["GB200"] == "GB200 186GB"  # in the catalog since issue 28


def test_filters_and_bad_rows(tmp_path) -> None:
    csv = tmp_path / "observations.csv"
    header = (
        "date,provider,gpu_model,gpu_count,region,rental_type,price_min_usd,price_median_usd,"
        "price_max_usd,n_offers,source_url,fetched_at\n"
    )
    csv.write_text(
        header
        + "2026-05-08,vast.ai,H100_SXM,1,US,on_demand,1.9,2.0,2.5,4,https://x,2026-05-08T01:00:00+00:00\n"
        + "2026-05-08,vast.ai,H100_SXM,1,US,reserved,1.9,2.0,2.5,4,https://x,2026-05-08T01:00:00+00:00\n"
        + "2026-05-09,runpod,H100_SXM,1,secure,on_demand,0,0,0,1,https://x,2026-05-09T01:00:00+00:00\n"
        + "2026-05-09,runpod,H100_SXM,2,secure,spot,1.5,1.5,1.5,1,https://x,2026-05-09T01:00:00+00:00\n"
    )
    everything = formats.get("observations").read(csv)
    assert len(everything.items) == 2
    assert everything.rejected["reason"].tolist() == [
        "rental_type is neither on_demand nor spot",
        "price_min_usd is not positive",
    ]
    only = formats.get("observations").read(csv, observed_on=dt.date(2026, 5, 9), platform="RunPod")
    assert only.days == (PlatformDay("runpod", dt.date(2026, 5, 9)),) and len(only.items) == 1


def test_header_only_file_is_a_problem(tmp_path) -> None:
    csv = tmp_path / "observations.csv"
    csv.write_text(
        "date,provider,gpu_model,gpu_count,region,rental_type,price_min_usd,price_median_usd,"
        "price_max_usd,n_offers,source_url,fetched_at\n"
    )
    imported = formats.get("observations").read(csv)
    assert imported.items.empty and imported.days == () and "header and no rows" in imported.problem


def test_first_week_instance_totals_load_as_written(imported) -> None:
    items = imported.items
    aws_8x_h100 = items[
        (items["platform"] == "aws") & (items["gpu_name_raw"] == "H100_SXM") & (items["gpu_count"] == 8)
    ].set_index("observed_at")["price_amount"]
    # the aggregator quoted the p5.48xlarge total in the first week, per GPU afterwards (module doc)
    assert aws_8x_h100["2026-02-11T00:00:00Z"] == 55.04 and aws_8x_h100["2026-02-21T00:00:00Z"] == 6.88

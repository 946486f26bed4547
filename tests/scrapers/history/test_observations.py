"""Daily observations CSV reader on the real 33,654-row file.

The format is read by DuckDB in the warehouse (warehouse/queries/history/import_observations.sql), so
each test imports into a real scratch warehouse and reads what was stored.
"""

from __future__ import annotations

import datetime as dt
import json

import pytest
import warehouse_template

from scrapers.history import formats
from warehouse.imports import import_file

OBSERVATIONS = "price_history/cherielilili_observations_2026-02-11_to_2026-07-20.csv"
HEADER = (
    "date,provider,gpu_model,gpu_count,region,rental_type,price_min_usd,price_median_usd,"
    "price_max_usd,n_offers,source_url,fetched_at\n"
)


@pytest.fixture(scope="module")
def imported(sample):
    con = warehouse_template.scratch()
    report = import_file(con, formats.get("observations"), sample(OBSERVATIONS))
    return con, report


def _min_price_by_day(con, platform: str, name: str, count: int, pricing_type: str) -> dict:
    """The day's lowest price of one platform's offers of `count` GPUs called `name`, by day."""
    rows = con.execute(
        "SELECT observed_date, min(price_amount) FROM offers WHERE platform = $platform "
        "AND gpu_name_raw = $name AND gpu_count = $count AND pricing_type = $type GROUP BY ALL",
        {"platform": platform, "name": name, "count": count, "type": pricing_type},
    ).fetchall()
    return dict(rows)


def test_every_row_becomes_one_offer_outliers_included(imported) -> None:
    con, report = imported
    assert report.rows_read == 33_654 and report.offers_loaded == 33_654 and report.rows_refused == 0
    ((offers, first, last, days),) = con.execute(
        "SELECT count(*), min(observed_date), max(observed_date), count(DISTINCT observed_date) FROM offers"
    ).fetchall()
    assert (offers, first, last, days) == (33_654, dt.date(2026, 2, 11), dt.date(2026, 7, 20), 159)
    # the Vast 1x RTX 4090 on-demand minimum jumps 0.40 -> 1.05 around 2026-05-28: kept as it was
    daily_min = _min_price_by_day(con, "vastai", "RTX_4090", 1, "on_demand")
    assert daily_min[dt.date(2026, 5, 25)] == 0.40 and daily_min[dt.date(2026, 5, 28)] == 1.0521


def test_units_prices_stock_and_platforms(imported) -> None:
    con, _ = imported
    ((per, currencies, types, stock),) = con.execute(
        "SELECT list(DISTINCT price_per), list(DISTINCT price_currency), "
        "list(DISTINCT pricing_type ORDER BY 1), count(available_gpus) FROM offers"
    ).fetchall()
    assert (per, currencies, types) == (["gpu"], ["USD"], ["on_demand", "spot"])
    assert stock == 0  # n_offers counts offers, not GPUs
    platforms = {platform for (platform,) in con.execute("SELECT DISTINCT platform FROM offers").fetchall()}
    assert {"vastai", "runpod", "lambda", "massedcompute", "datacrunch"} <= platforms
    # the file's first row: 2026-02-11,acecloud,A100_SXM_80GB,1,global,on_demand,2.3,2.3,2.3,9,...
    ((extra,),) = con.execute(
        "SELECT CAST(extra AS VARCHAR) FROM offers WHERE platform = 'acecloud' "
        "AND offer_id = 'A100_SXM_80GB/1x/global/on_demand' AND observed_date = DATE '2026-02-11'"
    ).fetchall()
    assert json.loads(extra)["n_offers"] == 9 and "price_median_usd_per_gpu_hour" in json.loads(extra)
    assert con.execute(
        "SELECT count(*) FROM crawl_runs WHERE platform = 'lambda' AND started_at = DATE '2026-05-08'"
    ).fetchall() == [(1,)]


def test_minimum_is_the_price_median_and_max_are_kept(imported) -> None:
    con, _ = imported
    assert con.execute(
        "SELECT count(*) FROM offers WHERE NOT (price_amount <= CAST(extra->>'price_median_usd_per_gpu_hour' "
        "AS DOUBLE) AND CAST(extra->>'price_median_usd_per_gpu_hour' AS DOUBLE) <= "
        "CAST(extra->>'price_max_usd_per_gpu_hour' AS DOUBLE))"
    ).fetchall() == [(0,)]


def test_canonical_models_from_tracker_names(imported) -> None:
    con, _ = imported
    names = dict(con.execute("SELECT DISTINCT gpu_name_raw, gpu_model FROM offers").fetchall())
    assert names["H100_SXM"] == "H100 SXM 80GB"
    assert names["A100_PCIE_40GB"] == "A100 PCIe 40GB"
    assert names["RTX_4090"] == "RTX 4090 24GB"
    assert names["B300"] == "B300 279GB"
    assert names["GB200"] == "GB200 186GB"


def test_filters_and_bad_rows(tmp_path) -> None:
    csv = tmp_path / "observations.csv"
    csv.write_text(
        HEADER
        + "2026-05-08,vast.ai,H100_SXM,1,US,on_demand,1.9,2.0,2.5,4,https://x,2026-05-08T01:00:00+00:00\n"
        + "2026-05-08,vast.ai,H100_SXM,1,US,reserved,1.9,2.0,2.5,4,https://x,2026-05-08T01:00:00+00:00\n"
        + "2026-05-09,runpod,H100_SXM,1,secure,on_demand,0,0,0,1,https://x,2026-05-09T01:00:00+00:00\n"
        + "2026-05-09,runpod,H100_SXM,2,secure,spot,1.5,1.5,1.5,1,https://x,2026-05-09T01:00:00+00:00\n"
    )
    con = warehouse_template.scratch()
    everything = import_file(con, formats.get("observations"), csv)
    assert everything.offers_loaded == 2 and everything.rows_refused == 2
    assert con.execute("SELECT reason FROM rejected_offers ORDER BY raw").fetchall() == [
        ("rental_type is neither on_demand nor spot",),
        ("price_min_usd is not positive",),
    ]
    con = warehouse_template.scratch()
    only = import_file(
        con, formats.get("observations"), csv, observed_on=dt.date(2026, 5, 9), platform="RunPod"
    )
    assert only.rows_read == 2 and only.offers_loaded == 1
    assert con.execute("SELECT platform, CAST(started_at AS DATE) FROM crawl_runs").fetchall() == [
        ("runpod", dt.date(2026, 5, 9))
    ]


def test_header_only_file_is_a_problem(tmp_path) -> None:
    csv = tmp_path / "observations.csv"
    csv.write_text(HEADER)
    report = import_file(warehouse_template.scratch(), formats.get("observations"), csv)
    assert report.runs is not None and report.runs.empty and "header and no rows" in report.error


def test_first_week_instance_totals_load_as_written(imported) -> None:
    con, _ = imported
    aws_8x_h100 = _min_price_by_day(con, "aws", "H100_SXM", 8, "on_demand")
    # the aggregator quoted the p5.48xlarge total in the first week, per GPU afterwards (module doc)
    assert aws_8x_h100[dt.date(2026, 2, 11)] == 55.04 and aws_8x_h100[dt.date(2026, 2, 21)] == 6.88

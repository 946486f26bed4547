"""The offer item contract's hardware and catalog fields (scrapers.items.OfferItem: gpu_frac,
machine_id, gpu_ids, catalog, catalog_date, pool_id; billing by the year), loaded from SYNTHETIC crawls."""

from __future__ import annotations

import datetime as dt

import duckdb
import pytest
from synthetic_crawls import WriteCrawl, synthetic_offer

from scrapers.items import PLAN_OF_PERIOD
from warehouse.loading import load_crawl


def _stored(con: duckdb.DuckDBPyConnection) -> dict[str, tuple]:
    rows = con.execute(
        "SELECT offer_id, gpu_frac, machine_id, gpu_ids, catalog, catalog_date, pool_id, "
        "price_usd_per_gpu_hour FROM offers"
    ).fetchall()
    return {row[0]: row[1:] for row in rows}


def test_the_hardware_and_catalog_fields_are_stored_as_the_platform_said(
    writer_con: duckdb.DuckDBPyConnection, write_crawl: WriteCrawl
) -> None:
    summary = write_crawl(
        [
            synthetic_offer(1, machine_id="m-41", gpu_ids=[0, 1, 2, 3], gpu_count=4),
            synthetic_offer(2, gpu_frac=0.25, gpu_name_raw="A100 1/4", price_amount=0.6),
            synthetic_offer(3, catalog="skypilot-catalog/v8", catalog_date="2026-09-30", available_gpus=None),
            synthetic_offer(4),  # says none of them
            synthetic_offer(5, pool_id="H100/secure", gpu_count=2),
        ]
    )
    result = load_crawl(writer_con, summary)
    assert (result.status, result.offers_loaded) == ("ok", 5)
    stored = _stored(writer_con)
    assert stored["synthetic-1"][:5] == (None, "m-41", [0, 1, 2, 3], None, None)
    assert stored["synthetic-2"][:2] == (0.25, None)
    assert stored["synthetic-3"][3:5] == ("skypilot-catalog/v8", dt.date(2026, 9, 30))
    assert stored["synthetic-4"][:6] == (None, None, None, None, None, None)
    assert stored["synthetic-5"][:6] == (None, None, None, None, None, "H100/secure")


@pytest.mark.parametrize(
    ("fields", "reason"),
    [
        ({"gpu_frac": 1.0}, "gpu_frac must be a share of one card, 0 < x < 1, or null, got 1.0"),
        ({"gpu_frac": 0}, "gpu_frac must be a share of one card, 0 < x < 1, or null, got 0"),
        ({"gpu_frac": "half"}, "gpu_frac must be a share of one card, 0 < x < 1, or null, got half"),
        ({"gpu_ids": [0, -1]}, "gpu_ids must be a list of whole numbers >= 0 or null, got [0,-1]"),
        ({"gpu_ids": "0,1"}, 'gpu_ids must be a list of whole numbers >= 0 or null, got "0,1"'),
        ({"catalog_date": "Sept 30"}, "catalog_date must be a date (YYYY-MM-DD) or null, got Sept 30"),
        ({"billing_period": "decade"}, "billing_period must be hour, day, week, month or year, got decade"),
    ],
)
def test_a_field_outside_the_contract_is_rejected_with_its_value(
    writer_con: duckdb.DuckDBPyConnection, write_crawl: WriteCrawl, fields: dict, reason: str
) -> None:
    summary = write_crawl([synthetic_offer(1), synthetic_offer(2, **fields)])
    result = load_crawl(writer_con, summary)
    assert (result.status, result.offers_loaded, result.items_rejected) == ("partial", 1, 1)
    ((stored_reason,),) = writer_con.execute("SELECT reason FROM rejected_offers").fetchall()
    assert stored_reason == reason


def test_a_year_is_8760_hours_and_a_reserved_term(
    writer_con: duckdb.DuckDBPyConnection, write_crawl: WriteCrawl
) -> None:
    assert PLAN_OF_PERIOD["year"] == "reserved"
    # one year of one GPU at 17,520 USD is 2 USD per GPU-hour; a 3-year term is 3 such periods
    summary = write_crawl(
        [
            synthetic_offer(
                1, price_amount=17520.0, billing_period="year", pricing_type="reserved", min_term_periods=3
            )
        ]
    )
    assert load_crawl(writer_con, summary).offers_loaded == 1
    assert _stored(writer_con)["synthetic-1"][6] == pytest.approx(2.0)
    ((hours,),) = writer_con.execute("SELECT billed_hours(100, 'year', 3)").fetchall()
    assert hours == 3 * 8760

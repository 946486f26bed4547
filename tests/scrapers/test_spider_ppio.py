"""派欧云 PPIO spider: prices in 1/100000 of the currency per GPU, the two listings and what each gives,
subscriptions as plans or reservations, stock, and the products SkyPilot leaves out."""

from __future__ import annotations

from typing import Any

import pytest
from crawl_harness import drive, json_of, snapshot_of, with_exchange

HOURLY, MONTHLY = 0, 1  # exchanges of the ppio snapshot


@pytest.fixture(autouse=True)
def key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PPIO_API_KEY", "test-key")


def _offers(outcome: Any) -> dict[tuple[str, str], Any]:
    return {(o.offer_id, o.pricing_type): o for o in outcome.offers}


def test_the_key_is_a_bearer_and_the_subscriptions_listing_follows_the_default_one() -> None:
    outcome = drive("ppio")
    assert [r.meta["source_url"] for r in outcome.requests] == [
        "https://api.ppinfra.com/gpu-instance/openapi/v1/products?available=true",
        "https://api.ppinfra.com/gpu-instance/openapi/v1/products?available=true&billingMethod=monthly",
    ]
    assert {r.headers["Authorization"] for r in outcome.requests} == {b"Bearer test-key"}


def test_prices_are_per_gpu_in_hundred_thousandths_and_each_listing_gives_its_own() -> None:
    offers = _offers(drive("ppio"))
    hourly = offers[("4090.16c62g@华东-浙江-01", "on_demand")]
    assert (hourly.price_amount, hourly.price_per, hourly.gpu_count, hourly.billing_period) == (
        1.89,
        "gpu",
        1,
        "hour",
    )
    assert offers[("4090.16c62g@华东-浙江-01", "spot")].price_amount == 0.95  # "95000"
    month = offers[("4090.16c62g@华东-浙江-01/month-3", "monthly_plan")]
    assert (month.price_amount, month.billing_period, month.min_term_periods) == (949.0, "month", 3)
    assert month.source_url.endswith("billingMethod=monthly")
    year = offers[("A100-80GB.14c240g@华北-内蒙古-01/month-12", "reserved")]
    assert (year.price_amount, year.min_term_periods) == (3580.0, 12)  # 12 months: a reservation
    assert {o.source_url.endswith("monthly") for o in drive("ppio").offers if o.billing_period == "hour"} == {
        False
    }


def test_one_offer_per_region_stock_from_deployability_and_refused_products() -> None:
    outcome = drive("ppio")
    offers = _offers(outcome)
    assert {key[0] for key in offers if key[0].startswith("4090.16c62g@") and key[1] == "on_demand"} == {
        "4090.16c62g@华东-浙江-01",
        "4090.16c62g@华南-广东-02",
    }
    assert offers[("5090.16c90g@华东-浙江-01", "on_demand")].available_gpus == 0  # availableDeploy false
    assert offers[("H20.16c200g@华北-内蒙古-01", "on_demand")].available_gpus is None  # "high": no count
    assert sorted((r.reason, r.raw["id"]) for r in outcome.rejected) == [
        ("not_buyable", "L40S.16c120g"),
        ("promotional_product", "4090.activity.16c62g"),
    ]
    assert ("A100-80GB.14c240g@华北-内蒙古-01", "spot") not in offers  # "0" and no "spot" method


def test_a_month_count_that_is_no_whole_number_is_no_subscription() -> None:
    body = json_of(snapshot_of("ppio").exchanges[MONTHLY])
    body["data"][0]["monthlyPrice"] = [{"price": "99900000", "month": 1.5}, {"price": "94900000"}]
    offers = _offers(drive("ppio", with_exchange(snapshot_of("ppio"), MONTHLY, body=body)))
    assert not [key for key in offers if key[0].startswith("4090.16c62g@") and "/month" in key[0]]

"""chenyu.cn (晨羽智云) spider: one offer per period a model is priced by, the year as a reservation,
optional price keys, the status code, GPU names."""

from __future__ import annotations

import pytest
from crawl_harness import drive, json_of, snapshot_of, with_exchange


@pytest.fixture(autouse=True)
def key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CHENYU_API_KEY", "cy_test")


RTX_4090 = "gpu_12345678-1234-1234-1234-123456789012"  # the API reference's own example row


def test_every_period_of_the_references_example_is_an_offer() -> None:
    outcome = drive("chenyu")
    assert outcome.requests[0].headers["Authorization"] == b"Bearer cy_test"
    periods = {
        o.offer_id.split("/")[1]: (o.price_amount, o.billing_period, o.pricing_type, o.min_term_periods)
        for o in outcome.offers
        if o.offer_id.startswith(RTX_4090)
    }
    assert periods == {
        "hour": (5.5, "hour", "on_demand", 1),
        "day": (120.0, "day", "daily_plan", 1),
        "week": (800.0, "week", "weekly_plan", 1),
        "month": (3200.0, "month", "monthly_plan", 1),
        "year": (35000.0, "year", "reserved", 1),
    }
    assert {(o.price_currency, o.price_per, o.gpu_count, o.region) for o in outcome.offers} == {
        ("CNY", "gpu", 1, None)
    }


def test_a_period_without_a_price_key_is_not_sold_and_a_zero_price_is_refused() -> None:
    outcome = drive("chenyu")
    rtx_4090d = {o.offer_id.split("/")[1] for o in outcome.offers if o.gpu_name_raw == "NVIDIA RTX 4090D"}
    assert rtx_4090d == {"hour", "day", "month"}
    assert sorted(r.raw["offer_id"].split("/")[1] for r in outcome.rejected) == sorted(
        ["hour", "day", "week", "month", "year"]
    )
    assert {r.reason for r in outcome.rejected} == {"price_not_positive"}  # the RTX 5090 row, all 0


def test_status_other_than_available_is_no_stock_and_names_stay_honest() -> None:
    outcome = drive("chenyu")
    stock = {o.gpu_name_raw: o.available_gpus for o in outcome.offers}
    assert stock["NVIDIA A800 80GB"] == 0 and stock["NVIDIA RTX 4090"] is None
    models = {o.gpu_name_raw: o.gpu_model for o in outcome.offers}
    assert models["NVIDIA RTX 4090"] == "RTX 4090 24GB" and models["NVIDIA RTX 4090D"] == "RTX 4090D 24GB"
    assert models["NVIDIA RTX 3080"] is None  # 10 or 12 GB not stated


def test_a_business_error_code_with_http_200_fails_the_crawl() -> None:
    body = {"code": 401, "msg": "API Key无效或已过期", "data": None}
    outcome = drive("chenyu", with_exchange(snapshot_of("chenyu"), 0, body=body))
    assert (outcome.status, outcome.offers) == ("failed", [])
    assert "error code 401: API Key无效或已过期" in outcome.error
    assert json_of(snapshot_of("chenyu").exchanges[0])["code"] == 0

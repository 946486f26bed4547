"""scrapers/pipelines.py: the item checks, the one place a quote that is no price is rejected."""

from __future__ import annotations

from typing import Any

import pytest
from scrapy.utils.test import get_crawler

from scrapers.items import OfferItem
from scrapers.pipelines import STAT_REJECTED_BY_REASON, OfferChecks, offer_problem
from scrapers.rejects import RejectedOffer
from scrapers.spiders.vastai import VastaiSpider


def _offer(**changes: Any) -> OfferItem:
    fields: dict[str, Any] = {
        "platform": "vastai",
        "offer_id": "1",
        "gpu_name_raw": "H100 SXM",
        "gpu_count": 2,
        "price_amount": 3.5,
        "price_currency": "USD",
        "price_per": "instance",
        "billing_period": "hour",
        "pricing_type": "on_demand",
        "observed_at": "2026-11-30T06:00:00Z",
        "source_url": "https://console.vast.ai/api/v0/bundles/",
    }
    return OfferItem(**{**fields, **changes})


@pytest.mark.parametrize(
    ("changes", "problem"),
    [
        ({}, None),
        ({"price_amount": None}, "price_missing"),  # the platform gave no price: spiders pass None on
        ({"price_amount": float("nan")}, "price_missing"),
        ({"price_amount": 0.0}, "price_not_positive"),
        ({"price_amount": -1.5}, "price_not_positive"),
        ({"price_currency": "GBP"}, "currency_unknown"),
        ({"gpu_count": 0}, "gpu_count_not_positive"),
        ({"available_gpus": -1}, "stock_negative"),
        ({"price_amount": 1e6}, None),  # implausible, but a price: the warehouse's rule judges it
    ],
)
def test_offer_problem(changes: dict[str, Any], problem: str | None) -> None:
    assert offer_problem(_offer(**changes)) == problem


def test_a_rejected_offer_keeps_the_quote_as_read_and_is_counted() -> None:
    crawler = get_crawler(VastaiSpider)
    checks = OfferChecks(crawler)
    kept = checks.process_item(_offer())
    rejected = checks.process_item(_offer(offer_id="2", price_amount=None))
    checks.close_spider()
    assert isinstance(kept, OfferItem)
    assert isinstance(rejected, RejectedOffer) and rejected.reason == "price_missing"
    assert rejected.raw["offer_id"] == "2" and rejected.raw["gpu_name_raw"] == "H100 SXM"
    assert crawler.stats.get_value(STAT_REJECTED_BY_REASON + "price_missing") == 1
    assert crawler.stats.get_value("gpuplan/offers") == 1

"""矩池云 matpool spider: public machine pools, prices in 1/100000 CNY per unit, GPUs per unit,
pages, and its faults."""

from __future__ import annotations

from typing import Any

import pytest
from crawl_harness import drive, json_of, snapshot_of, with_exchange

PAGE_1, PAGE_2 = 0, 1  # exchanges of the matpool snapshot


def _page_1(**changes: Any) -> Any:
    body = json_of(snapshot_of("matpool").exchanges[PAGE_1])
    body.update(changes)
    return with_exchange(snapshot_of("matpool"), PAGE_1, body=body)


def _first_pool(**hardware: Any) -> Any:
    body = json_of(snapshot_of("matpool").exchanges[PAGE_1])
    body["pools"][0]["machine"]["hardware"].update(hardware)
    return with_exchange(snapshot_of("matpool"), PAGE_1, body=body)


def test_no_token_is_needed_and_both_pages_are_read() -> None:
    outcome = drive("matpool")
    assert outcome.status == "ok"
    assert [r.meta["source_url"] for r in outcome.requests] == [
        "https://matgo.cn/api/machine_pools?machine_category=0&page=1&per_page=100",
        "https://matgo.cn/api/machine_pools?machine_category=0&page=2&per_page=100",
    ]
    assert "Authorization" not in outcome.requests[0].headers


def test_the_discount_price_wins_and_the_list_price_stands_in_for_a_missing_or_zero_one() -> None:
    prices = {o.offer_id: o.price_amount for o in drive("matpool").offers}
    assert prices["rp-3f2a91"] == 1.98  # discountPriceMillicent 198000 of 218000
    assert prices["rp-3f2a92"] == 3.88  # discount 0: the list price
    assert prices["rp-3f2a93"] == 15.98  # no discount field; a 2-GPU unit
    offers = drive("matpool").offers
    assert {(o.price_currency, o.price_per, o.billing_period) for o in offers} == {
        ("CNY", "instance", "hour")
    }


def test_a_unit_of_two_gpus_is_priced_and_counted_as_two_gpus() -> None:
    # quziang/matpool-gpu: the price is CNY per unit-hour and max_available_units counts units.
    offers = {o.offer_id: o for o in drive("matpool").offers}
    a100 = offers["rp-3f2a93"]  # hardware.gpu.gpuIds [0, 1]
    assert (a100.gpu_count, a100.price_amount, a100.available_gpus) == (2, 15.98, 4)  # 2 units
    assert a100.extra["available_units"] == 2
    h800 = offers["rp-3f2a96"]  # no gpuIds: 8 GPUs in 4 units (Aoblex/matpool-cli's unitStep)
    assert (h800.gpu_count, h800.price_amount, h800.available_gpus) == (2, 19.98, 2)
    assert offers["rp-3f2a91"].gpu_count == 1


def test_a_pool_that_does_not_say_its_unit_size_is_rejected() -> None:
    body = json_of(snapshot_of("matpool").exchanges[PAGE_1])
    machine = body["pools"][3]["machine"]  # the H800 pool, without gpuIds
    del machine["gpu"], machine["unit"]
    outcome = drive("matpool", with_exchange(snapshot_of("matpool"), PAGE_1, body=body))
    assert [r.raw["resource_pool_id"] for r in outcome.rejected if r.reason == "gpus_per_unit_unknown"] == [
        "rp-3f2a96"
    ]


@pytest.mark.parametrize(("units", "available"), [(12, 24), (0, 0), (None, None)])
def test_stock_is_max_available_units_times_the_gpus_of_a_unit(
    units: int | None, available: int | None
) -> None:
    body = json_of(snapshot_of("matpool").exchanges[PAGE_1])
    body["pools"][2]["max_available_units"] = units  # the A100 pool: 2 GPUs per unit
    outcome = drive("matpool", with_exchange(snapshot_of("matpool"), PAGE_1, body=body))
    assert {o.available_gpus for o in outcome.offers if o.offer_id == "rp-3f2a93"} == {available}


def test_a_negative_stock_rejects_that_pool_only() -> None:
    body = json_of(snapshot_of("matpool").exchanges[PAGE_1])
    body["pools"][0]["max_available_units"] = -1
    outcome = drive("matpool", with_exchange(snapshot_of("matpool"), PAGE_1, body=body))
    assert outcome.status == "ok"
    assert [
        (r.reason, r.raw["resource_pool_id"]) for r in outcome.rejected if r.reason == "stock_invalid"
    ] == [("stock_invalid", "rp-3f2a91")]


def test_zones_read_as_the_site_shows_them() -> None:
    regions = {o.offer_id: o.region for o in drive("matpool").offers}
    assert (regions["rp-3f2a91"], regions["rp-3f2a92"], regions["rp-40b711"]) == ("1区", "2区", "3区")


def test_gpu_memory_tells_the_48gb_rtx_4090_and_unknown_cards_are_kept() -> None:
    outcome = drive("matpool")
    models = {o.offer_id: o.gpu_model for o in outcome.offers}
    assert (models["rp-3f2a91"], models["rp-3f2a92"]) == ("RTX 4090 24GB", "RTX 4090 48GB")
    assert models["rp-3f2a94"] is None
    assert outcome.stats["gpuplan/unknown_gpus"] == {"NVIDIA RTX A2000": 1}


def test_pools_without_a_price_or_an_id_are_rejected_not_dropped() -> None:
    reasons = sorted(r.reason for r in drive("matpool").rejected)
    assert reasons == ["price_missing", "record_incomplete"]


def test_a_first_page_without_pagination_keeps_its_offers_and_is_partial() -> None:
    body = json_of(snapshot_of("matpool").exchanges[PAGE_1])
    del body["pagination"]
    outcome = drive("matpool", with_exchange(snapshot_of("matpool"), PAGE_1, body=body))
    assert outcome.status == "partial"
    assert "no 'pagination' at the top level" in outcome.error
    assert len(outcome.offers) == 5  # page 1's priced pools; page 2 was never asked for


def test_a_failed_second_page_keeps_the_first_and_is_partial() -> None:
    outcome = drive(
        "matpool", with_exchange(snapshot_of("matpool"), PAGE_2, status=502, body={"error": "bad gateway"})
    )
    assert outcome.status == "partial"
    assert outcome.error.startswith(
        "HTTP 502 from https://matgo.cn/api/machine_pools?machine_category=0&page=2"
    )
    assert len(outcome.offers) == 5

"""Vast.ai spider: what the bundles answer becomes, including its faults."""

from __future__ import annotations

import json
from typing import Any

import pytest
from crawl_harness import drive, json_of, snapshot_of, with_exchange

from scrapers.spiders import vastai


def _with_offers(offers: list[dict[str, Any]]) -> Any:
    return with_exchange(snapshot_of("vastai"), 0, body={"offers": offers})


def _first_offer(**changes: Any) -> list[dict[str, Any]]:
    offers = json_of(snapshot_of("vastai").exchanges[0])["offers"]
    offers[0].update(changes)
    return offers


def test_both_prices_of_an_offer_per_instance() -> None:
    outcome = drive("vastai")
    h100 = [o for o in outcome.offers if o.offer_id == "28941032"]
    # spot: min_bid 2.2 plus the disk dph_total carries (3.7355 - 3.7333)
    assert {(o.pricing_type, o.price_amount) for o in h100} == {("on_demand", 3.7355), ("spot", 2.2022)}
    assert all(o.price_per == "instance" and o.gpu_count == 2 and o.available_gpus == 2 for o in h100)


def test_gpu_ram_tells_the_48gb_rtx_4090_from_the_24gb_one() -> None:
    models = {o.offer_id: o.gpu_model for o in drive("vastai").offers if o.gpu_name_raw == "RTX 4090"}
    assert models == {"29005117": "RTX 4090 24GB", "29005118": "RTX 4090 48GB"}


@pytest.mark.parametrize(
    ("changes", "spot"),
    [
        ({"dph_total": 1.7344, "dph_base": 1.7333}, 1.1011),  # the disk in dph_total
        ({"dph_base": None, "storage_cost": 0.144}, 1.101),  # 5 GiB x 0.144 $/GB-month / 720 h (gpuhunt)
        ({"dph_base": None, "storage_cost": None}, None),  # no disk price: no spot offer
    ],
)
def test_a_spot_price_includes_the_disk_like_the_on_demand_one(
    changes: dict[str, Any], spot: float | None
) -> None:
    outcome = drive("vastai", _with_offers(_first_offer(min_bid=1.1, **changes)))
    spots = [o.price_amount for o in outcome.offers if o.offer_id == "28941031" and o.pricing_type == "spot"]
    assert spots == ([] if spot is None else [spot])


def test_new_catalog_cards_map_and_unknown_names_are_counted() -> None:
    outcome = drive("vastai")
    models = {o.gpu_name_raw: o.gpu_model for o in outcome.offers}
    assert models["Tesla T4"] == "T4 16GB"
    assert (models["RTX A4000"], models["RTX A5000"]) == ("RTX A4000 16GB", "RTX A5000 24GB")
    assert models["RTX PRO 6000 S"] == models["RTX PRO 6000 WS"] == "RTX PRO 6000 96GB"
    assert (models["RTX 5080"], models["RTX 4080S"]) == ("RTX 5080 16GB", "RTX 4080 SUPER 16GB")
    assert models["Tesla V100"] == "V100 16GB"  # 16 GB, the form not stated
    # Counts per name (a real answer has ~50 unknown names: a bounded list would fill at once).
    assert outcome.stats["gpuplan/unknown_gpus"] == {"RTX 3090 Ti": 2, "GTX 1060": 2, "Q RTX 6000": 2}


def test_an_offer_without_min_bid_has_no_spot_price() -> None:
    pricing = {o.pricing_type for o in drive("vastai").offers if o.offer_id == "29005118"}
    assert pricing == {"on_demand"}


@pytest.mark.parametrize(
    ("changes", "available"),
    [
        ({"rentable": True, "rented": False}, 1),
        ({"rented": True}, 0),
        ({"rentable": False}, 0),
        ({"rentable": None}, None),
    ],
)
def test_stock_is_the_slot_when_rentable(changes: dict[str, Any], available: int | None) -> None:
    outcome = drive("vastai", _with_offers(_first_offer(**changes)))
    assert {o.available_gpus for o in outcome.offers if o.offer_id == "28941031"} == {available}


def test_a_full_page_marks_the_crawl_partial(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vastai, "OFFER_LIMIT", 22)
    snapshot = snapshot_of("vastai")
    query = {**json.loads(snapshot.exchanges[0].body_key), "limit": 22}
    outcome = drive("vastai", with_exchange(snapshot, 0, body_key=json.dumps(query)))
    assert outcome.status == "partial"
    assert "Vast returned 22 offers, the request's limit" in outcome.error

"""Vast.ai spider: what the bundles answer becomes, including its faults."""

from __future__ import annotations

import json
from typing import Any

import pytest
from crawl_harness import drive, json_of, snapshot_of, with_exchange

from scrapers import parsing
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
    # spot: min_bid 2.2 plus the disk dph_total carries (3.4688 - 3.4666)
    assert {(o.pricing_type, o.price_amount) for o in h100} == {("on_demand", 3.4688), ("spot", 2.2022)}
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
    monkeypatch.setattr(vastai, "OFFER_LIMIT", 25)
    snapshot = snapshot_of("vastai")
    query = {**json.loads(snapshot.exchanges[0].body_key), "limit": 25}
    outcome = drive("vastai", with_exchange(snapshot, 0, body_key=json.dumps(query)))
    assert outcome.status == "partial"
    assert "Vast returned 25 offers, the request's limit" in outcome.error


def _of_machine(outcome: Any, machine_id: str) -> list[Any]:
    return [o for o in outcome.offers if o.machine_id == machine_id and o.pricing_type == "on_demand"]


def test_one_machine_listed_whole_and_as_overlapping_slices() -> None:
    # Machine 41523: its 4 GPUs whole, 2 of them, 1 of them, each an offer (ADR-020's census).
    offers = _of_machine(drive("vastai"), "41523")
    assert sorted((o.offer_id, o.gpu_count, tuple(o.gpu_ids), o.available_gpus) for o in offers) == [
        ("28941031", 1, (415231,), 1),
        ("28941032", 2, (415232, 415233), 2),
        ("28941033", 4, (415230, 415231, 415232, 415233), 4),
    ]  # offers stay offers: each slice is rentable as it is; the warehouse counts the 4 GPUs once
    assert {round(float(o.extra["dph_base"]) / o.gpu_count, 4) for o in offers} == {1.7333}
    # Vast's gpu_frac is the share of the machine, not of a card: the items rent whole cards.
    assert [
        (o.gpu_frac, o.extra["gpu_frac_of_machine"]) for o in sorted(offers, key=lambda o: o.gpu_count)
    ] == [
        (None, 0.25),
        (None, 0.5),
        (None, 1.0),
    ]


def test_a_whole_machine_beside_a_slice_of_it() -> None:
    whole, half = sorted(_of_machine(drive("vastai"), "30211"), key=lambda o: -o.gpu_count)
    assert (whole.offer_id, whole.gpu_count, half.offer_id, half.gpu_count) == ("27710455", 8, "27710456", 4)
    assert set(half.gpu_ids) < set(whole.gpu_ids)


def test_the_spot_offer_rents_the_same_gpus() -> None:
    twins = [o for o in drive("vastai").offers if o.offer_id == "28941032"]
    assert {(o.pricing_type, o.machine_id, tuple(o.gpu_ids)) for o in twins} == {
        ("on_demand", "41523", (415232, 415233)),
        ("spot", "41523", (415232, 415233)),
    }


def test_an_answer_without_the_slice_fields_leaves_them_unknown() -> None:
    (a6000,) = [
        o for o in drive("vastai").offers if o.offer_id == "29311877" and o.pricing_type == "on_demand"
    ]
    assert (a6000.machine_id, a6000.gpu_ids, a6000.gpu_frac) == ("40078", None, None)
    assert "gpu_frac_of_machine" not in a6000.extra


@pytest.mark.parametrize(
    ("value", "ids"),
    [
        ([82267], [82267]),  # a real record's (vastai search offers --raw)
        ([55783, 55784], [55783, 55784]),
        (None, None),
        ([], None),
        ("82267", None),
        ([55783, "55784"], None),
        ([1.5], None),
        ([True], None),
        ([-1], None),
    ],
)
def test_gpu_ids_are_vasts_whole_numbers_or_unknown(value: Any, ids: list[int] | None) -> None:
    assert parsing.gpu_ids(value) == ids
    outcome = drive("vastai", _with_offers(_first_offer(gpu_ids=value, machine_id=22990)))
    assert {(o.machine_id, str(o.gpu_ids)) for o in outcome.offers if o.offer_id == "28941031"} == {
        ("22990", str(ids))
    }


def test_a_bid_dearer_than_renting_on_demand_is_no_spot_offer() -> None:
    # The real case: offer 48370130, min_bid 19.2 against dph_base 15.47.
    offers = [o for o in drive("vastai").offers if o.offer_id == "48370130"]
    assert [(o.pricing_type, o.price_amount) for o in offers] == [("on_demand", 15.4711)]


@pytest.mark.parametrize(
    ("min_bid", "spot"),
    [
        (1.7332, 1.7343),  # just under dph_base: with the disk, just under dph_total
        (1.7333, None),  # the bid plus the disk is the on-demand price: no discount, no spot
        (1.9, None),  # dearer than on demand (48370130's case)
    ],
)
def test_the_spot_rule_compares_bid_and_on_demand_with_the_disk_on_both(
    min_bid: float, spot: float | None
) -> None:
    outcome = drive("vastai", _with_offers(_first_offer(min_bid=min_bid, dph_base=1.7333, dph_total=1.7344)))
    spots = [o.price_amount for o in outcome.offers if o.offer_id == "28941031" and o.pricing_type == "spot"]
    assert spots == ([] if spot is None else [spot])


def test_a_rate_limit_answer_says_rate_limited_with_the_platforms_words() -> None:
    # HTTP 429 in plain text, as Vast answers it (vast-ai/docs api-reference/rate-limits-and-errors.mdx).
    limited = with_exchange(
        snapshot_of("vastai"),
        0,
        status=429,
        headers={"Content-Type": "text/plain"},
        body="API requests too frequent",
    )
    outcome = drive("vastai", limited)
    assert (outcome.status, outcome.error) == (
        "failed",
        "rate limited: HTTP 429 from https://console.vast.ai/api/v0/bundles/: API requests too frequent",
    )

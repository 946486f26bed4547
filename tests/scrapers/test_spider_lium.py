"""Lium spider: an offer per GPU count a node can be rented at, priced per GPU-hour, its id the
node's own, its stock the node's free GPUs counted once."""

from __future__ import annotations

from typing import Any

from crawl_harness import drive, json_of, snapshot_of, with_exchange

from scrapers.spiders.lium import STAT_BELOW_MINIMUM, rentable_counts

H200_NODE = "f092246d-5704-4c9e-b57f-7c0710a06deb"  # gpuhunt's recorded feed: 8 H200, 5 free, minimum 1


def _with_nodes(edit: Any) -> Any:
    body = json_of(snapshot_of("lium").exchanges[0])
    edit(body["nodes"])
    return with_exchange(snapshot_of("lium"), 0, body=body)


def test_the_feed_is_asked_once_without_a_key() -> None:
    outcome = drive("lium")
    assert [(r.method, r.meta["source_url"]) for r in outcome.requests] == [
        ("GET", "https://lium.io/api/public/v1/nodes")
    ]
    assert not {"X-API-KEY", "Authorization"} & {key.decode() for key in outcome.requests[0].headers}


def test_a_partly_rented_node_is_offered_at_every_count_it_can_really_be_rented_at() -> None:
    """gpuhunt's recorded H200 node: 8 GPUs, 5 free, a minimum of 1: 1 to 5 GPUs at 3.99 each."""
    h200 = [o for o in drive("lium").offers if o.machine_id == H200_NODE]
    assert [(o.offer_id, o.gpu_count, o.price_amount, o.available_gpus) for o in h200] == [
        (f"{H200_NODE}/{n}x", n, 3.99, 5) for n in range(1, 6)
    ]
    assert {(o.gpu_model, o.price_per, o.pricing_type, o.region) for o in h200} == {
        ("H200 SXM 141GB", "gpu", "on_demand", "US")
    }
    assert {o.extra["price_per_node_hour"] for o in h200} == {31.92}


def test_a_node_rented_whole_is_one_offer_of_all_its_gpus() -> None:
    offers = {o.offer_id: o for o in drive("lium").offers}
    a100 = offers["6780e503-6861-4dca-bdec-ca9dcf37e8d0/8x"]  # recorded: minimum 8 of 8
    assert (a100.gpu_model, a100.gpu_count, a100.price_amount, a100.available_gpus) == (
        "A100 SXM 80GB",
        8,
        1.23,
        8,
    )
    assert not [
        o for o in offers if o.startswith("6780e503-6861-4dca-bdec-ca9dcf37e8d0/") and o != a100.offer_id
    ]
    b300 = offers["2d8f8c74-5e3a-4f9c-9c63-7f4a2eaf3c03/1x"]
    assert (b300.gpu_model, b300.price_amount, b300.price_currency) == (
        "B300 279GB",
        8.000300000000001,
        "USD",
    )


def test_a_node_with_fewer_free_gpus_than_its_minimum_is_seen_and_never_planned() -> None:
    outcome = drive("lium")
    below = [o for o in outcome.offers if o.offer_id.startswith("d834972f-03e5-44a7-872f-24f5d35ae70e/")]
    assert [(o.gpu_count, o.available_gpus, o.extra["node_free_gpus"]) for o in below] == [(4, 0, 3)]
    assert outcome.stats[STAT_BELOW_MINIMUM] == 1


def test_the_rentable_counts() -> None:
    assert rentable_counts(8, 5, 1) == ([1, 2, 3, 4, 5], 5)
    assert rentable_counts(8, 8, 8) == ([8], 8)
    assert rentable_counts(8, 3, 4) == ([4], 0)
    assert rentable_counts(8, 0, 1) == ([1], 0)
    assert rentable_counts(2, 9, 1) == ([1, 2], 2), "never more free than the node holds"
    assert rentable_counts(2, None, 1) == ([1, 2], None), "stock not said: unknown, not zero"


def test_offer_ids_come_from_the_node_id_and_not_from_feed_order() -> None:
    offers = drive("lium").offers
    reversed_offers = drive("lium", _with_nodes(lambda nodes: nodes.reverse())).offers
    assert sorted(o.offer_id for o in offers) == sorted(o.offer_id for o in reversed_offers)
    assert len({o.offer_id for o in offers}) == len(offers)
    twins = [(o.offer_id, o.price_amount) for o in offers if o.gpu_model == "RTX 4090 24GB"]
    assert twins == [
        ("61cd20b8-9c7e-4d30-90a7-bd8e6ce37007/1x", 0.28),
        ("72de31c9-ad8f-4e41-a1b8-ce9f7df48108/1x", 0.3),
    ], "two nodes of one shape are two ids"


def test_a_node_without_an_id_is_rejected_and_kept() -> None:
    def edit(nodes: list[dict[str, Any]]) -> None:
        del nodes[0]["id"]

    outcome = drive("lium", _with_nodes(edit))
    assert [r.reason for r in outcome.rejected] == ["record_incomplete"]
    assert len(outcome.offers) == len(drive("lium").offers) - 1


def test_secure_is_on_demand_spot_is_spot_and_another_tier_is_rejected() -> None:
    offers = drive("lium").offers
    assert {o.pricing_type for o in offers if o.extra["tier"] == "secure"} == {"on_demand"}
    assert [(o.offer_id, o.pricing_type) for o in offers if o.extra["tier"] == "spot"] == [
        ("45af0308-a13c-497f-93ea-ab06144eee29/1x", "spot"),
        ("a50164fc-d0b2-4174-94eb-f1c2a027b40b/2x", "spot"),
    ]

    def edit(nodes: list[dict[str, Any]]) -> None:
        nodes[0]["tier"] = "community"

    outcome = drive("lium", _with_nodes(edit))
    assert [(r.reason, r.raw["tier"]) for r in outcome.rejected] == [("unknown_tier", "community")]
    assert len(outcome.offers) == len(offers) - 1


def test_stock_not_said_is_unknown_and_vendor_words_are_read() -> None:
    def edit(nodes: list[dict[str, Any]]) -> None:
        del nodes[0]["available_gpu_count"]

    first = [
        o
        for o in drive("lium", _with_nodes(edit)).offers
        if o.machine_id == "ebdfdbe2-875a-4caa-8eea-1ab5c2a763e1"
    ]
    assert [(o.gpu_count, o.available_gpus) for o in first] == [(8, None)]  # unknown, not zero
    prefixed = [o for o in drive("lium").offers if o.gpu_name_raw == "NVIDIA GeForce RTX 5090"]
    assert [o.gpu_model for o in prefixed] == ["RTX 5090 32GB"]

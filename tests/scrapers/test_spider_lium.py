"""Lium spider: an offer per node of the public feed, its tier as pricing type, its free GPUs as stock."""

from __future__ import annotations

from typing import Any

from crawl_harness import drive, json_of, snapshot_of, with_exchange


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


def test_a_node_is_priced_whole_by_the_hour_in_usd_as_the_miner_set_it() -> None:
    offers = {o.offer_id: o for o in drive("lium").offers}
    b300 = offers["B300 SXM6 AC_1x_30c_251g/FI/secure"]
    assert (b300.gpu_model, b300.price_amount, b300.price_per, b300.price_currency) == (
        "B300 279GB",
        8.000300000000001,
        "instance",
        "USD",
    )
    h100 = offers["H100 80GB HBM3_8x_192c_1007g/RU/secure"]
    assert (h100.gpu_model, h100.gpu_count, h100.price_amount, h100.region) == (
        "H100 SXM 80GB",
        8,
        14.0,
        "RU",
    )


def test_secure_is_on_demand_spot_is_spot_and_another_tier_is_rejected() -> None:
    offers = drive("lium").offers
    assert {o.pricing_type for o in offers if o.extra["tier"] == "secure"} == {"on_demand"}
    assert [(o.offer_id, o.pricing_type) for o in offers if o.extra["tier"] == "spot"] == [
        ("RTX 5090_2x_64c_126g/RU/spot", "spot")
    ]

    def edit(nodes: list[dict[str, Any]]) -> None:
        nodes[0]["tier"] = "community"

    outcome = drive("lium", _with_nodes(edit))
    assert [(r.reason, r.raw["tier"]) for r in outcome.rejected] == [("unknown_tier", "community")]
    assert len(outcome.offers) == len(offers) - 1


def test_stock_is_the_nodes_free_gpus_and_a_half_rented_node_is_never_whole() -> None:
    offers = {o.offer_id: o for o in drive("lium").offers}
    h200 = offers["H200_8x_224c_2015g/US/secure"]
    assert (h200.gpu_count, h200.available_gpus) == (8, 4)

    def edit(nodes: list[dict[str, Any]]) -> None:
        del nodes[0]["available_gpu_count"]

    assert drive("lium", _with_nodes(edit)).offers[0].available_gpus is None  # unknown, not zero


def test_identical_nodes_are_numbered_in_feed_order_and_vendor_words_are_read() -> None:
    offers = drive("lium").offers
    assert [(o.offer_id, o.price_amount) for o in offers if o.gpu_model == "RTX 4090 24GB"] == [
        ("RTX 4090_1x_24c_63g/UA/secure", 0.28),
        ("RTX 4090_1x_24c_63g/UA/secure#2", 0.3),
    ]
    prefixed = [o for o in offers if o.gpu_name_raw == "NVIDIA GeForce RTX 5090"]
    assert [o.gpu_model for o in prefixed] == ["RTX 5090 32GB"]
    assert len({o.offer_id for o in offers}) == len(offers)

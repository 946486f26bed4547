"""Linode spider: the GPU model out of the plan label, region prices over the GPU class's base price of 0,
hourly and monthly offers, and pages."""

from __future__ import annotations

from typing import Any

import pytest
from crawl_harness import drive, json_of, snapshot_of, with_exchange

from scrapers.replay import Exchange, Snapshot
from scrapers.spiders.linode import gpu_in_label


def _with_types(edit: Any, **page: Any) -> Snapshot:
    body = json_of(snapshot_of("linode").exchanges[0])
    edit({row["id"]: row for row in body["data"]})
    body.update(page)
    return with_exchange(snapshot_of("linode"), 0, body=body)


@pytest.mark.parametrize(
    ("label", "card"),
    [
        ("Dedicated 32GB + RTX6000 GPU x1", "RTX6000"),  # toolshedlabs' examples
        ("RTX4000 Ada x2 Small", "RTX4000 Ada"),
        ("Dedicated 64GB + RTX6000 GPU x2", "RTX6000"),
        ("RTX PRO 6000 Blackwell x1 Medium", "RTX PRO 6000 Blackwell"),
        ("H100 SXM", "H100 SXM"),  # no count: the label as it is
    ],
)
def test_the_card_is_what_follows_the_plus_up_to_its_count(label: str, card: str) -> None:
    assert gpu_in_label(label) == card


def test_gpu_plans_are_priced_per_region_by_the_hour_and_by_the_month() -> None:
    offers = drive("linode").offers
    ada = [o for o in offers if o.offer_id.endswith("/g2-gpu-rtx4000a1-s")]
    assert sorted((o.region, o.billing_period, o.pricing_type, o.price_amount) for o in ada) == [
        ("de-fra-2", "hour", "on_demand", 0.52),
        ("de-fra-2", "month", "monthly_plan", 350.0),
        ("jp-osa", "hour", "on_demand", 0.52),
        ("jp-osa", "month", "monthly_plan", 350.0),
        ("us-ord", "hour", "on_demand", 0.52),
        ("us-ord", "month", "monthly_plan", 350.0),
    ]
    assert {(o.gpu_model, o.gpu_name_raw, o.min_term_periods) for o in ada} == {
        ("RTX 4000 Ada 20GB", "RTX4000 Ada", 1)
    }
    # The Quadro RTX 6000 (Turing) is no RTX 6000 Ada: unknown, kept.
    assert {o.gpu_model for o in offers if o.gpu_name_raw == "RTX6000"} == {None}


def test_the_gpu_class_base_price_of_0_is_no_offer_but_a_plan_priced_nowhere_is_kept_as_refused() -> None:
    outcome = drive("linode")
    assert all(o.region is not None for o in outcome.offers)
    refused = [(r.reason, r.raw["offer_id"], r.raw["billing_period"]) for r in outcome.rejected]
    assert refused == [
        ("price_not_positive", "g2-gpu-rtx4000a1-m", "hour"),
        ("price_not_positive", "g2-gpu-rtx4000a1-m", "month"),
    ]


def test_a_base_price_is_the_offer_of_every_other_region() -> None:
    def edit(types: dict[str, Any]) -> None:
        types["g1-gpu-rtx6000-2"]["price"] = {"hourly": 3.0, "monthly": 2000.0}
        types["g1-gpu-rtx6000-2"]["region_prices"] = [{"id": "br-gru", "hourly": 3.6, "monthly": 2400.0}]

    offers = [o for o in drive("linode", _with_types(edit)).offers if o.offer_id.endswith("g1-gpu-rtx6000-2")]
    assert sorted((o.offer_id, o.billing_period, o.price_amount) for o in offers) == [
        ("br-gru/g1-gpu-rtx6000-2", "hour", 3.6),
        ("br-gru/g1-gpu-rtx6000-2", "month", 2400.0),
        ("g1-gpu-rtx6000-2", "hour", 3.0),
        ("g1-gpu-rtx6000-2", "month", 2000.0),
    ]


def test_cpu_plans_and_the_netint_accelerators_are_no_gpu_offers() -> None:
    offer_ids = {o.offer_id.split("/")[-1] for o in drive("linode").offers}
    assert offer_ids == {"g1-gpu-rtx6000-1", "g1-gpu-rtx6000-2", "g2-gpu-rtx4000a1-s"}


def test_a_catalog_of_two_pages_is_read_whole() -> None:
    snapshot = _with_types(lambda types: None, pages=2)
    first = snapshot.exchanges[0]
    page_2 = Exchange(
        "GET", f"{first.url}?page=2", "", 200, first.headers, b'{"data": [], "page": 2, "pages": 2}'
    )
    outcome = drive("linode", Snapshot(snapshot.folder, snapshot.meta, [first, page_2]))
    assert [r.meta["source_url"] for r in outcome.requests] == [
        "https://api.linode.com/v4/linode/types",
        "https://api.linode.com/v4/linode/types?page=2",
    ]
    assert outcome.status == "partial"  # page 2 answered no types: a failure of that page
    assert "no plan types" in outcome.error

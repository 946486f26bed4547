"""Azure spider: SkyPilot's request per region and price type, the NextPageLink walk, the meters
kept, and the unit trap of reservations (a whole prepaid term under "1 Hour")."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlsplit

from crawl_harness import drive, json_of, snapshot_of, with_exchange

from scrapers.spiders.azure import REGIONS, pricing_url, vm_gpus

EASTUS2 = "eastus2"


def _index(region: str, price_type: str) -> int:
    url = pricing_url(region, price_type)
    return next(i for i, e in enumerate(snapshot_of("azure").exchanges) if e.url == url)


def test_the_request_is_skypilots_with_the_price_type_a_parameter() -> None:
    # skypilot-org/skypilot fetch_azure.py get_pricing_url('eastus2'), byte for byte.
    skypilot = (
        "https://prices.azure.com/api/retail/prices?$filter=serviceName%20eq%20%27Virtual%20Machines%27"
        "%20and%20priceType%20eq%20%27Consumption%27%20and%20armRegionName%20eq%20%27eastus2%27"
    )
    assert pricing_url(EASTUS2, "Consumption") == skypilot
    query = parse_qs(urlsplit(pricing_url(EASTUS2, "Reservation")).query)
    assert query == {
        "$filter": [
            "serviceName eq 'Virtual Machines' and priceType eq 'Reservation' and armRegionName eq 'eastus2'"
        ]
    }


def test_every_region_is_walked_for_both_price_types_and_the_next_link_followed() -> None:
    outcome = drive("azure")
    asked = [r.meta["source_url"] for r in outcome.requests]
    first = [pricing_url(region, kind) for region in REGIONS for kind in ("Consumption", "Reservation")]
    assert asked[: len(first)] == first
    (page_two,) = asked[len(first) :]
    assert page_two.startswith("https://prices.azure.com:443/") and page_two.endswith("&$skip=1000")
    h200 = next(o for o in outcome.offers if o.offer_id == "Standard_ND96isr_H200_v5/eastus2")
    assert h200.source_url == page_two, "an offer cites the page that carried its meter"


def test_a_full_page_without_a_next_link_is_a_partial_result() -> None:
    index = _index("westus", "Consumption")
    body = json_of(snapshot_of("azure").exchanges[index])
    body["Items"] = body["Items"] * 334  # 1002 meters, NextPageLink null
    outcome = drive("azure", with_exchange(snapshot_of("azure"), index, body=body))
    assert outcome.status == "partial"
    assert "a full page of 1002 meters without a NextPageLink" in outcome.error


def test_reservations_are_yearly_prices_from_the_whole_prepaid_term() -> None:
    reserved = {o.offer_id: o for o in drive("azure").offers if o.pricing_type == "reserved"}
    one, three = (
        reserved["Standard_ND96isr_H100_v5/eastus2/reservation-1y"],
        reserved["Standard_ND96isr_H100_v5/eastus2/reservation-3y"],
    )
    # The 2026-10-07 recording: 551221 for 1 Year, 1134310 for 3 Years, both under "1 Hour".
    assert (one.price_amount, one.billing_period, one.min_term_periods) == (551221.0, "year", 1)
    assert (three.price_amount, three.billing_period, three.min_term_periods) == (378103.333333, "year", 3)
    assert three.extra["term_price"] == 1134310.0
    assert not any(o.endswith("reservation-5y") for o in reserved), "the 5-year term is not taken"
    assert {o.price_per for o in reserved.values()} == {"instance"}


def _meters_of(offer_id: str) -> set[tuple[str, str]]:
    return {(o.pricing_type, o.extra["productName"]) for o in drive("azure").offers if o.offer_id == offer_id}


def test_linux_on_demand_and_spot_only_no_windows_low_priority_or_dedicated_host() -> None:
    assert _meters_of("Standard_ND96isr_H100_v5/eastus2") == {
        ("on_demand", "Virtual Machines NDsr H100 v5 Series"),
        ("spot", "Virtual Machines NDsr H100 v5 Series"),
    }
    assert not any("Dedicated" in o.extra["productName"] for o in drive("azure").offers)


def test_a_spot_meter_is_passed_on_even_at_the_on_demand_price() -> None:
    """The spot meter is Azure's own spot price on its own row (H200 in eastus2: 84.8 both)."""
    prices = {
        o.pricing_type: o.price_amount
        for o in drive("azure").offers
        if o.offer_id.startswith("Standard_ND96isr_H200_v5/eastus2") and o.billing_period == "hour"
    }
    assert prices == {"on_demand": 84.8, "spot": 84.8}


def test_gpus_come_from_the_vm_size_and_a_slice_is_marked_as_one() -> None:
    assert vm_gpus("Standard_ND96isr_H100_v5") == ("H100 SXM", 80, 8)
    assert vm_gpus("Standard_NC80adis_H100_v5") == ("H100 NVL", 94, 2)
    assert vm_gpus("Standard_ND128isr_NDR_GB200_v6") == ("GB200", 186, 4)
    assert vm_gpus("Standard_D2s_v5") is None
    slices = {o.offer_id: (o.gpu_model, o.gpu_count, o.gpu_frac) for o in drive("azure").offers if o.gpu_frac}
    assert slices == {
        "Standard_NV12ads_A10_v5/eastus2": ("A10 24GB", 1, 0.333),
        "Standard_NC8ads_A10_v4/westeurope": ("A10 24GB", 1, 0.5),
    }


def test_a_region_answering_no_meters_fails_that_walk_and_keeps_the_rest() -> None:
    index = _index("westus3", "Consumption")
    body: dict[str, Any] = {**json_of(snapshot_of("azure").exchanges[index]), "Items": [], "Count": 0}
    outcome = drive("azure", with_exchange(snapshot_of("azure"), index, body=body))
    assert outcome.status == "partial"
    assert outcome.error.startswith("the platform answered with no price meters")
    assert not any(o.region == "westus3" for o in outcome.offers) and outcome.offers

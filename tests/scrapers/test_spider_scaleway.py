"""Scaleway spider: nine zones, each its availability then its types, both paged; EUR without a label;
"shortage" as sold out; a failed zone or stock answer costs only that zone or its stock."""

from __future__ import annotations

from typing import Any

from crawl_harness import drive, json_of, snapshot_of, with_exchange

from scrapers.replay import Snapshot

API = "https://api.scaleway.com/instance/v1/zones"


def _exchange(zone: str, kind: str, page: int = 1) -> int:
    path = "products/servers/availability" if kind == "availability" else "products/servers"
    url = f"{API}/{zone}/{path}?per_page=100&page={page}"
    return next(i for i, e in enumerate(snapshot_of("scaleway").exchanges) if e.url == url)


def _with_body(zone: str, kind: str, edit: Any) -> Snapshot:
    index = _exchange(zone, kind)
    body = json_of(snapshot_of("scaleway").exchanges[index])
    edit(body["servers"])
    return with_exchange(snapshot_of("scaleway"), index, body=body)


def test_the_first_zone_is_asked_alone_then_every_zone_and_full_pages_ask_the_next() -> None:
    outcome = drive("scaleway")
    asked = [r.meta["source_url"].removeprefix(API + "/") for r in outcome.requests]
    assert asked[0] == "fr-par-1/products/servers/availability?per_page=100&page=1"
    assert len(asked) == 20 == len(set(asked))  # 9 zones x (availability + types), Paris 2's second pages
    assert {a.split("/")[0] for a in asked} == {
        f"{city}-{n}" for city in ("fr-par", "nl-ams", "pl-waw") for n in (1, 2, 3)
    }
    assert "fr-par-2/products/servers?per_page=100&page=2" in asked
    assert "fr-par-2/products/servers/availability?per_page=100&page=2" in asked
    assert "fr-par-1/products/servers?per_page=100&page=2" not in asked  # a short page is the last


def test_prices_are_eur_per_instance_hour_and_the_derived_monthly_price_is_no_offer() -> None:
    offers = drive("scaleway").offers
    assert {(o.price_currency, o.price_per, o.billing_period, o.pricing_type) for o in offers} == {
        ("EUR", "instance", "hour", "on_demand")
    }
    h100 = next(o for o in offers if o.offer_id == "fr-par-2/H100-SXM-8-80G")
    assert (h100.gpu_model, h100.gpu_count, h100.price_amount) == ("H100 SXM 80GB", 8, 25.3308)
    assert h100.extra["monthly_price"] == 18491.484  # 25.3308 x 730, as on every GPU row


def test_shortage_is_sold_out_and_available_or_scarce_say_nothing_of_how_many() -> None:
    offers = {o.offer_id: o for o in drive("scaleway").offers}
    b300 = offers["fr-par-2/B300-SXM-8-288G"]
    assert (b300.available_gpus, b300.extra["availability"]) == (0, "shortage")
    assert offers["fr-par-2/H100-SXM-8-80G"].available_gpus is None  # available
    assert offers["fr-par-1/L4-2-24G"].available_gpus is None  # scarce
    assert offers["fr-par-2/RENDER-S"].extra["availability"] == "available"  # from the second page


def test_a_type_the_availability_does_not_name_has_unknown_stock() -> None:
    snapshot = _with_body("pl-waw-2", "availability", lambda states: states.pop("L4-2-24G"))
    offer = next(o for o in drive("scaleway", snapshot).offers if o.offer_id == "pl-waw-2/L4-2-24G")
    assert (offer.available_gpus, offer.extra["availability"]) == (None, None)


def test_a_zone_whose_availability_fails_is_priced_with_unknown_stock() -> None:
    snapshot = with_exchange(snapshot_of("scaleway"), _exchange("fr-par-2", "availability"), status=503)
    outcome = drive("scaleway", snapshot)
    assert outcome.status == "partial"
    assert outcome.error.startswith(f"HTTP 503 from {API}/fr-par-2/products/servers/availability")
    par2 = [o for o in outcome.offers if o.region == "fr-par-2"]
    assert len(par2) == 17 and {o.available_gpus for o in par2} == {None}
    assert len(outcome.offers) == len(drive("scaleway").offers)


def test_a_zone_whose_types_fail_is_missing_and_the_others_are_kept() -> None:
    snapshot = with_exchange(snapshot_of("scaleway"), _exchange("pl-waw-2", "servers"), status=500)
    outcome = drive("scaleway", snapshot)
    assert outcome.status == "partial"
    assert {o.region for o in outcome.offers} == {"fr-par-1", "fr-par-2"}


def test_when_the_first_zone_does_not_answer_nothing_more_is_asked() -> None:
    snapshot = with_exchange(snapshot_of("scaleway"), _exchange("fr-par-1", "availability"), status=503)
    outcome = drive("scaleway", snapshot)
    assert (outcome.status, len(outcome.requests)) == ("failed", 1)


def test_a_share_of_a_card_is_offered_as_that_share_and_a_mig_slice_is_rejected() -> None:
    def edit(types: dict[str, Any]) -> None:
        types["L4-1-24G"]["mig_profile"] = "1g.6gb"
        types["L4-2-24G"]["gpu"] = 0.5
        types["RENDER-S"]["gpu"] = 1.5

    outcome = drive("scaleway", _with_body("fr-par-1", "servers", edit))
    assert sorted((r.reason, r.raw["commercial_type"]) for r in outcome.rejected) == [
        ("fractional_gpu", "L4-1-24G"),
        ("fractional_gpu", "RENDER-S"),
    ]
    (half,) = [o for o in outcome.offers if o.region == "fr-par-1"]
    assert (half.offer_id, half.gpu_count, half.gpu_frac, half.price_amount) == (
        "fr-par-1/L4-2-24G",
        1,
        0.5,
        1.575,
    )

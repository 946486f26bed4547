"""Vultr spider: hourly and monthly prices per location, a slice of a card marked as one, bare
metal rented the ways it can be, and cursor pages."""

from __future__ import annotations

import json

from crawl_harness import drive, json_of, snapshot_of, with_exchange

from scrapers.replay import Exchange, Snapshot
from scrapers.spiders.vultr import share_of


def _offers(plan: str) -> set[tuple[str | None, str, str, float | None]]:
    return {
        (o.region, o.pricing_type, o.billing_period, o.price_amount)
        for o in drive("vultr").offers
        if o.offer_id.startswith(f"{plan}/")
    }


def test_hourly_and_monthly_prices_per_listed_location() -> None:
    assert _offers("vcg-l40s-16c-180g-48vram") == {
        ("ewr", "on_demand", "hour", 1.68),
        ("ewr", "monthly_plan", "month", 1226.4),
        ("lax", "on_demand", "hour", 1.68),
        ("lax", "monthly_plan", "month", 1226.4),
    }
    assert _offers("vbm-112c-2048gb-8-a100-gpu") == set(), "no location: offered nowhere"


def test_a_slice_of_a_card_is_marked_and_never_counted_as_a_whole_one() -> None:
    slices = {
        o.offer_id: (o.gpu_count, o.gpu_frac) for o in drive("vultr").offers if o.billing_period == "hour"
    }
    assert slices["vcg-a100-1c-6g-4vram/ewr"] == (1, 0.05), "4 GB of an 80 GB A100 (gpuhunt's card memory)"
    assert slices["vcg-a100-6c-60g-40vram/ewr"] == (1, 0.5)
    assert slices["vcg-a100-12c-120g-80vram/ewr"] == (1, None), "a whole card"
    assert slices["vcg-a16-2c-8g-2vram/fra"] == (1, 0.125), "the plan's own gpu_count '1/8'"
    assert (
        share_of("1/8") == 0.125 and share_of("2") == 2 and share_of("1/0") is None and share_of(None) is None
    )


def test_bare_metal_is_rented_the_ways_its_plan_opens() -> None:
    # deploy_ondemand false, deploy_preemptible true (the real 2026-04-01 rows): spot only.
    assert _offers("vbm-112c-2048gb-8-h100-gpu") == {("sea", "spot", "hour", 18.4)}
    gh200 = [o for o in drive("vultr").offers if o.offer_id.startswith("vbm-72c-480gb-gh200-gpu/")]
    # Preemptible at the on-demand list price, and on demand not open: still the one way to rent it.
    assert {(o.region, o.pricing_type, o.price_amount) for o in gh200} == {
        ("ewr", "spot", 1.99),
        ("atl", "spot", 1.99),
        ("man", "spot", 1.99),
    }
    assert {(o.gpu_model, o.gpu_count) for o in gh200} == {("GH200 96GB", 1)}, "480 GB is its Grace memory"


def test_metal_gpus_from_the_plan_id_and_the_machines_vram() -> None:
    metal = {
        o.offer_id: (o.gpu_model, o.gpu_count) for o in drive("vultr").offers if o.offer_id.startswith("vbm-")
    }
    assert metal["vbm-256c-2048gb-8-mi300x-gpu/ord"] == ("MI300X 192GB", 8)
    assert metal["vbm-256c-3072gb-8-mi325x-gpu/atl"] == ("MI325X 256GB", 8)


def test_a_next_cursor_is_asked_for_the_next_page() -> None:
    snapshot = snapshot_of("vultr")
    first = json_of(snapshot.exchanges[0])
    rest = {
        **first,
        "plans": first["plans"][3:],
        "meta": {"total": 7, "links": {"next": "bmV4dA==", "prev": ""}},
    }
    page = {**first, "plans": first["plans"][:3]}
    paged = with_exchange(snapshot, 0, body=rest)
    url = "https://api.vultr.com/v2/plans?type=all&per_page=500&cursor=bmV4dA%3D%3D"
    second = Exchange("GET", url, "", 200, snapshot.exchanges[0].headers, json.dumps(page).encode())
    outcome = drive("vultr", Snapshot(snapshot.folder, snapshot.meta, [*paged.exchanges, second]))
    assert url in [r.meta["source_url"] for r in outcome.requests]
    assert sorted(o.offer_id for o in outcome.offers) == sorted(o.offer_id for o in drive("vultr").offers)


def test_a_dedicated_gpu_plan_is_its_card_from_the_plan_table() -> None:
    """gpuhunt's recorded `vdm` plan: no gpu_type, gpu_count or gpu_vram_gb; the id says an A40."""
    assert _offers("vcg-a40-24c-120g-48vram") == {
        ("blr", "on_demand", "hour", 1.712),
        ("blr", "monthly_plan", "month", 1250.0),
    }
    a40 = [o for o in drive("vultr").offers if o.offer_id == "vcg-a40-24c-120g-48vram/blr"]
    assert {(o.gpu_model, o.gpu_count, o.gpu_memory_gb, o.gpu_frac, o.price_per) for o in a40} == {
        ("A40 48GB", 1, 48.0, None, "instance")
    }
    assert _offers("vcg-mi325x-252c-2872g-1536vram") == set(), "no location: offered nowhere"


def test_a_dedicated_gpu_plan_not_in_the_table_is_an_unknown_gpu_never_dropped() -> None:
    outcome = drive("vultr")
    unknown = [o for o in outcome.offers if o.offer_id == "vcg-a40-48c-240g-96vram/blr"]
    assert {(o.gpu_model, o.gpu_name_raw, o.gpu_count, o.price_amount) for o in unknown} == {
        (None, "vcg-a40-48c-240g-96vram", 1, 1.712),
        (None, "vcg-a40-48c-240g-96vram", 1, 1250.0),
    }
    assert all("vdm_plan_unknown" in o.extra for o in unknown)
    assert outcome.rejected == []

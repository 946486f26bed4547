"""CloudRift spider: gpuhunt's request, cents, one offer per variant and datacenter, free nodes as stock."""

from __future__ import annotations

import json
from typing import Any

from crawl_harness import drive, json_of, snapshot_of, with_exchange


def _with_types(edit: Any) -> Any:
    body = json_of(snapshot_of("cloudrift").exchanges[0])
    edit(body["data"]["instance_types"])
    return with_exchange(snapshot_of("cloudrift"), 0, body=body)


def test_the_request_is_gpuhunts_keyless_post() -> None:
    (request,) = drive("cloudrift").requests
    assert (request.method, request.meta["source_url"]) == (
        "POST",
        "https://api.cloudrift.ai/api/v1/instance-types/list",
    )
    assert json.loads(request.body) == {
        "version": "2025-03-21",
        "data": {"selector": {"ByServiceAndLocation": {"services": ["vm"]}}},
    }
    assert b"X-API-Key" not in request.headers


def test_cents_per_instance_hour_one_offer_per_datacenter_of_a_variant() -> None:
    offers = {o.offer_id: o for o in drive("cloudrift").offers}
    assert {k: (o.price_amount, o.gpu_count) for k, o in offers.items() if "rtx59" in k} == {
        "usny01_a01/rtx59-8c-ny.1": (0.65, 1),  # cost_per_hour 65
        "eu-central-it-gv-1/rtx59-8c-ny.1": (0.65, 1),
        "usny01_a01/rtx59-16c-ny.2": (1.3, 2),
    }
    pro = offers["ustx1a_a01/rtxpro6000-16c-tx.1"]
    assert (pro.gpu_model, pro.price_currency, pro.price_per, pro.region) == (
        "RTX PRO 6000 96GB",
        "USD",
        "instance",
        "ustx1a_a01",
    )


def test_free_nodes_times_the_variants_gpus_is_the_stock_and_an_unnamed_datacenter_is_unknown() -> None:
    def edit(types: list[dict[str, Any]]) -> None:
        rtx59 = types[1]["variants"]
        rtx59[1]["available_nodes_per_dc"] = {"usny01_a01": 3}  # the 2-GPU variant
        del rtx59[0]["available_nodes_per_dc"]["eu-central-it-gv-1"]

    stock = {o.offer_id: o.available_gpus for o in drive("cloudrift", _with_types(edit)).offers}
    assert stock["usny01_a01/rtx59-16c-ny.2"] == 6
    assert stock["eu-central-it-gv-1/rtx59-8c-ny.1"] is None
    assert stock["usny01_a01/rtx59-8c-ny.1"] == 0
    assert stock["usny01_a01/v100-6c-ny.1"] == 3


def test_a_variant_in_no_datacenter_and_a_cpu_variant_are_no_offers() -> None:
    outcome = drive("cloudrift")
    ids = {o.offer_id.split("/")[1] for o in outcome.offers}
    assert "rtxpro6000-128c-tx.8" not in ids and "cpu-8c-tx" not in ids
    assert outcome.stats["cloudrift/variants_in_no_datacenter"] == 1
    assert outcome.rejected == []


def test_a_bare_string_answer_is_the_platforms_error() -> None:
    snapshot = with_exchange(snapshot_of("cloudrift"), 0, body=json.dumps("Invalid API version"))
    outcome = drive("cloudrift", snapshot)
    assert outcome.status == "failed"
    assert outcome.error == (
        "the platform answered with an error: Invalid API version"
        " (from https://api.cloudrift.ai/api/v1/instance-types/list)"
    )

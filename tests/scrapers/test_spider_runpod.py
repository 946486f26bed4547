"""RunPod spider: the pod-size fan-out, stockStatus, placeholders, spot, the REST catalog with a key,
and the real gpuTypes sample."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from crawl_harness import drive, json_of, snapshot_of, with_exchange

from scrapers.spiders.runpod import placeholder_price

REAL_SAMPLE = Path(__file__).parents[3] / "shared/samples/runpod/runpod_gpuTypes_elements_2026-04-01.json"


def _index(cloud: str, gpu_count: int) -> int:
    for index, exchange in enumerate(snapshot_of("runpod").exchanges):
        if not exchange.body_key:
            continue
        variables = json.loads(exchange.body_key).get("variables", {}).get("lowestPriceInput", {})
        if variables == {"gpuCount": gpu_count, "secureCloud": cloud == "secure"}:
            return index
    raise AssertionError(f"no {cloud} {gpu_count}x exchange in the runpod snapshot")


def _catalog_index(cloud: str, gpu_count: int) -> int:
    for index, exchange in enumerate(snapshot_of("runpod").exchanges):
        if f"count={gpu_count}&cloud={cloud.upper()}" in exchange.url:
            return index
    raise AssertionError(f"no REST {cloud} {gpu_count}x exchange in the runpod snapshot")


@pytest.fixture
def with_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RUNPOD_API_KEY", "test-key")


def _offers(outcome: Any, **match: Any) -> list[Any]:
    return [o for o in outcome.offers if all(getattr(o, k) == v for k, v in match.items())]


def test_one_request_per_cloud_and_pod_size_after_the_type_list() -> None:
    outcome = drive("runpod")
    sizes = [
        (json.loads(r.body)["variables"]["lowestPriceInput"]["gpuCount"], r.meta["cloud"])
        for r in outcome.requests[1:]
        if "cloud" in r.meta  # the Instant Cluster types are one request of their own
    ]
    # Pod sizes plans use, up to each cloud's largest pod: secure reaches 32 (MIG slices).
    assert sorted(sizes) == sorted(
        [(n, "secure") for n in (1, 2, 4, 8, 16, 32)] + [(n, "community") for n in (1, 2, 4, 8)]
    )


def test_a_largest_pod_of_32_is_a_healthy_crawl() -> None:
    outcome = drive("runpod")
    assert (outcome.status, outcome.error) == ("ok", None)
    slices = _offers(outcome, gpu_name_raw="NVIDIA RTX PRO 6000 Blackwell Server Edition MIG 1g.24gb")
    assert {o.gpu_count for o in slices} == {1, 2, 4, 8, 16, 32}
    assert {(o.gpu_model, o.gpu_memory_gb) for o in slices} == {(None, 24.0)}  # a slice is not the card


def test_a_larger_maximum_than_the_largest_size_asked_is_partial() -> None:
    body = json_of(snapshot_of("runpod").exchanges[0])
    body["data"]["gpuTypes"][0]["maxGpuCountSecureCloud"] = 128
    outcome = drive("runpod", with_exchange(snapshot_of("runpod"), 0, body=body))
    assert outcome.status == "partial"
    assert "RunPod says secure pods hold up to 128 GPUs; asked up to 64" in outcome.error


def test_prices_are_per_gpu_and_a_mirrored_spot_field_makes_no_spot_offer() -> None:
    h100 = _offers(drive("runpod"), offer_id="NVIDIA H100 80GB HBM3/secure/2x")
    # Spot pods are gone (2026-05-06): minimumBidPrice is null, secureSpotPrice repeats the price.
    assert {(o.pricing_type, o.price_amount, o.price_per, o.gpu_count) for o in h100} == {
        ("on_demand", 2.99, "gpu", 2)
    }
    assert {o.gpu_model for o in h100} == {"H100 SXM 80GB"}
    assert {o.pricing_type for o in drive("runpod").offers} == {"on_demand"}


@pytest.mark.parametrize(("bid", "spot"), [(1.5, {1.5}), (2.99, set()), (3.5, set())])
def test_a_spot_offer_only_from_a_bid_below_the_on_demand_price(bid: float, spot: set[float]) -> None:
    index = _index("secure", 2)
    body = json_of(snapshot_of("runpod").exchanges[index])
    h100 = next(row for row in body["data"]["gpuTypes"] if row["id"] == "NVIDIA H100 80GB HBM3")
    h100["lowestPrice"]["minimumBidPrice"] = bid
    outcome = drive("runpod", with_exchange(snapshot_of("runpod"), index, body=body))
    offers = _offers(outcome, offer_id="NVIDIA H100 80GB HBM3/secure/2x", pricing_type="spot")
    assert {o.price_amount for o in offers} == spot


@pytest.mark.parametrize(
    ("status", "available"), [("High", 2), ("Medium", 2), ("Low", 2), (None, 0), ("Unheard-of", None)]
)
def test_stock_status_maps_to_available_gpus(status: str | None, available: int | None) -> None:
    index = _index("secure", 2)
    body = json_of(snapshot_of("runpod").exchanges[index])
    for row in body["data"]["gpuTypes"]:
        if row["lowestPrice"]:
            row["lowestPrice"]["stockStatus"] = status
    outcome = drive("runpod", with_exchange(snapshot_of("runpod"), index, body=body))
    assert {o.available_gpus for o in _offers(outcome, offer_id="NVIDIA H100 80GB HBM3/secure/2x")} == {
        available
    }


def test_a_missing_stock_status_is_unknown_not_zero() -> None:
    index = _index("community", 1)
    body = json_of(snapshot_of("runpod").exchanges[index])
    for row in body["data"]["gpuTypes"]:
        if row["lowestPrice"]:
            del row["lowestPrice"]["stockStatus"]
    outcome = drive("runpod", with_exchange(snapshot_of("runpod"), index, body=body))
    assert {o.available_gpus for o in _offers(outcome, gpu_count=1) if o.extra["cloud"] == "community"} == {
        None
    }


def test_the_placeholder_price_is_rejected_not_offered() -> None:
    outcome = drive("runpod")
    assert not _offers(outcome, gpu_name_raw="AMD Instinct MI300X OAM")
    # MI300X: 0.5 against its own list price of 2.49. H200 NVL community: 0.5 in its list price too,
    # against 3.79 in secure cloud. Both RunPod's "cannot price it".
    single = [r for r in outcome.rejected if r.raw["gpu_count"] == 1]
    assert sorted((r.raw["id"], r.raw["cloud"], r.reason) for r in single) == [
        ("AMD Instinct MI300X OAM", "secure", "placeholder_price"),
        ("NVIDIA H200 NVL", "community", "placeholder_price"),
    ]


def test_a_placeholder_inside_the_list_prices_leaves_the_other_clouds_offers() -> None:
    nvl = _offers(drive("runpod"), gpu_name_raw="NVIDIA H200 NVL")
    assert {(o.extra["cloud"], o.gpu_count, o.price_amount) for o in nvl} == {
        ("secure", n, 3.79) for n in (1, 2, 4, 8)
    }


def test_the_rest_catalog_rejects_the_same_placeholder(with_key: None) -> None:
    outcome = drive("runpod")
    assert {(o.extra["cloud"], o.price_amount) for o in _offers(outcome, gpu_name_raw="NVIDIA H200 NVL")} == {
        ("secure", 3.79)
    }
    assert sorted((r.raw["id"], r.raw["cloud"], r.raw["gpu_count"]) for r in outcome.rejected) == [
        ("NVIDIA H200 NVL", "community", n) for n in (1, 2, 4, 8)
    ]


def test_a_real_price_of_half_a_dollar_is_kept() -> None:
    # The RTX 3090 in secure cloud really cost 0.50 USD/h in 2026-08: its list price says so.
    rtx3090 = _offers(drive("runpod"), offer_id="NVIDIA GeForce RTX 3090/secure/1x")
    assert [(o.price_amount, o.extra["list_price_per_gpu"]) for o in rtx3090] == [(0.5, 0.5)]


@pytest.mark.parametrize(
    ("on_demand", "list_price", "bid", "others", "placeholder"),
    [
        (0.5, 2.49, None, {}, True),  # the list price says otherwise
        (0.5, 0.5, None, {}, False),  # a real 0.50 (RTX 3090, secure, 2026-08)
        (0.5, 0.5, None, {"other_cloud": 0.22}, False),  # ... with community at 0.22
        (0.5, 0.5, None, {"other_cloud": 3.79}, True),  # H200 NVL community, secure 3.79
        (0.5, 0.5, None, {"other_cloud": 1.5}, False),  # 3x apart: two real prices can be
        (0.5, None, None, {"spot": 1.49}, True),  # dearer spot than on demand (the sample's MI300X)
        (0.5, 0.5, None, {"spot": 0.5}, False),  # spot mirroring the list price (since 2026-05-06)
        (0.5, None, None, {}, True),  # no list price and no bid (the 2026-04-01 sample's MI300X)
        (0.5, None, 0.3, {}, False),
        (0.69, None, None, {"other_cloud": 9.0}, False),  # only 0.5 is RunPod's stand-in
    ],
)
def test_the_placeholder_rule(
    on_demand: float, list_price: float | None, bid: float | None, others: dict[str, float], placeholder: bool
) -> None:
    assert placeholder_price(on_demand, list_price, bid, **others) is placeholder


def test_graphql_errors_with_http_200_fail_the_crawl() -> None:
    body = {"errors": [{"message": 'Cannot query field "gpuTypes" on type "Query".'}], "data": None}
    outcome = drive("runpod", with_exchange(snapshot_of("runpod"), 0, body=body))
    assert outcome.status == "failed"
    assert 'the platform answered with an error: Cannot query field "gpuTypes"' in outcome.error


def test_an_error_on_one_count_makes_the_crawl_partial() -> None:
    body = {"errors": [{"message": "Something went wrong"}]}
    outcome = drive("runpod", with_exchange(snapshot_of("runpod"), _index("community", 2), body=body))
    assert outcome.status == "partial"
    assert "Something went wrong" in outcome.error
    assert outcome.offers


def test_an_empty_type_list_fails_the_crawl() -> None:
    outcome = drive("runpod", with_exchange(snapshot_of("runpod"), 0, body={"data": {"gpuTypes": []}}))
    assert outcome.status == "failed"
    assert outcome.error.startswith("the platform answered with no GPU types")


def test_prices_without_lowest_price_are_a_layout_change() -> None:
    index = _index("secure", 1)
    body = json_of(snapshot_of("runpod").exchanges[index])
    for row in body["data"]["gpuTypes"]:
        row["cheapest"] = row.pop("lowestPrice")
    outcome = drive("runpod", with_exchange(snapshot_of("runpod"), index, body=body))
    assert "no GPU type carries 'lowestPrice'" in outcome.error


@pytest.fixture
def real_sample_outcome() -> Any:
    """The bundled fan-out, with both 1x answers replaced by the 37 real gpuTypes elements."""
    if not REAL_SAMPLE.is_file():
        pytest.skip(f"the real RunPod sample is not beside the project ({REAL_SAMPLE})")
    elements = json.loads(REAL_SAMPLE.read_text("utf-8"))
    snapshot = snapshot_of("runpod")
    types = {"data": {"gpuTypes": [{**e, "maxGpuCount": 1} for e in elements]}}
    snapshot = with_exchange(snapshot, 0, body=types)
    for cloud in ("secure", "community"):
        snapshot = with_exchange(snapshot, _index(cloud, 1), body={"data": {"gpuTypes": elements}})
    return drive("runpod", snapshot)


def test_the_real_sample_parses_with_its_nulls_and_placeholders(real_sample_outcome: Any) -> None:
    outcome = real_sample_outcome
    assert outcome.status == "ok"
    placeholders = {r.raw["id"] for r in outcome.rejected}
    assert placeholders == {"AMD Instinct MI300X OAM", "NVIDIA H200 NVL", "NVIDIA RTX 2000 Ada Generation"}
    assert all(r.reason == "placeholder_price" for r in outcome.rejected)
    # minimumBidPrice null (B200, H200 ...) -> no spot offer; the sample asks no stockStatus -> unknown.
    b200 = _offers(outcome, gpu_name_raw="NVIDIA B200")
    assert {o.pricing_type for o in b200} == {"on_demand"}
    pods = [o for o in outcome.offers if "/cluster/" not in o.offer_id]  # the cluster answer is the fixture's
    assert {o.available_gpus for o in pods} == {None}
    secure_only = _offers(outcome, gpu_name_raw="NVIDIA L4")
    assert {o.extra["cloud"] for o in secure_only} == {"secure"}


def test_the_real_sample_names_map_to_the_catalog(real_sample_outcome: Any) -> None:
    models = {o.gpu_name_raw: o.gpu_model for o in real_sample_outcome.offers}
    assert models["NVIDIA H100 80GB HBM3"] == "H100 SXM 80GB"
    assert models["NVIDIA H100 NVL"] == "H100 NVL 94GB"
    assert models["NVIDIA H200"] == "H200 SXM 141GB"
    assert models["NVIDIA A100 80GB PCIe"] == "A100 PCIe 80GB"
    assert models["Tesla V100-SXM2-32GB"] == "V100 SXM 32GB"
    assert models["Tesla V100-PCIE-16GB"] == "V100 PCIe 16GB"
    assert models["NVIDIA RTX 6000 Ada Generation"] == "RTX 6000 Ada 48GB"
    assert models["NVIDIA GeForce RTX 3080 Ti"] is None
    assert models["NVIDIA RTX PRO 6000 Blackwell Server Edition"] == "RTX PRO 6000 96GB"
    assert models["NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition"] is None  # the 300 W board
    assert models["NVIDIA GeForce RTX 4080 SUPER"] == "RTX 4080 SUPER 16GB"
    assert models["NVIDIA RTX A5000"] == "RTX A5000 24GB"


def test_with_a_key_the_rest_catalog_is_read_with_a_bearer_key(with_key: None) -> None:
    outcome = drive("runpod")
    assert (outcome.status, outcome.error) == ("ok", None)
    assert {r.meta["source_url"].split("?")[0] for r in outcome.requests} == {
        "https://api.runpod.io/v2/catalog/gpus"
    }
    assert {r.headers["Authorization"] for r in outcome.requests} == {b"Bearer test-key"}
    assert sorted((r.meta["cloud"], r.meta["gpu_count"]) for r in outcome.requests) == sorted(
        [("secure", n) for n in (1, 2, 4, 8, 16, 32)] + [("community", n) for n in (1, 2, 4, 8)]
    )


def test_the_catalog_gives_list_prices_and_availability_per_pod_size(with_key: None) -> None:
    offers = {o.offer_id: o for o in drive("runpod").offers}
    h200 = offers["NVIDIA H200/secure/8x"]
    assert (h200.price_amount, h200.price_per, h200.available_gpus) == (4.59, "gpu", 8)  # LOW: some
    assert h200.extra["availability"] == "LOW" and h200.extra["data_centers"] == ["US-KS-2", "EU-RO-1"]
    assert offers["NVIDIA A100-SXM4-80GB/secure/1x"].available_gpus == 0  # NONE
    assert offers["AMD Instinct MI300X OAM/secure/1x"].price_amount == 2.49  # no placeholder here
    assert "Tesla V100-SXM2-16GB/secure/1x" not in offers  # community cloud only
    assert {o.pricing_type for o in offers.values()} == {"on_demand"}


def test_a_refused_key_fails_with_the_apis_message(with_key: None) -> None:
    body = {
        "title": "Unauthorized",
        "status": 401,
        "detail": "invalid api key",
        "errors": ["invalid api key"],
    }
    snapshot = snapshot_of("runpod")
    for cloud in ("secure", "community"):
        snapshot = with_exchange(snapshot, _catalog_index(cloud, 1), body=body, status=401)
    outcome = drive("runpod", snapshot)
    assert outcome.status == "failed"
    assert "HTTP 401 from https://api.runpod.io/v2/catalog/gpus?include=AVAILABILITY" in outcome.error
    assert "invalid api key" in outcome.error


def _cluster_index() -> int:
    for index, exchange in enumerate(snapshot_of("runpod").exchanges):
        if exchange.body_key and json.loads(exchange.body_key).get("variables", {}).get("gpuTypesInput"):
            return index
    raise AssertionError("no cluster types exchange in the runpod snapshot")


def test_instant_cluster_types_are_one_node_offers_per_data_centre_at_the_cluster_price() -> None:
    outcome = drive("runpod")
    clusters = [o for o in outcome.offers if "/cluster/" in o.offer_id]
    # gpuhunt's reading: clusterPrice per GPU, maxGpuCount GPUs a node, one row per data centre
    assert {(o.offer_id, o.region, o.gpu_count, o.price_amount, o.price_per) for o in clusters} == {
        ("NVIDIA H100 80GB HBM3/cluster/US-KS-2", "US-KS-2", 8, 3.58, "gpu"),
        ("NVIDIA H100 80GB HBM3/cluster/EU-RO-1", "EU-RO-1", 8, 3.58, "gpu"),
        ("NVIDIA H200/cluster/US-KS-2", "US-KS-2", 8, 4.99, "gpu"),
        ("NVIDIA B200/cluster/US-DE-1", "US-DE-1", 8, 7.49, "gpu"),
        ("NVIDIA A100-SXM4-80GB/cluster/EU-RO-1", "EU-RO-1", 8, 1.79, "gpu"),
    }
    assert all(o.extra["cluster"] and o.pricing_type == "on_demand" for o in clusters)
    # a stock word is for one pod, not N nodes: unknown; a type without CPU, memory or stock: none
    assert {o.gpu_name_raw: o.available_gpus for o in clusters} == {
        "NVIDIA H100 80GB HBM3": None,
        "NVIDIA H200": None,
        "NVIDIA B200": 0,
        "NVIDIA A100-SXM4-80GB": None,
    }
    assert {o.gpu_model for o in clusters} == {
        "H100 SXM 80GB",
        "H200 SXM 141GB",
        "B200 180GB",
        "A100 SXM 80GB",
    }


def test_a_cluster_type_without_a_price_or_data_centres_makes_no_offer() -> None:
    index = _cluster_index()
    body = json_of(snapshot_of("runpod").exchanges[index])
    body["data"]["gpuTypes"][0]["clusterPrice"] = None
    body["data"]["gpuTypes"][1]["nodeGroupDatacenters"] = None
    outcome = drive("runpod", with_exchange(snapshot_of("runpod"), index, body=body))
    ids = {o.offer_id for o in outcome.offers if "/cluster/" in o.offer_id}
    assert ids == {"NVIDIA B200/cluster/US-DE-1", "NVIDIA A100-SXM4-80GB/cluster/EU-RO-1"}

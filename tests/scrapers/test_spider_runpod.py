"""RunPod spider: the per-count fan-out, stockStatus, placeholders, and the real gpuTypes sample."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from crawl_harness import drive, json_of, rejections, snapshot_of, with_exchange

REAL_SAMPLE = Path(__file__).parents[3] / "shared/samples/runpod/runpod_gpuTypes_elements_2026-04-01.json"


def _index(cloud: str, gpu_count: int) -> int:
    for index, exchange in enumerate(snapshot_of("runpod").exchanges):
        variables = json.loads(exchange.body_key).get("variables", {}).get("lowestPriceInput", {})
        if variables == {"gpuCount": gpu_count, "secureCloud": cloud == "secure"}:
            return index
    raise AssertionError(f"no {cloud} {gpu_count}x exchange in the runpod snapshot")


def _offers(outcome: Any, **match: Any) -> list[Any]:
    return [o for o in outcome.offers if all(getattr(o, k) == v for k, v in match.items())]


def test_one_request_per_cloud_and_gpu_count_after_the_type_list() -> None:
    outcome = drive("runpod")
    assert len(outcome.requests) == 1 + 2 * 2  # types; secure 1x 2x; community 1x 2x
    assert outcome.status == "ok"


def test_prices_are_per_gpu_with_spot_from_the_minimum_bid() -> None:
    h100 = _offers(drive("runpod"), offer_id="NVIDIA H100 80GB HBM3/secure/2x")
    assert {(o.pricing_type, o.price_amount, o.price_per, o.gpu_count) for o in h100} == {
        ("on_demand", 2.69, "gpu", 2),
        ("spot", 1.5, "gpu", 2),
    }
    assert {o.gpu_model for o in h100} == {"H100 SXM 80GB"}


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
    assert [(r.raw["id"], r.reason) for r in outcome.rejected if r.raw["gpu_count"] == 1] == [
        ("AMD Instinct MI300X OAM", "placeholder_price"),
        ("NVIDIA H200 NVL", "placeholder_price"),
    ]


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


def test_an_unknown_gpu_is_kept_and_flagged() -> None:
    outcome = drive("runpod")
    unknown = _offers(outcome, gpu_name_raw="NVIDIA GeForce RTX 3080 Ti")
    assert unknown and {o.gpu_model for o in unknown} == {None}
    assert outcome.stats["gpuplan/unknown_gpus"] == ["NVIDIA GeForce RTX 3080 Ti"]


@pytest.mark.parametrize(
    ("price", "reason"), [(0, "price_not_positive"), (-0.5, "price_not_positive"), (1e6, "price_absurd")]
)
def test_absurd_prices_are_rejected_and_counted(price: float, reason: str) -> None:
    index = _index("secure", 1)
    body = json_of(snapshot_of("runpod").exchanges[index])
    h100 = next(row for row in body["data"]["gpuTypes"] if row["id"] == "NVIDIA H100 80GB HBM3")
    h100["lowestPrice"].update(uninterruptablePrice=price, minimumBidPrice=price)
    outcome = drive("runpod", with_exchange(snapshot_of("runpod"), index, body=body))
    assert outcome.status == "ok"
    h100 = [code for code, offer_id in rejections(outcome, "runpod") if offer_id.startswith("NVIDIA H100")]
    assert h100 == [reason] * 2


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
    assert {o.available_gpus for o in outcome.offers} == {None}
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
    assert models["NVIDIA RTX PRO 6000 Blackwell Server Edition"] is None

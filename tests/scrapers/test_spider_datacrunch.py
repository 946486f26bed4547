"""DataCrunch spider: instance types, on-demand and spot per instance."""

from __future__ import annotations

from typing import Any

import pytest
from crawl_harness import drive, json_of, rejections, snapshot_of, with_exchange


def _rows() -> list[dict[str, Any]]:
    return json_of(snapshot_of("datacrunch").exchanges[0])


def _with(body: Any, **changes: Any) -> Any:
    return with_exchange(snapshot_of("datacrunch"), 0, body=body, **changes)


def test_on_demand_and_spot_per_instance() -> None:
    offers = [o for o in drive("datacrunch").offers if o.offer_id == "8H100.80S.176V"]
    assert {(o.pricing_type, o.price_amount, o.price_per, o.gpu_count) for o in offers} == {
        ("on_demand", 25.52, "instance", 8),
        ("spot", 8.8, "instance", 8),
    }
    assert {o.gpu_model for o in offers} == {"H100 SXM 80GB"}


def test_a_zero_spot_price_is_no_spot_quote() -> None:
    pricing = {o.pricing_type for o in drive("datacrunch").offers if o.offer_id == "1B200.180S.31V"}
    assert pricing == {"on_demand"}


def test_cpu_instances_are_not_offers_and_stock_is_unknown() -> None:
    outcome = drive("datacrunch")
    assert "CPU.4V.16G" not in {o.offer_id for o in outcome.offers}
    assert {o.available_gpus for o in outcome.offers} == {None}


def test_gpu_memory_is_per_gpu() -> None:
    v100 = next(o for o in drive("datacrunch").offers if o.offer_id == "4V100.20V")
    assert (v100.gpu_memory_gb, v100.gpu_model) == (16.0, None)  # SXM2 or PCIe? the list does not say


def test_an_error_object_fails_the_crawl() -> None:
    outcome = drive(
        "datacrunch", _with({"code": "unauthorized_request", "message": "Access token is missing"})
    )
    assert outcome.status == "failed"
    assert "error code 'unauthorized_request': Access token is missing" in outcome.error


def test_an_empty_list_fails_the_crawl() -> None:
    outcome = drive("datacrunch", _with([]))
    assert outcome.status == "failed"
    assert outcome.error.startswith("the platform answered with no instance types")


def test_a_changed_layout_fails_the_crawl() -> None:
    outcome = drive("datacrunch", _with({"instance_types": _rows()}))
    assert outcome.status == "failed"
    assert "expected a list at the top level, got dict" in outcome.error


def test_an_unknown_gpu_is_kept() -> None:
    rows = _rows()
    rows[0].update(name="Z100 Hyper 80GB", model="Z100", gpu={"description": "1x Z100", "number_of_gpus": 1})
    offers = [o for o in drive("datacrunch", _with(rows)).offers if o.offer_id == "1H100.80S.30V"]
    assert {(o.gpu_name_raw, o.gpu_model, o.gpu_memory_gb) for o in offers} == {
        ("Z100 Hyper 80GB", None, 80.0)
    }


@pytest.mark.parametrize(
    ("price", "reason"),
    [("0.00", "price_not_positive"), ("-2.00", "price_not_positive"), ("1000000.00", "price_absurd")],
)
def test_absurd_prices_are_rejected_and_counted(price: str, reason: str) -> None:
    rows = _rows()
    rows[0]["price_per_hour"] = price
    outcome = drive("datacrunch", _with(rows))
    assert outcome.status == "ok"
    assert rejections(outcome, "datacrunch") == [(reason, "1H100.80S.30V")]

"""Lambda spider: the pricing page without a key, the instance-types API (with stock) with one."""

from __future__ import annotations

import json
from typing import Any

import pytest
from crawl_harness import drive, json_of, rejections, snapshot_of, with_exchange

PAGE, API = 0, 1  # exchanges of the lambda snapshot


@pytest.fixture
def with_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LAMBDA_API_KEY", "test-key")


def _page(**replace: str) -> Any:
    text = snapshot_of("lambda").exchanges[PAGE].body.decode("utf-8")
    for old, new in replace.items():
        assert old in text
        text = text.replace(old, new)
    return with_exchange(snapshot_of("lambda"), PAGE, body=text.encode("utf-8"))


def _api(body: Any, **changes: Any) -> Any:
    return with_exchange(snapshot_of("lambda"), API, body=body, **changes)


def test_without_a_key_only_the_page_is_read() -> None:
    outcome = drive("lambda")
    assert [r.meta["source_url"] for r in outcome.requests] == ["https://lambda.ai/service/gpu-cloud"]


def test_the_size_tab_gives_the_gpu_count_and_prices_are_per_gpu() -> None:
    prices = {
        (o.offer_id, o.gpu_count, o.price_amount) for o in drive("lambda").offers if "H100 SXM" in o.offer_id
    }
    assert prices == {
        ("NVIDIA H100 SXM 80 GB/8x", 8, 3.99),
        ("NVIDIA H100 SXM 80 GB/4x", 4, 4.09),
        ("NVIDIA H100 SXM 80 GB/2x", 2, 4.19),
        ("NVIDIA H100 SXM 80 GB/1x", 1, 4.29),
    }
    assert {o.price_per for o in drive("lambda").offers} == {"gpu"}


def test_the_clusters_table_and_the_stale_script_copy_are_ignored() -> None:
    offers = drive("lambda").offers
    assert not [o for o in offers if "HGX" in o.gpu_name_raw]
    assert 99.99 not in {o.price_amount for o in offers}


def test_the_page_says_nothing_about_stock() -> None:
    assert {o.available_gpus for o in drive("lambda").offers} == {None}


def test_a_row_without_a_price_is_rejected_with_its_cells() -> None:
    rejected = drive("lambda").rejected
    assert [(r.reason, r.raw["plan"], r.raw["gpu_count"]) for r in rejected] == [
        ("no_price", "NVIDIA Tesla V100", 8)
    ]


def test_the_table_served_only_as_escaped_script_markup_is_read() -> None:
    page = snapshot_of("lambda").exchanges[PAGE].body.decode("utf-8")
    start, end = (
        page.index('<section class="instances">'),
        page.index("</section>", page.index("Instances pricing")),
    )
    section = page[start : end + len("</section>")]
    escaped_only = page.replace(section, "").replace("$99.99", "$3.99")
    outcome = drive("lambda", with_exchange(snapshot_of("lambda"), PAGE, body=escaped_only.encode("utf-8")))
    assert outcome.status == "ok"
    assert {(o.offer_id, o.price_amount) for o in outcome.offers} == {
        (o.offer_id, o.price_amount) for o in drive("lambda").offers
    }


def test_a_page_without_size_tabs_is_a_layout_change() -> None:
    # In the rendered table and in the escaped script copy alike.
    outcome = drive("lambda", _page(**{'role="tab"': 'role="button"', 'role=\\"tab\\"': 'role=\\"button\\"'}))
    assert outcome.status == "failed"
    assert "no size tabs (8x, 4x, ...) with data-plan rows on the pricing page" in outcome.error


def test_an_unknown_card_on_the_page_is_kept() -> None:
    unknown = [o for o in drive("lambda").offers if o.gpu_model is None]
    assert [(o.gpu_name_raw, o.gpu_memory_gb) for o in unknown] == [("NVIDIA Quadro RTX 6000", 24.0)]


@pytest.mark.parametrize(
    ("cell", "reason"), [("$0.00", "price_not_positive"), ("$1000000.00", "price_absurd")]
)
def test_absurd_page_prices_are_rejected(cell: str, reason: str) -> None:
    outcome = drive("lambda", _page(**{"$2.29": cell}))  # GH200 1x
    assert outcome.status == "ok"
    refused = {offer_id for code, offer_id in rejections(outcome, "lambda") if code == reason}
    assert [o.gpu_name_raw for o in drive("lambda").offers if o.offer_id in refused] == ["NVIDIA GH200"]


def test_with_a_key_the_api_is_read_with_a_bearer_token(with_key: None) -> None:
    outcome = drive("lambda")
    (request,) = outcome.requests
    assert request.meta["source_url"] == "https://cloud.lambda.ai/api/v1/instance-types"
    assert request.headers["Authorization"] == b"Bearer test-key"
    assert "test-key" not in json.dumps([o.__dict__ for o in outcome.offers])


def test_regions_with_capacity_are_the_stock(with_key: None) -> None:
    offers = {o.offer_id: o for o in drive("lambda").offers}
    assert offers["gpu_1x_h100_sxm5/us-east-1"].available_gpus == 1
    assert offers["gpu_1x_h100_sxm5/us-west-3"].region == "us-west-3"
    assert offers["gpu_8x_h100_sxm5"].available_gpus == 0, "no region with capacity: sold out, not unknown"
    assert offers["gpu_8x_h100_sxm5"].price_amount == 31.92  # 3192 cents, per instance
    assert offers["gpu_8x_h100_sxm5"].price_per == "instance"
    assert "cpu_4x_general" not in {o.extra["instance_type"] for o in offers.values()}


def test_a_missing_capacity_field_is_unknown_stock(with_key: None) -> None:
    body = json_of(snapshot_of("lambda").exchanges[API])
    del body["data"]["gpu_1x_a10"]["regions_with_capacity_available"]
    offers = {o.offer_id: o for o in drive("lambda", _api(body)).offers}
    assert offers["gpu_1x_a10"].available_gpus is None


def test_an_invalid_key_fails_with_the_api_message(with_key: None) -> None:
    body = {
        "error": {"code": "global/invalid-api-key", "message": "API key was invalid, expired, or deleted."}
    }
    outcome = drive("lambda", _api(body, status=401))
    assert outcome.status == "failed"
    assert outcome.error == (
        "HTTP 401 from https://cloud.lambda.ai/api/v1/instance-types: "
        "global/invalid-api-key: API key was invalid, expired, or deleted."
    )


def test_an_error_envelope_with_http_200_fails(with_key: None) -> None:
    body = {"error": {"code": "global/unknown", "message": "Unknown error"}}
    outcome = drive("lambda", _api(body))
    assert outcome.status == "failed"
    assert "global/unknown: Unknown error" in outcome.error


def test_an_empty_instance_list_fails(with_key: None) -> None:
    outcome = drive("lambda", _api({"data": {}}))
    assert outcome.status == "failed"
    assert outcome.error.startswith("the platform answered with no instance types")


def test_api_json_cut_off_fails(with_key: None) -> None:
    body = snapshot_of("lambda").exchanges[API].body
    outcome = drive("lambda", _api(body[:100]))
    assert outcome.status == "failed"
    assert "invalid JSON (the body looks cut off)" in outcome.error


@pytest.mark.parametrize(
    ("cents", "reason"),
    [(0, "price_not_positive"), (-100, "price_not_positive"), (100_000_000, "price_absurd")],
)
def test_absurd_api_prices_are_rejected(with_key: None, cents: int, reason: str) -> None:
    body = json_of(snapshot_of("lambda").exchanges[API])
    body["data"]["gpu_1x_gh200"]["instance_type"]["price_cents_per_hour"] = cents
    outcome = drive("lambda", _api(body))
    assert outcome.status == "ok"
    assert [code for code, _ in rejections(outcome, "lambda")] == [reason]


def test_an_unknown_card_from_the_api_is_kept(with_key: None) -> None:
    offers = {o.offer_id: o for o in drive("lambda").offers}
    assert offers["gpu_1x_rtx6000"].gpu_model is None
    assert offers["gpu_1x_rtx6000"].gpu_name_raw == "RTX 6000 (24 GB)"

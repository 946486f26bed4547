"""Lambda spider: the pricing page without a key, the instance-types API (with stock) with one.

The page fixture follows the live page's structure: the rendered HubSpot island of an Internet
Archive capture of lambda.ai/pricing, and the island's hydration data (`window.__islands`: tabs of
`label` + `contentHtml`) as a public parser reads it; see scrapers/fixtures/lambda/README.md."""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import urljoin

import pytest
from crawl_harness import drive, json_of, rejections, snapshot_of, with_exchange

from scrapers.registry import fixture_dir
from scrapers.replay import Exchange, Snapshot

PAGE, API = 0, 1  # exchanges of the lambda snapshot
PRICING, SERVICE = "https://lambda.ai/pricing", "https://lambda.ai/service/gpu-cloud"
ISLAND_DIV = re.compile(r'(<div data-hs-island="true" id="[^"]+">).*?(</div><!--/\$-->)', re.S)


@pytest.fixture
def with_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LAMBDA_API_KEY", "test-key")


def _page_text(snapshot: Snapshot | None = None) -> str:
    return (snapshot or snapshot_of("lambda")).exchanges[PAGE].body.decode("utf-8")


def _page(**replace: str) -> Any:
    text = _page_text()
    for old, new in replace.items():
        assert old in text
        text = text.replace(old, new)
    return with_exchange(snapshot_of("lambda"), PAGE, body=text.encode("utf-8"))


def _api(body: Any, **changes: Any) -> Any:
    return with_exchange(snapshot_of("lambda"), API, body=body, **changes)


def _islands_only(page: str) -> str:
    """The page with its island's rendered markup gone: the tables only in the hydration data."""
    emptied, count = ISLAND_DIV.subn(r"\1\2", page)
    assert count == 1
    return emptied


def _with_pages(*exchanges: tuple[str, int, dict[str, str], str]) -> Snapshot:
    """The lambda snapshot with its page exchange replaced by these (url, status, headers, body)."""
    snapshot = snapshot_of("lambda")
    pages = [
        Exchange(
            "GET", url, "", status, {"Content-Type": "text/html; charset=utf-8", **headers}, body.encode()
        )
        for url, status, headers, body in exchanges
    ]
    return Snapshot(snapshot.folder, snapshot.meta, [*pages, *snapshot.exchanges[API:]])


def test_without_a_key_the_page_is_read_where_it_says_it_is() -> None:
    outcome = drive("lambda")
    assert [r.meta["source_url"] for r in outcome.requests] == [PRICING]
    assert '<link rel="canonical" href="https://lambda.ai/pricing">' in _page_text()
    assert {o.source_url for o in outcome.offers} == {PRICING}


def test_the_size_tab_gives_the_gpu_count_and_prices_are_per_gpu() -> None:
    prices = {
        (o.offer_id, o.gpu_count, o.price_amount) for o in drive("lambda").offers if "H100 SXM" in o.offer_id
    }
    assert prices == {
        ("NVIDIA H100 SXM 80 GB/8x", 8, 3.99),
        ("NVIDIA H100 SXM 80 GB/4x", 4, 4.19),
        ("NVIDIA H100 SXM 80 GB/2x", 2, 4.19),
        ("NVIDIA H100 SXM 80 GB/1x", 1, 4.29),
    }
    assert {o.price_per for o in drive("lambda").offers} == {"gpu"}


def test_the_clusters_table_is_not_a_size_table() -> None:
    offers = drive("lambda").offers
    assert not [o for o in offers if "HGX" in o.gpu_name_raw]
    assert 4.49 not in {o.price_amount for o in offers}


def test_the_rendered_tables_win_over_the_islands_copy() -> None:
    page = _page_text()
    islands = page.index("var newIslands")
    stale = page[:islands] + page[islands:].replace("$3.99", "$99.99")
    outcome = drive("lambda", with_exchange(snapshot_of("lambda"), PAGE, body=stale.encode("utf-8")))
    assert 99.99 not in {o.price_amount for o in outcome.offers}


def test_the_page_says_nothing_about_stock() -> None:
    assert {o.available_gpus for o in drive("lambda").offers} == {None}


def test_a_sold_out_size_is_a_quote_without_a_price_rejected_as_read() -> None:
    rejected = drive("lambda").rejected
    assert [(r.reason, r.raw["gpu_name_raw"], r.raw["gpu_count"]) for r in rejected] == [
        ("price_missing", "NVIDIA Tesla V100", 1)
    ]


def test_a_page_served_only_as_islands_pairs_each_table_with_its_label() -> None:
    # Every price is in window.__islands, each tab's table decoded alone, its size beside it.
    page = _page_text()
    assert 'data-label=\\"PRICE\\u002FGPU\\u002FHR*\\"\\u003E$' in page  # cherielilili's pattern
    islands_only = _islands_only(page)
    assert 'data-plan="' not in islands_only  # rows only inside the islands' JSON (data-plan=\"...\")
    outcome = drive("lambda", with_exchange(snapshot_of("lambda"), PAGE, body=islands_only.encode("utf-8")))
    assert outcome.status == "ok"
    assert {(o.offer_id, o.gpu_count, o.price_amount) for o in outcome.offers} == {
        (o.offer_id, o.gpu_count, o.price_amount) for o in drive("lambda").offers
    }


def test_the_islands_size_is_the_tabs_own_label_not_its_place() -> None:
    def tab(label: str, plan: str, vram: str, price: str) -> dict[str, str]:
        row = f'<td data-label="VRAM/GPU">{vram}</td><td data-label="PRICE/GPU/HR*">{price}</td>'
        return {"label": label, "contentHtml": f'<table><tr data-plan="{plan}">{row}</tr></table>'}

    tabs = [
        tab("1x", "NVIDIA A10", "24 GB", "$1.29"),
        tab("Reserved", "NVIDIA B200 SXM6", "180 GB", "$4.99"),
        tab("8x", "NVIDIA H100 SXM", "80 GB", "$3.99"),
    ]
    islands = [{"id": "island-a", "moduleName": "TabsIsland", "props": {"tabs": tabs}}]
    script = f"<script>var newIslands = {json.dumps(islands)};window.__islands = newIslands;</script>"
    outcome = drive(
        "lambda", with_exchange(snapshot_of("lambda"), PAGE, body=f"<html><body>{script}</body></html>")
    )
    assert {(o.gpu_model, o.gpu_count, o.price_amount) for o in outcome.offers} == {
        ("A10 24GB", 1, 1.29),
        ("H100 SXM 80GB", 8, 3.99),
    }  # the "Reserved" tab is no size


def test_the_day_before_was_served_only_in_the_islands() -> None:
    previous = Snapshot.load(fixture_dir("lambda") / "previous")
    assert 'data-plan="' not in _page_text(previous)
    offers = {o.offer_id: o.price_amount for o in drive("lambda", previous).offers}
    assert offers["NVIDIA H100 SXM 80 GB/8x"] == 4.29  # 3.99 on the latest day
    assert "NVIDIA A10 24 GB/1x" not in offers  # sold out ("—") that day


def test_tabs_marked_up_with_aria_controls_are_read_too() -> None:
    page = (
        '<div role="tablist"><button role="tab" aria-controls="p8">8x</button>'
        '<button role="tab" aria-controls="p1">1x</button></div>'
        '<div id="p8"><table><tr data-plan="NVIDIA H100 SXM"><td data-label="VRAM/GPU">80 GB</td>'
        '<td data-label="PRICE/GPU/HR*">$3.99</td></tr></table></div>'
        '<div id="p1"><table><tr data-plan="NVIDIA A10"><td data-label="VRAM/GPU">24 GB</td>'
        '<td data-label="PRICE/GPU/HR*">$1.29</td></tr></table></div>'
    )
    outcome = drive("lambda", with_exchange(snapshot_of("lambda"), PAGE, body=page.encode("utf-8")))
    assert {(o.gpu_model, o.gpu_count, o.price_amount) for o in outcome.offers} == {
        ("H100 SXM 80GB", 8, 3.99),
        ("A10 24GB", 1, 1.29),
    }


def _tab_buttons_page(sizes: list[str], tables: int) -> str:
    """toolshedlabs' reading: `_tabButton` buttons, no aria markup, the tables in the same order."""
    buttons = "".join(f'<button class="_tabButton_1wn8q_12">{size}</button>' for size in sizes)
    table = (
        '<table><tr data-plan="NVIDIA H100 SXM"><td data-label="VRAM/GPU">80 GB</td>'
        '<td data-label="PRICE/GPU/HR*">$3.99</td></tr></table>'
    )
    return f"<html><body><div>{buttons}</div>{table * tables}</body></html>"


def test_tab_buttons_pair_with_the_tables_in_order() -> None:
    page = _tab_buttons_page(["8x", "1x"], 2)
    outcome = drive("lambda", with_exchange(snapshot_of("lambda"), PAGE, body=page))
    assert sorted(o.gpu_count for o in outcome.offers) == [1, 8]


def test_tabs_and_tables_that_do_not_pair_up_are_a_layout_change() -> None:
    page = _tab_buttons_page(["8x", "4x", "1x"], 2)
    outcome = drive("lambda", with_exchange(snapshot_of("lambda"), PAGE, body=page))
    assert outcome.status == "failed"
    assert "3 size tabs but 2 pricing tables on the pricing page" in outcome.error


def test_a_page_without_size_tabs_is_a_layout_change_at_both_addresses() -> None:
    # In the rendered markup and in the islands alike: the second address is asked, then both fail.
    unsized = _page_text()
    for size in ("8x", "4x", "2x", "1x"):
        unsized = unsized.replace(f">{size}</button>", ">GPUs</button>").replace(
            f'"label":"{size}"', '"label":"GPUs"'
        )
    outcome = drive("lambda", _with_pages((PRICING, 200, {}, unsized), (SERVICE, 200, {}, unsized)))
    assert [r.meta["source_url"] for r in outcome.requests] == [PRICING, SERVICE]
    assert outcome.status == "failed"
    problem = "no size tabs (8x, 4x, ...) with data-plan pricing tables on the pricing page"
    assert outcome.errors == [
        f"{problem}, rendered or in its islands (window.__islands) (from {PRICING})",
        f"{problem}, rendered or in its islands (window.__islands) (from {SERVICE})",
    ]


def test_when_the_pricing_address_fails_the_service_page_is_read() -> None:
    outcome = drive(
        "lambda", _with_pages((PRICING, 404, {}, "<h1>Not found</h1>"), (SERVICE, 200, {}, _page_text()))
    )
    assert outcome.status == "ok"
    assert [r.meta["source_url"] for r in outcome.requests] == [PRICING, SERVICE]
    assert {o.source_url for o in outcome.offers} == {SERVICE}
    assert len(outcome.offers) == len(drive("lambda").offers)


def test_a_failure_of_the_site_is_not_asked_again_elsewhere() -> None:
    outcome = drive("lambda", _with_pages((PRICING, 403, {}, ""), (SERVICE, 200, {}, _page_text())))
    assert [r.meta["source_url"] for r in outcome.requests] == [PRICING]
    assert (outcome.status, outcome.error) == ("failed", f"HTTP 403 from {PRICING}")


def test_when_both_addresses_fail_both_are_said() -> None:
    outcome = drive("lambda", _with_pages((PRICING, 404, {}, ""), (SERVICE, 410, {}, "")))
    assert outcome.status == "failed"
    assert outcome.errors == [f"HTTP 404 from {PRICING}", f"HTTP 410 from {SERVICE}"]


@pytest.mark.parametrize(
    "location", [SERVICE, "/service/gpu-cloud", "https://www.lambda.ai/service/gpu-cloud"]
)
def test_a_redirect_within_lambdas_hosts_is_followed(location: str) -> None:
    outcome = drive(
        "lambda", _with_pages((PRICING, 301, {"Location": location}, ""), (SERVICE, 200, {}, _page_text()))
    )
    assert outcome.status == "ok"
    followed = urljoin(PRICING, location)
    assert [r.meta["source_url"] for r in outcome.requests] == [PRICING, followed]
    assert {o.source_url for o in outcome.offers} == {followed}  # the page that answered
    assert len(outcome.offers) == len(drive("lambda").offers)


def test_a_redirect_off_lambdas_hosts_is_not_followed() -> None:
    outcome = drive(
        "lambda",
        _with_pages(
            (PRICING, 302, {"Location": "https://lambda.ai.example.net/pricing"}, ""),
            (SERVICE, 200, {}, _page_text()),
        ),
    )
    assert outcome.status == "ok"  # the second address answered
    assert [r.meta["source_url"] for r in outcome.requests] == [PRICING, SERVICE]


def test_a_redirect_loop_ends() -> None:
    outcome = drive("lambda", _with_pages((PRICING, 301, {"Location": PRICING}, ""), (SERVICE, 404, {}, "")))
    assert outcome.status == "failed"
    assert outcome.errors == [
        f"more than 5 redirects from {PRICING}, the last to {PRICING}",
        f"HTTP 404 from {SERVICE}",
    ]


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


def test_an_unknown_card_from_the_api_is_kept_with_its_memory(with_key: None) -> None:
    offers = {o.offer_id: o for o in drive("lambda").offers}
    assert offers["gpu_1x_rtx6000"].gpu_model is None
    assert offers["gpu_1x_rtx6000"].gpu_name_raw == "RTX 6000 (24 GB)"
    assert offers["gpu_1x_rtx6000"].gpu_memory_gb == 24.0  # read from the description


def test_a_card_whose_form_the_api_does_not_state_keeps_its_memory(with_key: None) -> None:
    v100 = {o.offer_id: o for o in drive("lambda").offers}["gpu_8x_v100/us-south-1"]
    assert (v100.gpu_name_raw, v100.gpu_model, v100.gpu_memory_gb) == (
        "Tesla V100 (16 GB)",
        "V100 16GB",
        16.0,
    )
    assert (v100.gpu_count, v100.price_amount, v100.available_gpus) == (8, 6.32, 8)

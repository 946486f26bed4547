"""优云智算 compshare spider: the public price list read by its headers, every way of paying."""

from __future__ import annotations

from typing import Any

from crawl_harness import drive, snapshot_of, with_exchange

from scrapers.spiders.compshare import read_headers

PAGE = 0


def _page(**replace: str) -> Any:
    text = snapshot_of("compshare").exchanges[PAGE].body.decode("utf-8")
    for old, new in replace.items():
        assert old in text
        text = text.replace(old, new)
    return with_exchange(snapshot_of("compshare"), PAGE, body=text.encode("utf-8"))


def _prices(outcome: Any, offer_id: str) -> dict[tuple[str, str], float]:
    return {
        (o.billing_period, o.pricing_type): o.price_amount for o in outcome.offers if o.offer_id == offer_id
    }


def test_one_machine_gives_an_offer_per_way_of_paying() -> None:
    assert _prices(drive("compshare"), "RTX 4090 24GB/1x") == {
        ("hour", "on_demand"): 1.92,
        ("day", "daily_plan"): 42.0,
        ("month", "monthly_plan"): 1168.0,
        ("hour", "spot"): 1.31,
    }


def test_prices_are_per_whole_machine_with_its_gpu_count() -> None:
    offers = [o for o in drive("compshare").offers if o.offer_id == "RTX 4090 24GB/8x"]
    assert {(o.gpu_count, o.price_per) for o in offers} == {(8, "instance")}
    assert {o.min_term_periods for o in offers} == {1}
    assert offers[0].extra["cpu"] == "128核"


def test_a_dash_means_not_sold_that_way_and_a_row_without_prices_is_rejected() -> None:
    outcome = drive("compshare")
    assert ("hour", "spot") not in _prices(outcome, "RTX 4090 24GB/8x")
    assert [(r.reason, r.raw["cells"][0]) for r in outcome.rejected] == [("no_price", "A800")]


def test_memory_tells_variants_apart_and_unknown_cards_are_kept() -> None:
    outcome = drive("compshare")
    models = {o.offer_id: o.gpu_model for o in outcome.offers}
    assert models["H20 96GB/8x"] == "H20 96GB"
    assert models["RTX 4080 SUPER 16GB/1x"] is None
    assert outcome.stats["gpuplan/unknown_gpus"] == ["RTX 4080 SUPER"]


def test_the_storage_table_is_not_read_and_nothing_says_stock() -> None:
    offers = drive("compshare").offers
    assert {o.gpu_name_raw for o in offers} == {"RTX 4090", "RTX 3090", "RTX 4080 SUPER", "H20"}
    assert {o.available_gpus for o in offers} == {None}


def test_columns_are_found_by_their_headers_not_their_order() -> None:
    columns = read_headers(["按月 (元/月)", "显存", "GPU 型号", "抢占式(元/小时)", "卡数"])
    assert columns is not None
    assert (columns.gpu, columns.memory, columns.count) == (2, 1, 4)
    assert [(c.index, c.billing_period, c.pricing_type) for c in columns.prices] == [
        (0, "month", "monthly_plan"),
        (3, "hour", "spot"),
    ]
    assert read_headers(["类型", "价格（元/GB/月）"]) is None


def test_a_row_of_the_wrong_shape_is_rejected() -> None:
    outcome = drive("compshare", _page(**{"<td>RTX 3090</td><td>24GB</td>": "<td>RTX 3090</td>"}))
    assert outcome.status == "ok"
    assert "row_shape" in {r.reason for r in outcome.rejected}


def test_a_page_without_a_price_table_is_a_layout_change() -> None:
    outcome = drive("compshare", _page(**{"GPU型号": "名称"}))
    assert outcome.status == "failed"
    assert outcome.error.startswith("no price table on the page")

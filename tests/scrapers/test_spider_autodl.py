"""AutoDL spider: the token (missing, expired, never written out), prices in 厘, stock (and how
`gpu_order_num` is read), AutoDL's GPU names, region stock."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from crawl_harness import drive, json_of, snapshot_of, with_exchange
from crawl_helpers import crawl_env, loopback_settings, read_jsonl
from loopback import serving

from scrapers.crawl.runner import run_crawl
from scrapers.spiders.autodl import orderable

PAGE_1, PAGE_2, WEST_B = 0, 1, 2  # exchanges of the autodl snapshot
TOKEN = "eyJhbGciOiJIUzI1NiJ9.autodl-test-token"
EXPIRED = {"code": "AuthorizeFailed", "msg": "登录超时", "data": None}


@pytest.fixture
def token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUTODL_TOKEN", TOKEN)


def _rows(page: int) -> list[dict[str, Any]]:
    return json_of(snapshot_of("autodl").exchanges[page])["data"]["list"]


def _with_rows(page: int, rows: list[dict[str, Any]]) -> Any:
    body = json_of(snapshot_of("autodl").exchanges[page])
    body["data"]["list"] = rows
    return with_exchange(snapshot_of("autodl"), page, body=body)


@pytest.mark.usefixtures("token")
def test_an_expired_token_is_a_clear_failure() -> None:
    outcome = drive("autodl", with_exchange(snapshot_of("autodl"), PAGE_1, body=EXPIRED))
    assert outcome.status == "failed"
    assert outcome.error.startswith("AutoDL refused AUTODL_TOKEN (AuthorizeFailed: 登录超时): it has expired")
    assert outcome.offers == []


@pytest.mark.usefixtures("token")
def test_the_token_goes_in_the_authorization_header_without_bearer() -> None:
    requests = drive("autodl").requests
    assert {r.headers["Authorization"] for r in requests} == {TOKEN.encode()}
    assert all(TOKEN not in r.url for r in requests)


@pytest.mark.slow
def test_the_token_never_reaches_the_feeds_summary_or_log(tmp_path: Path) -> None:
    summary = run_crawl("autodl", tmp_path, offline=True, env=crawl_env("autodl", TOKEN))
    assert summary.status == "ok"
    written = {path.name: path.read_bytes() for path in tmp_path.iterdir()}
    assert {"autodl.jsonl", "autodl.summary.json", "autodl.log"} <= set(written)
    assert [name for name, content in written.items() if TOKEN.encode() in content] == []
    # Chinese stays as text, not \u escapes.
    assert "西北B区".encode() in written["autodl.jsonl"]


@pytest.mark.usefixtures("token")
def test_both_pages_are_asked_with_the_web_ui_body() -> None:
    requests = drive("autodl").requests
    bodies = [json.loads(r.body) for r in requests if r.meta["source_url"].endswith("/user/machine/list")]
    assert [(b["page_index"], b["charge_type"], b["gpu_idle_num"]) for b in bodies] == [
        (1, "payg", 1),
        (2, "payg", 1),
    ]


@pytest.mark.usefixtures("token")
def test_prices_are_per_gpu_hour_in_yuan_from_li() -> None:
    offers = {o.offer_id: o for o in drive("autodl").offers}
    assert offers["2dd949a4cf"].price_amount == 1.98  # payg_price 1980 厘
    assert offers["a41f5e6b79"].price_amount == 10.5
    assert {(o.price_currency, o.price_per, o.gpu_count, o.billing_period) for o in offers.values()} == {
        ("CNY", "gpu", 1, "hour")
    }


@pytest.mark.usefixtures("token")
def test_stock_is_the_idle_gpus_one_order_can_take() -> None:
    offers = {o.offer_id: o for o in drive("autodl").offers}
    assert offers["2dd949a4cf"].available_gpus == 3  # 3 idle, gpu_order_num 3
    assert offers["5f8e2b9d40"].available_gpus == 2  # 3 idle, but one order takes at most 2
    assert offers["a41f5e6b79"].available_gpus == 0  # gpu_order_num 0: takes no orders


@pytest.mark.parametrize(
    ("idle", "order_num", "available"),
    [(3, 3, 3), (3, 2, 2), (5, 8, 5), (4, 0, 0), (3, None, 3), (None, 2, None)],
)
def test_gpu_order_num_is_read_as_the_most_one_order_can_take(
    idle: int | None, order_num: int | None, available: int | None
) -> None:
    assert orderable(idle, order_num) == available


@pytest.mark.usefixtures("token")
def test_regions_keep_their_chinese_names_and_gpus_map_to_the_catalog() -> None:
    offers = {o.offer_id: o for o in drive("autodl").offers}
    assert (offers["2dd949a4cf"].region, offers["9e0d3c7f12"].region) == ("西北B区", "华为昇腾专区")
    assert offers["9e0d3c7f12"].gpu_model == "Ascend 910B 64GB"  # 昇腾910B
    assert offers["7c4d1e0a93"].gpu_model == "L20 48GB"
    # SXM or PCIe not said: the catalog's form-less rows, never a guessed form.
    assert offers["a41f5e6b79"].gpu_model == "H800 80GB"


@pytest.mark.usefixtures("token")
def test_autodls_own_card_names_map_or_stay_honestly_unknown() -> None:
    offers = {o.gpu_name_raw: o for o in drive("autodl").offers}
    named = {raw: (o.gpu_model, o.gpu_memory_gb, o.gpu_form) for raw, o in offers.items()}
    assert named["A800-80GB-NVLink"] == ("A800 SXM 80GB", 80.0, "SXM")  # NVLink: the SXM board
    assert named["V100-32GB"] == ("V100 32GB", 32.0, None)  # the form-less row
    assert named["RTX PRO 6000"] == ("RTX PRO 6000 96GB", 96.0, None)
    # Not guessed: SXM or PCIe (A100), 96 or 141 GB (H20); AutoDL's volume cards are no catalog card.
    assert named["A100-80G"] == (None, 80.0, None)
    assert named["H20-NVLink"][0] is None
    assert named["vGPU-32GB"] == (None, 32.0, None) and named["vGPU-48GB"] == (None, 48.0, None)


@pytest.mark.usefixtures("token")
def test_cpu_machines_are_left_out_and_odd_rows_rejected() -> None:
    outcome = drive("autodl")
    assert "d2e4f6a8b0" not in {o.offer_id for o in outcome.offers}
    assert sorted(r.reason for r in outcome.rejected) == ["not_pay_as_you_go", "record_incomplete"]


@pytest.mark.usefixtures("token")
def test_period_prices_a_row_carries_give_plan_offers_and_their_absence_costs_nothing() -> None:
    # UNVERIFIED field names (scrapers/spiders/autodl.py PERIOD_PRICES): no recorded row has them.
    baseline = drive("autodl")
    assert {o.billing_period for o in baseline.offers} == {"hour"}
    rows = _rows(PAGE_1)
    row = next(r for r in rows if r["machine_id"] == "2dd949a4cf")
    row.update({"daily_price": 45000, "monthly_price": 1180000})  # 厘: 45 a day, 1,180 a month
    outcome = drive("autodl", _with_rows(PAGE_1, rows))
    assert (outcome.status, outcome.rejected == baseline.rejected) == ("ok", True)
    plans = {o.offer_id: o for o in outcome.offers if o.offer_id.startswith("2dd949a4cf")}
    assert {k: (o.price_amount, o.billing_period, o.pricing_type) for k, o in plans.items()} == {
        "2dd949a4cf": (1.98, "hour", "on_demand"),
        "2dd949a4cf/day": (45.0, "day", "daily_plan"),
        "2dd949a4cf/month": (1180.0, "month", "monthly_plan"),
    }
    month = plans["2dd949a4cf/month"]
    assert (month.available_gpus, month.region, month.extra["region_idle_gpus"]) == (3, "西北B区", 37)
    assert len(outcome.offers) == len(baseline.offers) + 2


@pytest.mark.usefixtures("token")
def test_each_region_sign_is_asked_once_and_its_figures_go_with_the_offers() -> None:
    outcome = drive("autodl")
    signs = [json.loads(r.body)["region_sign_list"] for r in outcome.requests if "region/gpu_type" in r.url]
    assert sorted(signs) == sorted([[s] for s in {o.extra["region_sign"] for o in outcome.offers}])
    offers = {o.offer_id: o for o in outcome.offers}
    assert (
        offers["2dd949a4cf"].extra["region_idle_gpus"],
        offers["2dd949a4cf"].extra["region_total_gpus"],
    ) == (
        37,
        1344,
    )
    assert offers["b7d2c9e014"].extra["region_idle_gpus"] == 3  # RTX 5090 in beijing-A
    assert offers["a41f5e6b79"].extra["region_idle_gpus"] == 0  # no idle H800 in beijing-B


@pytest.mark.usefixtures("token")
def test_a_failed_region_answer_keeps_its_offers_without_figures() -> None:
    outcome = drive("autodl", with_exchange(snapshot_of("autodl"), WEST_B, body=EXPIRED))
    assert outcome.status == "partial"
    assert "AutoDL refused AUTODL_TOKEN" in outcome.error
    west_b = [o for o in outcome.offers if o.extra["region_sign"] == "west-B"]
    assert sorted(o.offer_id for o in west_b) == ["2dd949a4cf", "f1e2d3c4b5"]
    assert all("region_idle_gpus" not in o.extra for o in west_b)


@pytest.mark.slow
def test_a_region_request_that_fails_over_http_still_delivers_its_offers(tmp_path: Path) -> None:
    snapshot = with_exchange(
        snapshot_of("autodl"), WEST_B, status=404, body={"code": "NotFound", "msg": "no"}
    )
    with serving(snapshot) as server:
        summary = run_crawl(
            "autodl", tmp_path, env=crawl_env("autodl", TOKEN), settings=loopback_settings(server.url)
        )
    assert summary.status == "partial"
    assert summary.error.startswith("HTTP 404 from https://www.autodl.com/api/v1/machine/region/gpu_type")
    offers = {o["offer_id"]: o for o in read_jsonl(Path(summary.feed))}
    assert len(offers) == 14
    assert "region_idle_gpus" not in offers["2dd949a4cf"]["extra"]

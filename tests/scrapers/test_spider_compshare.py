"""优云智算 compshare spider: the signed API with both keys (UCloud's signature, zones, types, sizes,
prices); without them the public price list read by its headers, marked unverified."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

import pytest
from crawl_harness import drive, json_of, snapshot_of, with_exchange
from crawl_helpers import crawl_env, loopback_settings, read_jsonl
from loopback import serving

from scrapers.crawl.runner import run_crawl
from scrapers.platform import STAT_UNVERIFIED
from scrapers.replay import SNAPSHOT_FILE
from scrapers.spiders.compshare import read_headers, signed, ucloud_params

PUBLIC, PRIVATE = "test-public-key", "test-private-key"

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
    assert models["RTX 4080 SUPER 16GB/1x"] == "RTX 4080 SUPER 16GB"
    assert "gpuplan/unknown_gpus" not in outcome.stats


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


@pytest.fixture
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COMPSHARE_PUBLIC_KEY", PUBLIC)
    monkeypatch.setenv("COMPSHARE_PRIVATE_KEY", PRIVATE)


def _api_index(action: str, **params: str) -> int:
    for index, exchange in enumerate(snapshot_of("compshare").exchanges):
        fields = dict(parse_qsl(exchange.body_key.removeprefix("form:")))
        if fields.get("Action") == action and all(fields.get(k) == v for k, v in params.items()):
            return index
    raise AssertionError(f"no {action} {params} exchange in the compshare snapshot")


def test_the_signature_is_ucloud_s() -> None:
    # The example of UCloudDoc-Team/api summary/signature.md, with its published result.
    form = signed(
        {"Action": "DescribeUHostInstance", "Region": "cn-bj2", "Limit": "10"},
        "ucloudsomeone@example.com1296235120854146120",
        "46f09bb9fab4f12dfc160dae12273d5332b5debe",
    )
    assert form["Signature"] == "cba5cf5ec4d4233d206b1b54951e3787350a642f"


def test_nested_parameters_are_flattened_as_ucloud_encodes_them() -> None:
    assert ucloud_params({"Gpu": 2, "Disks": [{"IsBoot": True, "Size": 100}], "Ratio": 2.0}) == {
        "Gpu": "2",
        "Disks.0.IsBoot": "true",
        "Disks.0.Size": "100",
        "Ratio": "2",
    }


def test_without_both_keys_the_page_is_read_and_the_crawl_says_it_is_unverified(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COMPSHARE_PUBLIC_KEY", PUBLIC)  # the private key missing
    outcome = drive("compshare")
    assert [r.meta["source_url"] for r in outcome.requests] == ["https://www.compshare.cn/price-list"]
    assert "no public copy exists" in outcome.stats[STAT_UNVERIFIED]
    assert outcome.status == "ok"


@pytest.mark.usefixtures("keys")
def test_with_both_keys_every_request_is_a_signed_form_post() -> None:
    outcome = drive("compshare")
    assert (outcome.status, outcome.error) == ("ok", None)
    assert STAT_UNVERIFIED not in outcome.stats
    for request in outcome.requests:
        fields = dict(parse_qsl(request.body.decode()))
        assert request.method == "POST" and request.meta["source_url"] == "https://api.compshare.cn/"
        assert request.headers["Content-Type"] == b"application/x-www-form-urlencoded"
        unsigned = {k: v for k, v in fields.items() if k not in ("PublicKey", "Signature")}
        assert fields["PublicKey"] == PUBLIC
        assert fields["Signature"] == signed(unsigned, PUBLIC, PRIVATE)["Signature"]
    actions = [dict(parse_qsl(r.body.decode()))["Action"] for r in outcome.requests]
    assert actions.count("DescribeAvailableCompShareInstanceTypes") == 2  # one per zone
    assert actions.count("GetCompShareInstancePrice") == 10  # one per (zone, type, size); Hidden skipped


@pytest.mark.usefixtures("keys")
def test_api_prices_are_per_machine_and_hour_with_the_sizes_gpus() -> None:
    offers = {o.offer_id: o for o in drive("compshare").offers}
    four = offers["cn-wlcb-01/4090/4x"]
    assert (four.gpu_model, four.gpu_count, four.price_amount, four.price_per, four.billing_period) == (
        "RTX 4090 24GB",
        4,
        7.68,
        "instance",
        "hour",
    )
    assert (four.region, four.extra["cpu"], four.extra["memory_gib"]) == ("华北二A", 64, 256)
    assert offers["cn-wlcb-01/H20/8x"].gpu_model == "H20 96GB"  # GraphicsMemory.Value 96
    assert offers["cn-wlcb-01/H20/8x"].available_gpus == 0  # Status Soldout
    assert offers["cn-wlcb-01/4090/1x"].available_gpus is None  # Normal: sellable, no count
    assert "cn-wlcb-01/A800/8x" not in offers  # Status Hidden


@pytest.mark.usefixtures("keys")
def test_an_api_error_code_fails_the_crawl() -> None:
    index = _api_index("DescribeCompShareSupportZone")
    body = {"RetCode": 171, "Message": "Signature VerifyAC Error"}
    outcome = drive("compshare", with_exchange(snapshot_of("compshare"), index, body=body))
    assert outcome.status == "failed"
    assert "error code 171: Signature VerifyAC Error" in outcome.error


@pytest.mark.usefixtures("keys")
def test_a_price_without_a_pay_as_you_go_detail_is_rejected() -> None:
    index = _api_index("GetCompShareInstancePrice", GpuType="3090")
    body = json_of(snapshot_of("compshare").exchanges[index])
    body["PriceDetails"] = [d for d in body["PriceDetails"] if d["ChargeType"] != "Postpay"]
    outcome = drive("compshare", with_exchange(snapshot_of("compshare"), index, body=body))
    assert [(r.reason, r.raw["offer_id"]) for r in outcome.rejected] == [
        ("price_missing", "cn-wlcb-01/3090/1x")
    ]


@pytest.mark.usefixtures("keys")
def test_one_api_price_answer_gives_an_offer_per_way_of_paying() -> None:
    outcome = drive("compshare")
    prices = {
        (o.offer_id, o.billing_period, o.pricing_type, o.min_term_periods): o.price_amount
        for o in outcome.offers
        if o.offer_id.startswith("cn-wlcb-01/4090/1x")
    }
    assert prices == {
        ("cn-wlcb-01/4090/1x", "hour", "on_demand", 1): 1.92,
        ("cn-wlcb-01/4090/1x/spot", "hour", "spot", 1): 1.31,
        ("cn-wlcb-01/4090/1x/day", "day", "daily_plan", 1): 42.0,
        ("cn-wlcb-01/4090/1x/month", "month", "monthly_plan", 1): 1168.0,
    }  # Dynamic (hourly prepaid, 1.92 too) is no offer
    month = next(o for o in outcome.offers if o.offer_id == "cn-wlcb-01/4090/1x/month")
    assert month.extra["system_disk_cny_per_month"] == 35.0
    forms = [dict(parse_qsl(r.body.decode())) for r in outcome.requests]
    assert not [f for f in forms if f["Action"] == "GetCompShareInstancePrice" and "ChargeType" in f]


@pytest.mark.usefixtures("keys")
def test_a_night_or_holiday_discount_is_kept_beside_the_price_not_taken_for_it() -> None:
    index = _api_index("GetCompShareInstancePrice", GpuType="3090")
    body = json_of(snapshot_of("compshare").exchanges[index])
    postpay = next(d for d in body["PriceDetails"] if d["ChargeType"] == "Postpay")
    postpay.update({"Instance": 1.08, "InstanceDiscountType": 1})  # 夜间折扣
    outcome = drive("compshare", with_exchange(snapshot_of("compshare"), index, body=body))
    offer = next(o for o in outcome.offers if o.offer_id == "cn-wlcb-01/3090/1x")
    assert (offer.price_amount, offer.extra["discounted_price"]) == (1.35, 1.08)


@pytest.mark.usefixtures("keys")
def test_a_spot_price_not_below_on_demand_and_a_mode_not_sold_give_no_offer() -> None:
    index = _api_index("GetCompShareInstancePrice", GpuType="3090")
    body = json_of(snapshot_of("compshare").exchanges[index])
    for detail in body["PriceDetails"]:
        if detail["ChargeType"] == "Spot":
            detail["Instance"] = 1.35  # = on demand: no spot market
    body["PriceDetails"] = [d for d in body["PriceDetails"] if d["ChargeType"] != "Day"]
    outcome = drive("compshare", with_exchange(snapshot_of("compshare"), index, body=body))
    ids = {o.offer_id for o in outcome.offers if o.offer_id.startswith("cn-wlcb-01/3090/1x")}
    assert ids == {"cn-wlcb-01/3090/1x", "cn-wlcb-01/3090/1x/month"}
    assert outcome.rejected == []


@pytest.mark.slow
def test_a_recording_keeps_no_key_and_replays_with_any_key(tmp_path: Path) -> None:
    record = tmp_path / "snapshot"
    with serving(snapshot_of("compshare")) as server:
        live = run_crawl(
            "compshare",
            tmp_path / "live",
            env=crawl_env("compshare", "recording-key"),
            settings=loopback_settings(server.url),
            record_dir=record,
        )
    assert live.status == "ok", live.error
    text = (record / SNAPSHOT_FILE).read_text("utf-8")
    assert "recording-key" not in text and "Signature" not in text
    forms = [e["request"]["form"] for e in json.loads(text)["exchanges"] if "form" in e["request"]]
    assert forms and all("PublicKey" not in form for form in forms)
    replay = run_crawl(
        "compshare", tmp_path / "replay", replay_dir=record, env=crawl_env("compshare", "other")
    )
    assert replay.status == "ok"
    assert sorted(map(json.dumps, read_jsonl(Path(replay.feed)))) == sorted(
        map(json.dumps, read_jsonl(Path(live.feed)))
    )

"""腾讯云 CVM spider: the TC3 signature against Tencent's published example, each request signed as it
leaves, the header-told calls, the charge types and terms, the sell status, GPU names and the
API's HTTP-200 error answer."""

from __future__ import annotations

import json
from typing import Any

import pytest
from crawl_harness import drive, json_of, snapshot_of, with_exchange
from scrapy.utils.test import get_crawler

from scrapers.middlewares import SigningMiddleware
from scrapers.spiders.tencentcloud import TencentcloudSpider, tc3_authorization

SECRET_ID, SECRET_KEY = "AKIDtest", "test-secret-key"


@pytest.fixture
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TENCENTCLOUD_SECRET_ID", SECRET_ID)
    monkeypatch.setenv("TENCENTCLOUD_SECRET_KEY", SECRET_KEY)


def test_the_signature_is_tencents_published_example() -> None:
    # www.tencentcloud.com/document/api/213/31575 (Signature v3; 签名方法 v3 on cloud.tencent.com), the
    # DescribeInstances example: its demo keys used as printed (asterisks included), its payload
    # byte for byte.
    payload = b'{"Limit": 1, "Filters": [{"Values": ["\\u672a\\u547d\\u540d"], "Name": "instance-name"}]}'
    authorization = tc3_authorization(
        "AKIDz8krbsJ5yKBZQpn74WFkmLPx3*******",
        "Gu5t9xGARNpq86cd98joQYCN3*******",
        "cvm.tencentcloudapi.com",
        "application/json; charset=utf-8",
        payload,
        1551113065,
    )
    assert authorization == (
        "TC3-HMAC-SHA256 Credential=AKIDz8krbsJ5yKBZQpn74WFkmLPx3*******/2019-02-25/cvm/tc3_request, "
        "SignedHeaders=content-type;host, "
        "Signature=2230eefd229f582d8b1b891af7107b91597240707d778ab3738f756258d7652c"
    )


@pytest.mark.usefixtures("keys")
def test_each_request_is_signed_over_the_bytes_it_sends_as_it_leaves() -> None:
    outcome = drive("tencentcloud")
    crawler = get_crawler(TencentcloudSpider)
    crawler.spider = TencentcloudSpider.from_crawler(crawler)
    quotas = next(
        r for r in outcome.requests if r.headers.get("X-TC-Action") == b"DescribeZoneInstanceConfigInfos"
    )
    request = quotas.copy()
    SigningMiddleware(crawler).process_request(request)
    timestamp = int(request.headers["X-TC-Timestamp"])
    expected = tc3_authorization(
        SECRET_ID, SECRET_KEY, "cvm.tencentcloudapi.com", "application/json", request.body, timestamp
    )
    assert request.headers["Authorization"].decode() == expected
    assert (
        request.headers["X-TC-Version"] == b"2017-03-12" and request.headers["X-TC-Region"] == b"ap-beijing"
    )
    assert json.loads(request.body)["Filters"][1] == {
        "Name": "instance-charge-type",
        "Values": ["POSTPAID_BY_HOUR", "SPOTPAID", "PREPAID"],
    }


@pytest.mark.usefixtures("keys")
def test_regions_are_told_apart_by_their_header_and_only_gpu_families_are_asked() -> None:
    outcome = drive("tencentcloud")
    calls = [
        (r.headers.get("X-TC-Action", b"").decode(), r.headers.get("X-TC-Region", b"").decode(), r.body)
        for r in outcome.requests
    ]
    assert calls[0] == ("DescribeRegions", "", b"{}")  # the region-less client, as SkyPilot's fetcher
    configs = sorted(region for action, region, _ in calls if action == "DescribeInstanceTypeConfigs")
    assert configs == ["ap-beijing", "ap-guangzhou", "ap-nanjing", "ap-shanghai"]  # not UNAVAILABLE ap-mumbai
    quotas = {region: json.loads(body) for action, region, body in calls if action.startswith("DescribeZone")}
    assert sorted(quotas) == ["ap-beijing", "ap-guangzhou"]  # nanjing and shanghai: no GPU type
    assert quotas["ap-beijing"]["Filters"][0] == {
        "Name": "instance-family",
        "Values": ["GN10Xp", "GN8", "GT4"],
    }


def _offers(outcome: Any) -> dict[str, Any]:
    return {o.offer_id: o for o in outcome.offers}


@pytest.mark.usefixtures("keys")
def test_a_prepaid_row_gives_a_month_a_year_and_three_years_and_an_hourly_row_one_hour() -> None:
    offers = _offers(drive("tencentcloud"))
    terms = {
        key.split("/")[1]: (o.price_amount, o.billing_period, o.pricing_type, o.min_term_periods)
        for key, o in offers.items()
        if key.startswith("PNV4.7XLARGE116@ap-guangzhou-6/")
    }
    assert terms == {
        "hour": (10.74, "hour", "on_demand", 1),
        "month-1": (4253.04, "month", "monthly_plan", 1),  # DiscountPrice: one month prepaid
        "year-1": (42360.28, "year", "reserved", 1),  # DiscountPriceOneYear: the year
        "year-3": (25518.24, "year", "reserved", 3),  # DiscountPriceThreeYear 76554.72 / 3
    }
    assert offers["PNV4.7XLARGE116@ap-guangzhou-6/year-3"].extra["term_total_price"] == 76554.72
    hour = offers["GN7.2XLARGE32@ap-guangzhou-7/hour"]
    assert (hour.price_amount, hour.extra["list_price"], hour.extra["discount"]) == (6.98, 8.73, 80.0)
    assert offers["GN7.2XLARGE32@ap-guangzhou-7/spot"].pricing_type == "spot"
    assert not [key for key in offers if "year-5" in key]  # five-year terms are not taken


@pytest.mark.usefixtures("keys")
def test_sell_status_and_gpu_names() -> None:
    offers = _offers(drive("tencentcloud"))
    sold_out = offers["GT4.41XLARGE948@ap-guangzhou-6/hour"]
    assert (sold_out.available_gpus, sold_out.gpu_count, sold_out.extra["status"]) == (0, 8, "SOLD_OUT")
    under = offers["PTX1.7XLARGE116@ap-guangzhou-7/hour"]
    assert (under.available_gpus, under.extra["status_category"]) == (None, "UnderStock")
    named = {
        o.offer_id.split("@")[0]: (o.gpu_name_raw, o.gpu_model, o.gpu_memory_gb) for o in offers.values()
    }
    assert named["GT4.4XLARGE96"] == ("A100", None, 40.0)  # GpuType + GpuMemory; SXM or PCIe unsaid
    assert named["PNV4.7XLARGE116"] == ("A10", "A10 24GB", 24.0)  # the family table
    assert named["GN10Xp.2XLARGE40"] == ("V100", None, None)  # 16 or 32 GB unsaid
    assert named["GN8.LARGE56"][:2] == ("P40", None)


def _answer(action: str, region: str) -> int:
    for index, exchange in enumerate(snapshot_of("tencentcloud").exchanges):
        if exchange.request_headers == {"x-tc-action": action, "x-tc-region": region}:
            return index
    raise AssertionError(f"no {action} {region} in the snapshot")


@pytest.mark.usefixtures("keys")
def test_an_error_answer_with_http_200_fails_that_region_and_the_crawl_goes_on() -> None:
    index = _answer("DescribeInstanceTypeConfigs", "ap-guangzhou")
    error = {"Response": {"Error": {"Code": "InternalError", "Message": "An internal error occurred"}}}
    outcome = drive("tencentcloud", with_exchange(snapshot_of("tencentcloud"), index, body=error))
    assert outcome.status == "partial"
    assert outcome.error.startswith(
        "the platform answered with error code 'InternalError': An internal error"
    )
    assert {o.region for o in outcome.offers} == {"ap-beijing"}
    first = _answer("DescribeRegions", "")
    signature = {"Response": {"Error": {"Code": "AuthFailure.SignatureFailure", "Message": "bad"}}}
    outcome = drive("tencentcloud", with_exchange(snapshot_of("tencentcloud"), first, body=signature))
    assert (outcome.status, outcome.offers) == ("failed", [])
    assert "AuthFailure.SignatureFailure" in outcome.error


@pytest.mark.usefixtures("keys")
def test_a_vgpu_share_of_a_card_is_refused() -> None:
    index = _answer("DescribeZoneInstanceConfigInfos", "ap-guangzhou")
    body = json_of(snapshot_of("tencentcloud").exchanges[index])
    row = next(r for r in body["Response"]["InstanceTypeQuotaSet"] if r["InstanceType"] == "GNV4.3XLARGE44")
    row["GpuCount"] = 0.25
    outcome = drive("tencentcloud", with_exchange(snapshot_of("tencentcloud"), index, body=body))
    assert [(r.reason, r.raw["InstanceType"]) for r in outcome.rejected] == [("gpu_slice", "GNV4.3XLARGE44")]
    assert "GNV4.3XLARGE44@ap-guangzhou-6/hour" not in _offers(outcome)

"""阿里云 ECS spider: the ACS3 signature against Alibaba's published example and the SDK's own test,
the key pair, the calls as the SDK sends them, masked GPU codes, vGPU slices, the spot rule, the
ways of paying and an error code that only means "not sold that way"."""

from __future__ import annotations

import hashlib
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest
from crawl_harness import drive, json_of, snapshot_of, with_exchange
from scrapy.http import Request
from scrapy.utils.test import get_crawler

from scrapers.middlewares import SigningMiddleware
from scrapers.spiders.alicloud import AlicloudSpider, acs3_authorization, canonical_query

KEY_ID, SECRET = "test-key-id", "test-secret"


@pytest.fixture
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALIBABA_CLOUD_ACCESS_KEY_ID", KEY_ID)
    monkeypatch.setenv("ALIBABA_CLOUD_ACCESS_KEY_SECRET", SECRET)


def test_the_signature_is_alibabas_published_v3_example() -> None:
    # help.aliyun.com/zh/sdk/product-overview/v3-request-structure-and-signature, the RPC example.
    headers = {
        "host": "ecs.cn-shanghai.aliyuncs.com",
        "x-acs-action": "RunInstances",
        "x-acs-version": "2014-05-26",
        "x-acs-date": "2023-10-26T10:22:32Z",
        "x-acs-signature-nonce": "3156853299f313e23d1673dc12e1703d",
        "x-acs-content-sha256": hashlib.sha256(b"").hexdigest(),
    }
    query = {"ImageId": "win2019_1809_x64_dtc_zh-cn_40G_alibase_20230811.vhd", "RegionId": "cn-shanghai"}
    authorization = acs3_authorization(
        "POST", query, headers, headers["x-acs-content-sha256"], "YourAccessKeyId", "YourAccessKeySecret"
    )
    assert authorization == (
        "ACS3-HMAC-SHA256 Credential=YourAccessKeyId,SignedHeaders=host;x-acs-action;"
        "x-acs-content-sha256;x-acs-date;x-acs-signature-nonce;x-acs-version,"
        "Signature=06563a9e1b43f5dfe96b81484da74bceab24a1d853912eee15083a6f0f3283c0"
    )


def test_the_signature_matches_the_sdks_own_test_of_repeated_headers_and_empty_values() -> None:
    # aliyun/darabonba-openapi python/tests/test_utils.py test_get_authorization @ 8b916ca8.
    authorization = acs3_authorization(
        "GET",
        {"test": "ok", "empty": ""},
        {"x-acs-test": "http", "x-acs-TEST": "https"},
        "55e12e91650d2fec56ec74e1d3e4ddbfce2ef3a65890c2a19ecf88a307e76a23",
        "acesskey",
        "secret",
    )
    assert authorization == (
        "ACS3-HMAC-SHA256 Credential=acesskey,SignedHeaders=x-acs-test,"
        "Signature=d16b30a7699ae9e43875b13195b2f81bcc3ed10c14a9b5eb780e51619aa50be1"
    )


def test_the_canonical_query_encodes_values_as_the_sdk_does() -> None:
    assert canonical_query({"b": "a b*~", "a": "x/y", "none": None}) == "a=x%2Fy&b=a%20b%2A~"


def test_without_the_secret_the_crawl_is_skipped_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALIBABA_CLOUD_ACCESS_KEY_ID", KEY_ID)
    monkeypatch.delenv("ALIBABA_CLOUD_ACCESS_KEY_SECRET", raising=False)
    outcome = drive("alicloud")
    message = "skipped: alicloud needs a login token; set ALIBABA_CLOUD_ACCESS_KEY_SECRET"
    assert (outcome.status, outcome.error, outcome.requests) == ("skipped", message, [])
    assert AlicloudSpider.skip_reason({}) == (
        "skipped: alicloud needs a login token; "
        "set ALIBABA_CLOUD_ACCESS_KEY_ID and ALIBABA_CLOUD_ACCESS_KEY_SECRET"
    )


@pytest.mark.usefixtures("keys")
def test_calls_are_bodiless_posts_with_the_action_in_a_header_signed_as_they_leave() -> None:
    outcome = drive("alicloud")
    first = outcome.requests[0]
    assert (first.method, first.body, first.headers.get("x-acs-action")) == (
        "POST",
        b"",
        b"DescribeInstanceTypes",
    )
    assert dict(parse_qsl(urlsplit(first.url).query)) == {"MinimumGPUAmount": "1", "MaxResults": "100"}
    assert b"Authorization" not in first.headers  # not yet: the signing middleware signs at sending
    crawler = get_crawler(AlicloudSpider)
    crawler.spider = AlicloudSpider.from_crawler(crawler)
    request = first.copy()
    SigningMiddleware(crawler).process_request(request)
    signed = {k.decode().lower(): v[0].decode() for k, v in request.headers.items()}
    names = "host;x-acs-action;x-acs-content-sha256;x-acs-date;x-acs-signature-nonce;x-acs-version"
    assert signed["authorization"].startswith(f"ACS3-HMAC-SHA256 Credential={KEY_ID},SignedHeaders={names},")
    headers = {name: signed[name] for name in names.split(";")[1:]} | {"host": "ecs.cn-hangzhou.aliyuncs.com"}
    expected = acs3_authorization(
        "POST", first.meta["query"], headers, headers["x-acs-content-sha256"], KEY_ID, SECRET
    )
    assert signed["authorization"] == expected
    again = first.copy()
    SigningMiddleware(crawler).process_request(again)
    assert (
        again.headers["x-acs-signature-nonce"] != request.headers["x-acs-signature-nonce"]
    )  # one nonce a try
    actions = [r.headers.get("x-acs-action").decode() for r in outcome.requests]
    assert actions[:4] == [
        "DescribeInstanceTypes",
        "DescribeInstanceTypes",
        "DescribeRegions",
        "DescribeAvailableResource",
    ]


def _offers(outcome: Any) -> dict[str, Any]:
    return {o.offer_id: o for o in outcome.offers}


@pytest.mark.usefixtures("keys")
def test_each_type_is_priced_by_the_hour_at_spot_by_the_month_and_the_year() -> None:
    offers = _offers(drive("alicloud"))
    kinds = {
        key.split("/")[1]: (o.price_amount, o.billing_period, o.pricing_type, o.min_term_periods)
        for key, o in offers.items()
        if key.startswith("ecs.gn8v.4xlarge@cn-hangzhou-b/")
    }
    assert kinds == {
        "hour": (36.4136, "hour", "on_demand", 1),  # DetailInfo instanceType TradePrice: disk apart
        "spot": (6.5777, "hour", "spot", 1),
        "month-1": (14419.79, "month", "monthly_plan", 1),
        "year-1": (147081.86, "year", "reserved", 1),  # the whole year, prepaid
    }
    hour = offers["ecs.gn8v.4xlarge@cn-hangzhou-b/hour"]
    assert (hour.price_currency, hour.price_per, hour.region, hour.extra["trade_price_with_disk"]) == (
        "CNY",
        "instance",
        "cn-hangzhou",
        36.4692,
    )


@pytest.mark.usefixtures("keys")
def test_masked_codes_stay_unknown_with_their_memory_and_named_cards_are_found() -> None:
    named = {o.gpu_name_raw: (o.gpu_model, o.gpu_memory_gb) for o in drive("alicloud").offers}
    assert named["H"] == (None, 96.0) and named["G49E"] == (None, 48.0) and named["L20N 48G"] == (None, 48.0)
    assert named["A100 80G"] == (None, 80.0)  # SXM or PCIe not stated
    assert named["L20"] == ("L20 48GB", 48.0) and named["Nvidia Tesla V100"] == ("V100 16GB", 16.0)


@pytest.mark.usefixtures("keys")
def test_slices_sold_out_types_a_flat_spot_answer_and_a_type_not_sold_yearly() -> None:
    outcome = drive("alicloud")
    assert (outcome.status, outcome.error) == ("ok", None)
    assert sorted((r.reason, r.raw.get("InstanceTypeId")) for r in outcome.rejected) == [
        ("gpu_slice", "ecs.sgn7i-vws-m2.xlarge"),  # A10*1/12: never priced
        ("not_sold", "ecs.gn7e-c16g1.32xlarge"),  # HTTP 400 InvalidInstanceType.ValueNotSupported
        ("spot_not_below_on_demand", "ecs.ebmgn6i.24xlarge"),
    ]
    asked = {dict(parse_qsl(urlsplit(r.url).query)).get("InstanceType") for r in outcome.requests}
    assert "ecs.sgn7i-vws-m2.xlarge" not in asked
    offers = _offers(outcome)
    assert offers["ecs.gn8is-4x.16xlarge@cn-hangzhou-b/hour"].available_gpus == 0  # WithoutStock
    assert offers["ecs.gn8is-4x.16xlarge@cn-hangzhou-b/spot"].available_gpus == 0
    assert offers["ecs.gn8is-4x.16xlarge@cn-hangzhou-b/month-1"].available_gpus is None  # prepaid: not asked
    assert offers["ecs.gn9g.4xlarge@cn-hangzhou-b/hour"].available_gpus is None  # ClosedWithStock: some


def _price_index(instance_type: str, unit: str) -> int:
    for index, exchange in enumerate(snapshot_of("alicloud").exchanges):
        query = dict(parse_qsl(urlsplit(exchange.url).query))
        price = (query.get("InstanceType"), query.get("PriceUnit"), "SpotStrategy" in query)
        if price == (instance_type, unit, False):
            return index
    raise AssertionError(f"no {unit} price of {instance_type} in the snapshot")


@pytest.mark.usefixtures("keys")
def test_another_error_code_is_a_failure_naming_it_and_the_crawl_goes_on() -> None:
    index = _price_index("ecs.gn8v.4xlarge", "Month")
    body = {
        "RequestId": "x",
        "Code": "Throttling.User",
        "Message": "Request was denied due to user flow control.",
    }
    outcome = drive("alicloud", with_exchange(snapshot_of("alicloud"), index, status=400, body=body))
    assert outcome.status == "partial"
    assert outcome.error.endswith(": Throttling.User: Request was denied due to user flow control.")
    assert "ecs.gn8v.4xlarge@cn-hangzhou-b/month-1" not in _offers(outcome)
    assert len(outcome.offers) == len(drive("alicloud").offers) - 1


@pytest.mark.usefixtures("keys")
def test_the_answers_currency_is_the_offers() -> None:
    index = _price_index("ecs.gn8te.4xlarge", "Hour")
    body = json_of(snapshot_of("alicloud").exchanges[index])
    body["PriceInfo"]["Price"]["Currency"] = "USD"  # an international-site account
    offers = _offers(drive("alicloud", with_exchange(snapshot_of("alicloud"), index, body=body)))
    assert offers["ecs.gn8te.4xlarge@cn-hangzhou-b/hour"].price_currency == "USD"
    assert offers["ecs.gn8te.4xlarge@cn-hangzhou-b/month-1"].price_currency == "CNY"


def test_a_request_without_its_action_header_finds_no_recorded_answer() -> None:
    snapshot = snapshot_of("alicloud")
    first = snapshot.exchanges[0]
    request = Request(first.url, method="POST", headers={"x-acs-action": "DescribeZones"})
    assert snapshot.find("POST", first.url, b"", request.headers) is None
    request = Request(first.url, method="POST", headers={"x-acs-action": "DescribeInstanceTypes"})
    assert snapshot.find("POST", first.url, b"", request.headers) is first

"""Snapshot matching: how a request finds its recorded answer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scrapy.http import Request, TextResponse
from scrapy.settings import Settings

from scrapers.platform import PlatformSpider
from scrapers.registry import PREVIOUS, fixture_dir, platforms, spider_class
from scrapers.replay import (
    RECORD_SETTING,
    SNAPSHOT_FILE,
    Snapshot,
    SnapshotStorage,
    recordable_headers,
    recorded_url,
    request_key,
)


def test_json_bodies_match_whatever_their_key_order_and_spacing() -> None:
    one = request_key(
        "post", "https://api.runpod.io/graphql", b'{"query": "q", "variables": {"a": 1, "b": 2}}'
    )
    two = request_key(
        "POST", "https://api.runpod.io/graphql", json.dumps({"variables": {"b": 2, "a": 1}, "query": "q"})
    )
    assert one == two


def test_the_host_is_not_compared_but_path_query_and_method_are() -> None:
    base = request_key("GET", "https://api.datacrunch.io/v1/instance-types?currency=usd", None)
    assert request_key("GET", "http://127.0.0.1:8123/v1/instance-types?currency=usd", b"") == base
    assert request_key("GET", "https://api.datacrunch.io/v1/instance-types?currency=eur", None) != base
    assert request_key("POST", "https://api.datacrunch.io/v1/instance-types?currency=usd", None) != base


def test_a_path_matches_however_its_characters_are_escaped() -> None:
    # The AWS pricing pages write parentheses as they are, Python's quote() escapes them.
    page = (
        "https://b0.p.awsstatic.com/pricing/ec2-ondemand-without-sec-sel/US%20East%20(Ohio)/Linux/index.json"
    )
    quoted = "https://b0.p.awsstatic.com/pricing/ec2-ondemand-without-sec-sel/US%20East%20%28Ohio%29/Linux/index.json"
    assert request_key("GET", page, None) == request_key("GET", quoted, None)
    other = "https://b0.p.awsstatic.com/pricing/ec2-ondemand-without-sec-sel/US%20West%20(Oregon)/Linux/index.json"
    assert request_key("GET", other, None) != request_key("GET", page, None)


def test_a_changed_request_finds_no_answer() -> None:
    snapshot = Snapshot.load(fixture_dir("vastai"))
    recorded = json.loads(snapshot.exchanges[0].body_key)
    assert snapshot.find("POST", "https://console.vast.ai/api/v0/bundles/", json.dumps(recorded)) is not None
    changed = {**recorded, "limit": 3000}
    assert snapshot.find("POST", "https://console.vast.ai/api/v0/bundles/", json.dumps(changed)) is None


def test_query_parameters_match_whatever_their_order() -> None:
    one = request_key(
        "GET", "https://api.runpod.io/v2/catalog/gpus?include=AVAILABILITY&count=2&cloud=SECURE", None
    )
    two = request_key(
        "GET", "https://api.runpod.io/v2/catalog/gpus?cloud=SECURE&count=2&include=AVAILABILITY", None
    )
    assert one == two
    assert request_key("GET", "https://api.runpod.io/v2/catalog/gpus?cloud=SECURE&count=4", None) != one


def test_form_bodies_match_sorted_and_without_their_credentials() -> None:
    # A signed UCloud request (compshare): the key and the signature change with the caller.
    mine = request_key("POST", "https://api.compshare.cn/", b"Zone=z1&Action=Go&PublicKey=mine&Signature=abc")
    yours = request_key(
        "POST", "https://api.compshare.cn/", "Action=Go&Signature=def&PublicKey=yours&Zone=z1"
    )
    assert mine == yours
    assert mine[2] == "form:Action=Go&Zone=z1"
    assert request_key("POST", "https://api.compshare.cn/", b"Action=Go&Zone=z2") != mine


def test_a_signed_query_matches_and_is_recorded_without_its_credentials() -> None:
    # Alibaba Cloud's RPC signature: key id, signature, nonce and time in the query.
    signed = (
        "https://ecs.aliyuncs.com/?Action=DescribePrice&RegionId=cn-hangzhou&AccessKeyId=mine"
        "&Signature=abc%3D&SignatureNonce=5f1&Timestamp=2026-11-30T06%3A00%3A00Z"
    )
    unsigned = "https://ecs.aliyuncs.com/?Action=DescribePrice&RegionId=cn-hangzhou"
    assert request_key("GET", signed, None) == request_key("GET", unsigned, None)
    assert recorded_url(signed) == unsigned
    assert recorded_url(unsigned) == unsigned


def test_a_signed_snapshot_request_is_found_whatever_the_key() -> None:
    snapshot = Snapshot.load(fixture_dir("compshare"))
    recorded = next(
        e for e in snapshot.exchanges if e.body_key.startswith("form:Action=DescribeCompShareSupportZone")
    )
    body = "Action=DescribeCompShareSupportZone&PublicKey=k&Signature=s"
    assert snapshot.find("POST", "https://api.compshare.cn/", body) is recorded


def test_headers_play_no_part_in_matching() -> None:
    snapshot = Snapshot.load(fixture_dir("datacrunch"))
    assert snapshot.find("GET", "https://api.verda.com/v1/instance-types", None) is snapshot.exchanges[0]


def _headered(folder: Path) -> Snapshot:
    """Two calls with the same path and body that only their headers tell apart (Tencent's TC3)."""
    entries = [
        {"action": "DescribeRegions", "region": None, "body_file": "regions.json"},
        {"action": "DescribeInstanceTypeConfigs", "region": "ap-beijing", "body_file": "beijing.json"},
        {"action": "DescribeInstanceTypeConfigs", "region": "ap-guangzhou", "body_file": "guangzhou.json"},
    ]
    exchanges = []
    for entry in entries:
        headers = {"X-TC-Action": entry["action"], "X-TC-Region": entry["region"] or ""}
        (folder / entry["body_file"]).write_text(json.dumps({"answer": entry["body_file"]}), "utf-8")
        exchanges.append(
            {
                "request": {
                    "method": "POST",
                    "url": "https://cvm.tencentcloudapi.com/",
                    "json": {},
                    "headers": headers,
                },
                "response": {"status": 200, "headers": {}, "body_file": entry["body_file"]},
            }
        )
    (folder / SNAPSHOT_FILE).write_text(json.dumps({"platform": "t", "exchanges": exchanges}), "utf-8")
    return Snapshot.load(folder)


def test_recorded_request_headers_tell_apart_calls_of_one_path_and_body(tmp_path: Path) -> None:
    snapshot = _headered(tmp_path)
    url, body = "https://cvm.tencentcloudapi.com/", b"{}"

    def answer(headers: dict[str, str]) -> str | None:
        found = snapshot.find("POST", url, body, headers)
        return None if found is None else json.loads(found.body)["answer"]

    # Names compare case-insensitively, whatever else is sent is not compared.
    assert (
        answer({"x-tc-action": "DescribeRegions", "Authorization": "TC3-HMAC-SHA256 ..."}) == "regions.json"
    )
    assert (
        answer({"X-TC-Action": "DescribeInstanceTypeConfigs", "X-TC-Region": "ap-guangzhou"})
        == "guangzhou.json"
    )
    assert (
        answer({"X-TC-Action": "DescribeInstanceTypeConfigs", "X-TC-Region": "ap-beijing"}) == "beijing.json"
    )
    # A header recorded with a value must be sent with it; one recorded "" must not be sent.
    assert answer({"X-TC-Action": "DescribeInstanceTypeConfigs"}) is None
    assert answer({"X-TC-Action": "DescribeRegions", "X-TC-Region": "ap-beijing"}) is None
    # Without the request's headers (a caller that has none): the first recorded for the key.
    assert snapshot.find("POST", url, body) is snapshot.exchanges[0]


class _Signed(PlatformSpider):
    name = "signed"
    replay_headers = ("X-TC-Action", "X-TC-Region")


def _store(storage: SnapshotStorage, spider: PlatformSpider, headers: dict[str, str], answer: bytes) -> None:
    request = Request("https://cvm.tencentcloudapi.com/", method="POST", body=b"{}", headers=headers)
    response = TextResponse(request.url, body=answer, headers={"Content-Type": "application/json"})
    storage.store_response(spider, request, response)


def test_a_recording_keeps_the_declared_headers_and_no_credential(tmp_path: Path) -> None:
    storage = SnapshotStorage(Settings({"HTTPCACHE_DIR": str(tmp_path), RECORD_SETTING: True}))
    spider = _Signed()
    storage.open_spider(spider)
    secret = {"Authorization": "TC3-HMAC-SHA256 Credential=AKIDsecret", "X-TC-Timestamp": "1551113065"}
    _store(storage, spider, {"X-TC-Action": "DescribeRegions", **secret}, b'{"regions": 1}')
    _store(storage, spider, {"X-TC-Action": "DescribeZones", "X-TC-Region": "ap-beijing", **secret}, b"{}")
    storage.close_spider(spider)
    text = (tmp_path / SNAPSHOT_FILE).read_text("utf-8")
    assert "AKIDsecret" not in text and "1551113065" not in text
    recorded = Snapshot.load(tmp_path)
    assert [e.request_headers for e in recorded.exchanges] == [
        {"x-tc-action": "DescribeRegions", "x-tc-region": ""},
        {"x-tc-action": "DescribeZones", "x-tc-region": "ap-beijing"},
    ]  # two answers, not one overwritten: same path and body
    regions = recorded.find(
        "POST", "https://cvm.tencentcloudapi.com/", b"{}", {"X-TC-Action": "DescribeRegions"}
    )
    assert regions is not None and regions.body == b'{"regions": 1}'


def test_a_spider_may_not_declare_a_credential_or_per_call_header_for_matching() -> None:
    with pytest.raises(ValueError, match="Authorization"):
        recordable_headers(("X-TC-Action", "Authorization"))
    with pytest.raises(ValueError, match="x-acs-signature-nonce"):
        recordable_headers(("x-acs-signature-nonce",))
    for name in platforms():
        recordable_headers(spider_class(name).replay_headers)  # every spider's declaration is fine


def test_every_exchange_of_a_header_matched_spider_records_its_headers() -> None:
    for name in platforms():
        declared = {header.lower() for header in spider_class(name).replay_headers}
        if not declared:
            continue
        for day in ("", PREVIOUS):
            folder = fixture_dir(name) / day
            if not (folder / SNAPSHOT_FILE).is_file():
                continue
            for exchange in Snapshot.load(folder).exchanges:
                # As a recording keeps them: each declared one ("" for one not sent), no other.
                assert set(exchange.request_headers) == declared, (name, day, exchange.url)

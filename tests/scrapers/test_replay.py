"""Snapshot matching: how a request finds its recorded answer."""

from __future__ import annotations

import json

from scrapers.registry import fixture_dir
from scrapers.replay import Snapshot, recorded_url, request_key


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

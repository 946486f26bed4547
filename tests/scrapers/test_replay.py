"""Snapshot matching: how a request finds its recorded answer."""

from __future__ import annotations

import json

from scrapers.registry import fixture_dir
from scrapers.replay import Snapshot, request_key


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

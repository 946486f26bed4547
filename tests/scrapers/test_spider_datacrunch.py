"""DataCrunch (Verda) spider: the SDK's host with the old one as a fallback, instance types,
on-demand and spot per instance."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from crawl_harness import drive, json_of, snapshot_of, with_exchange

from scrapers.replay import Exchange, Snapshot


def _rows() -> list[dict[str, Any]]:
    return json_of(snapshot_of("datacrunch").exchanges[0])


def _with(body: Any, **changes: Any) -> Any:
    return with_exchange(snapshot_of("datacrunch"), 0, body=body, **changes)


def test_the_sdks_host_is_asked_without_a_currency() -> None:
    outcome = drive("datacrunch")
    assert [r.meta["source_url"] for r in outcome.requests] == ["https://api.verda.com/v1/instance-types"]
    assert {o.source_url for o in outcome.offers} == {"https://api.verda.com/v1/instance-types"}


class _ByHost(Snapshot):
    """Replay snapshots do not compare hosts (a recording through an overridden origin replays);
    the fallback is the same path on another host, so this test snapshot tells hosts apart."""

    def find(self, method: str, url: str, body: bytes | str | None, headers: Any = None) -> Exchange | None:
        host = urlsplit(url).netloc
        return next((e for e in self.exchanges if urlsplit(e.url).netloc == host), None)


def _verda_failing(status: int, old_host_answers: bool) -> Snapshot:
    snapshot = snapshot_of("datacrunch")
    verda = snapshot.exchanges[0]
    failed = Exchange(verda.method, verda.url, verda.body_key, status, verda.headers, b'{"code": "x"}')
    old = Exchange("GET", "https://api.datacrunch.io/v1/instance-types", "", 200, verda.headers, verda.body)
    return _ByHost(snapshot.folder, snapshot.meta, [failed, old] if old_host_answers else [failed])


def test_when_the_verda_host_fails_the_old_host_is_asked() -> None:
    outcome = drive("datacrunch", _verda_failing(404, old_host_answers=True))
    assert (outcome.status, outcome.error) == ("ok", None)
    assert [r.meta["source_url"] for r in outcome.requests] == [
        "https://api.verda.com/v1/instance-types",
        "https://api.datacrunch.io/v1/instance-types",
    ]
    assert {o.source_url for o in outcome.offers} == {"https://api.datacrunch.io/v1/instance-types"}
    assert len(outcome.offers) == len(drive("datacrunch").offers)


def test_when_both_hosts_fail_the_crawl_fails_naming_the_old_one() -> None:
    outcome = drive("datacrunch", _verda_failing(404, old_host_answers=False))
    assert outcome.status == "failed"
    assert "https://api.datacrunch.io/v1/instance-types" in outcome.error


def test_a_server_error_of_the_verda_host_is_no_reason_to_ask_the_old_one() -> None:
    """HTTP 5xx: the host serves the list and is in trouble; a second host would double the load."""
    outcome = drive("datacrunch", _verda_failing(503, old_host_answers=True))
    assert outcome.status == "failed"
    assert [r.meta["source_url"] for r in outcome.requests] == ["https://api.verda.com/v1/instance-types"]
    assert "https://api.verda.com/v1/instance-types" in outcome.error


def test_on_demand_and_spot_per_instance() -> None:
    offers = [o for o in drive("datacrunch").offers if o.offer_id == "8H100.80S.176V"]
    assert {(o.pricing_type, o.price_amount, o.price_per, o.gpu_count, o.price_currency) for o in offers} == {
        ("on_demand", 26.0, "instance", 8, "USD"),
        ("spot", 12.96, "instance", 8, "USD"),
    }
    assert {o.gpu_model for o in offers} == {"H100 SXM 80GB"}


def test_a_zero_spot_price_is_no_spot_quote() -> None:
    pricing = {o.pricing_type for o in drive("datacrunch").offers if o.offer_id == "1RX7900XTX.16V"}
    assert pricing == {"on_demand"}


def test_cpu_instances_are_not_offers_and_stock_is_unknown() -> None:
    outcome = drive("datacrunch")
    assert "CPU.120V.480G" not in {o.offer_id for o in outcome.offers}
    assert {o.available_gpus for o in outcome.offers} == {None}


def test_gpu_memory_is_per_gpu() -> None:
    v100 = next(o for o in drive("datacrunch").offers if o.offer_id == "4V100.20V")
    # SXM2 or PCIe? The list does not say: the catalog's form-less row.
    assert (v100.gpu_memory_gb, v100.gpu_model, v100.gpu_form) == (16.0, "V100 16GB", None)


def test_new_cards_map_to_the_catalog() -> None:
    models = {o.offer_id: o.gpu_model for o in drive("datacrunch").offers}
    assert models["1B300.30V"] == "B300 279GB"  # "B300 SXM6 268GB"
    assert models["1RTXPRO6000.30V"] == "RTX PRO 6000 96GB"
    assert models["1RX7900XTX.16V"] is None

"""恒源云 gpushare spider: the token (missing, expired -> 401), free GPUs, the payg price, pages."""

from __future__ import annotations

from typing import Any

import pytest
from crawl_harness import drive, json_of, snapshot_of, with_exchange

from scrapers.registry import fixture_dir
from scrapers.replay import Snapshot

PAGE_1, PAGE_2 = 0, 1  # exchanges of the gpushare snapshot
TOKEN = "gpushare-test-token"


@pytest.fixture
def token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUSHARE_TOKEN", TOKEN)


def _first_machine(**changes: Any) -> Any:
    body = json_of(snapshot_of("gpushare").exchanges[PAGE_1])
    body["data"]["list"][0].update(changes)
    return with_exchange(snapshot_of("gpushare"), PAGE_1, body=body)


def _offer(outcome: Any, offer_id: str) -> Any:
    (offer,) = [o for o in outcome.offers if o.offer_id == offer_id]
    return offer


@pytest.mark.usefixtures("token")
def test_an_expired_token_is_a_clear_failure() -> None:
    snapshot = with_exchange(
        snapshot_of("gpushare"), PAGE_1, status=401, body={"code": 401, "msg": "token失效"}
    )
    outcome = drive("gpushare", snapshot)
    assert outcome.status == "failed"
    assert outcome.error.startswith(
        "gpushare refused GPUSHARE_TOKEN (HTTP 401 from https://api.gpushare.com/"
    )
    assert "it has expired or is wrong" in outcome.error
    assert TOKEN not in outcome.error


@pytest.mark.usefixtures("token")
def test_the_store_headers_and_the_bearer_token_are_sent() -> None:
    request = drive("gpushare").requests[0]
    assert request.headers["Authorization"] == f"Bearer {TOKEN}".encode()
    assert request.headers["Referer"] == b"https://www.gpushare.com/store"


@pytest.mark.usefixtures("token")
def test_pages_follow_the_total() -> None:
    urls = [r.meta["source_url"] for r in drive("gpushare").requests]
    assert [url.rsplit("&pn=", 1)[1] for url in urls] == ["1&ps=50", "2&ps=50"]  # total 54, ps 50


@pytest.mark.usefixtures("token")
def test_the_payg_sku_is_the_price_per_gpu_hour_and_other_skus_are_kept() -> None:
    offer = _offer(drive("gpushare"), "10001")
    assert (offer.price_amount, offer.price_currency, offer.price_per, offer.billing_period) == (
        1.78,
        "CNY",
        "gpu",
        "hour",
    )
    assert offer.extra["sku_prices"] == {"week": 280.0, "month": 1050.0}


@pytest.mark.usefixtures("token")
@pytest.mark.parametrize(
    ("changes", "free"),
    [
        ({"gpuNum": 8, "gpuUsed": 3}, 5),
        ({"gpuUsed": 8}, 0),
        ({"isOnline": False}, 0),
        ({"gpuUsed": None}, None),
    ],
)
def test_free_gpus_are_total_minus_used(changes: dict[str, Any], free: int | None) -> None:
    assert _offer(drive("gpushare", _first_machine(**changes)), "10001").available_gpus == free


@pytest.mark.usefixtures("token")
def test_names_map_and_unknown_cards_are_kept() -> None:
    outcome = drive("gpushare")
    assert _offer(outcome, "10051").gpu_model == "A800 PCIe 80GB"
    assert _offer(outcome, "10012").gpu_model == "RTX A4000 16GB"
    assert outcome.stats["gpuplan/unknown_gpus"] == {
        "NVIDIA GeForce RTX 4080 SUPER": 1,  # a 32 GB card: the machine name says so
        "NVIDIA GeForce RTX 5090 D": 1,
        "NVIDIA GeForce RTX 3090 Ti": 1,
    }


@pytest.mark.usefixtures("token")
def test_the_machine_name_tells_the_48gb_rtx_4090_apart() -> None:
    # 15683950475/gpu-monitor recorded these names; gpuName is the same "RTX 4090" for both.
    outcome = drive("gpushare")
    by_name = {o.extra["machine_name"]: o for o in outcome.offers}
    assert (by_name["4090 48G（南）"].gpu_model, by_name["4090 48G（南）"].gpu_memory_gb) == (
        "RTX 4090 48GB",
        48.0,
    )
    assert by_name["4090 24G（北）"].gpu_model == "RTX 4090 24GB"
    assert by_name["8# 4090*8"].gpu_model == "RTX 4090 24GB"  # no memory in the name: the 24 GB card
    assert (by_name["XS16-4080S32G-8"].gpu_model, by_name["XS16-4080S32G-8"].gpu_memory_gb) == (None, 32.0)


@pytest.mark.usefixtures("token")
def test_the_day_before_the_48gb_host_was_fully_rented() -> None:
    previous = drive("gpushare", Snapshot.load(fixture_dir("gpushare") / "previous"))
    by_name = {o.extra["machine_name"]: o for o in previous.offers}
    assert (by_name["4090 48G（南）"].available_gpus, by_name["4090 24G（北）"].price_amount) == (0, 1.88)


@pytest.mark.usefixtures("token")
def test_machines_without_a_payg_price_or_an_id_are_rejected() -> None:
    assert sorted(r.reason for r in drive("gpushare").rejected) == ["price_missing", "record_incomplete"]


@pytest.mark.usefixtures("token")
def test_a_failed_second_page_keeps_the_first() -> None:
    outcome = drive(
        "gpushare", with_exchange(snapshot_of("gpushare"), PAGE_2, status=500, body={"msg": "busy"})
    )
    assert outcome.status == "partial"
    assert len(outcome.offers) == 50  # page 1: every machine priced

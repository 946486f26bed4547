"""Sizes, tiers or terms listed off one stock count: each platform whose answer has that shape says
so (`pool_id`, or the machine's `machine_id`), and the warehouse's stock figure counts the stock
once (README, "How stock is counted"). Each case drives the spider over its fixture (the real
structure, its README), changed only where it needs the shape, and loads the offers into a
scratch warehouse: the sum is `price_history_daily.gpus_available`, which every stock figure shares
(`free_gpus`)."""

from __future__ import annotations

import dataclasses
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
import warehouse_template
from crawl_harness import Outcome, drive, json_of, snapshot_of, with_exchange

from scrapers.crawl.summary import CrawlSummary
from scrapers.replay import Exchange, Snapshot
from warehouse.loading import load_crawl


def gpus_available(outcome: Outcome, platform: str) -> dict[str, int | None]:
    """The day's free GPUs per GPU model once the crawl's offers are loaded."""
    with tempfile.TemporaryDirectory() as folder:
        feed = Path(folder) / f"{platform}.jsonl"
        feed.write_text("".join(json.dumps(dataclasses.asdict(o)) + "\n" for o in outcome.offers), "utf-8")
        summary = CrawlSummary(platform, "ok", None, None, None, len(outcome.offers), True, feed=feed)
        con = warehouse_template.scratch()
        result = load_crawl(con, summary.write(Path(folder) / f"{platform}.summary.json"))
        assert result.status == "ok", result.error
        return dict(con.execute("SELECT gpu_model, gpus_available FROM price_history_daily").fetchall())


def _naive(outcome: Outcome, gpu_model: str) -> int:
    return sum(o.available_gpus or 0 for o in outcome.offers if o.gpu_model == gpu_model)


def test_lambdas_sizes_of_one_card_in_one_region_are_one_pool(monkeypatch: pytest.MonkeyPatch) -> None:
    """The instance-types answer (token path): 1x H100 SXM with capacity in us-east-1 and us-west-3;
    here the 8x has capacity in us-east-1 too. us-east-1: at least 8 (not 9), us-west-3: 1."""
    monkeypatch.setenv("LAMBDA_API_KEY", "test-key")
    body = json_of(snapshot_of("lambda").exchanges[1])
    body["data"]["gpu_8x_h100_sxm5"]["regions_with_capacity_available"] = [
        {"name": "us-east-1", "description": "Virginia, USA"}
    ]
    outcome = drive("lambda", with_exchange(snapshot_of("lambda"), 1, body=body))
    h100 = [o for o in outcome.offers if o.gpu_model == "H100 SXM 80GB"]
    assert sorted((o.offer_id, o.pool_id, o.available_gpus) for o in h100) == [
        ("gpu_1x_h100_sxm5/us-east-1", "h100_sxm5/us-east-1", 1),
        ("gpu_1x_h100_sxm5/us-west-3", "h100_sxm5/us-west-3", 1),
        ("gpu_8x_h100_sxm5/us-east-1", "h100_sxm5/us-east-1", 8),
    ]
    assert _naive(outcome, "H100 SXM 80GB") == 10
    assert gpus_available(outcome, "lambda")["H100 SXM 80GB"] == 8 + 1


def test_cloudrifts_variants_of_one_type_in_one_datacenter_are_one_pool() -> None:
    """rtx59's 1-GPU variant with 2 free nodes in usny01_a01, its 2-GPU variant with 1: at least 2
    RTX 5090 free there (the variants may be the same machines), not 4."""
    body = json_of(snapshot_of("cloudrift").exchanges[0])
    (rtx59,) = [t for t in body["data"]["instance_types"] if t["name"] == "rtx59"]
    one, two = rtx59["variants"]
    one["available_nodes_per_dc"]["usny01_a01"] = 2
    two["available_nodes_per_dc"]["usny01_a01"] = 1
    outcome = drive("cloudrift", with_exchange(snapshot_of("cloudrift"), 0, body=body))
    assert _naive(outcome, "RTX 5090 32GB") == 2 + 2
    assert {o.pool_id for o in outcome.offers if o.gpu_model == "RTX 5090 32GB"} == {
        "usny01_a01/rtx59",
        "eu-central-it-gv-1/rtx59",
    }
    assert gpus_available(outcome, "cloudrift")["RTX 5090 32GB"] == 2


def test_an_autodl_machine_paid_by_the_hour_and_by_the_day_counts_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A machine row that also prices a day (`daily_price`): two offers, one machine."""
    monkeypatch.setenv("AUTODL_TOKEN", "eyJhbGciOiJIUzI1NiJ9.autodl-test-token")
    body = json_of(snapshot_of("autodl").exchanges[0])
    row = body["data"]["list"][0]
    row["daily_price"] = row["payg_price"] * 20
    outcome = drive("autodl", with_exchange(snapshot_of("autodl"), 0, body=body))
    machine = [o for o in outcome.offers if o.machine_id == str(row["machine_id"])]
    assert [o.billing_period for o in machine] == ["hour", "day"]
    (free,) = {o.available_gpus for o in machine}
    model = machine[0].gpu_model
    assert free and model
    others = sum(o.available_gpus or 0 for o in outcome.offers if o.gpu_model == model and o not in machine)
    assert _naive(outcome, model) == others + 2 * free
    assert gpus_available(outcome, "autodl")[model] == others + free


def test_a_sellers_quotes_of_one_gpu_share_the_stock_they_state(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A broker quoting 910B by the card and as an 8-card node, by the month, 64 in stock: 64."""
    content = (
        "seller,gpu,gpu_count,price,currency,price_per,billing_period,stock,region\n"
        "聚力,华为910B 64G,1,2139,CNY,gpu,month,64,贵阳\n"
        "聚力,华为910B 64G,8,16800,CNY,instance,month,64,贵阳\n"
    ).encode()
    path = tmp_path / "quotes.csv"
    path.write_bytes(content)
    monkeypatch.setenv("GPUPLAN_QUOTES_FILE", str(path))
    exchange = Exchange("GET", path.as_uri(), "", 200, {"Date": "Mon, 30 Nov 2026 06:00:00 GMT"}, content)
    outcome = drive("quotes", Snapshot(tmp_path, {"platform": "quotes"}, [exchange]))
    assert {(o.pool_id, o.available_gpus) for o in outcome.offers} == {("聚力/华为910B 64G/贵阳", 64)}
    model: Any = outcome.offers[0].gpu_model
    assert _naive(outcome, model) == 128
    assert gpus_available(outcome, "quotes")[model] == 64

"""One bad row costs that row: a row the answer got wrong is rejected with its reason, a row that
trips the spider's own code is a spider bug for that row, and the rest of the answer loads.

Each crawl is the real one, answered by the fault server from the platform's recorded snapshot with
one row changed (answer_changes.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from reliability.answer_changes import changed_json, served_crawl
from scrapers.crawl.summary import CrawlSummary
from scrapers.registry import fixture_dir

pytestmark = pytest.mark.faults


def _lines(path: Path | None) -> list[dict[str, Any]]:
    assert path is not None
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def _recorded_offers(platform: str) -> list[dict[str, Any]]:
    return _lines(fixture_dir(platform) / "expected.jsonl")


def _offers(summary: CrawlSummary) -> list[dict[str, Any]]:
    return _lines(summary.feed)


def _ids(offers: list[dict[str, Any]]) -> list[str]:
    return sorted(offer["offer_id"] for offer in offers)


def test_a_lium_node_with_negative_stock_costs_that_node(tmp_path: Path) -> None:
    """Before: `available_gpu_count` -1 on one node ended the answer there, and Lium's offers went from
    14 to 1."""
    node = "f092246d-5704-4c9e-b57f-7c0710a06deb"  # the recording's second node, an 8 x H200

    def negative(payload: Any) -> Any:
        nodes = [{**row, "available_gpu_count": -1} if row["id"] == node else row for row in payload["nodes"]]
        return {**payload, "nodes": nodes}

    summary, _ = served_crawl(tmp_path, "lium", changed_json(lambda e: True, negative))

    kept = [offer for offer in _recorded_offers("lium") if offer["machine_id"] != node]
    assert summary.status == "ok", summary.error
    assert sorted(offer["offer_id"] for offer in _offers(summary)) == sorted(
        offer["offer_id"] for offer in kept
    )
    rejected = [row for row in _lines(summary.rejected_feed) if row["reason"] == "row_unreadable"]
    assert [row["raw"]["row"]["id"] for row in rejected] == [node]
    assert rejected[0]["raw"]["problem"] == "stock count -1 is not a whole number >= 0"


def test_a_vultr_plan_that_trips_the_spider_is_a_bug_for_that_plan(tmp_path: Path) -> None:
    """Before: a bare-metal plan id saying 0 GPUs raised ZeroDivisionError and ended the answer: 20
    offers became 14, the error "spider bug" for the whole list."""
    plan = "vbm-112c-2048gb-8-h100-gpu"
    broken = "vbm-112c-2048gb-0-h100-gpu"

    def zero_gpus(payload: Any) -> Any:
        rows = [{**row, "id": broken} if row["id"] == plan else row for row in payload["plans_metal"]]
        return {**payload, "plans_metal": rows}

    summary, _ = served_crawl(tmp_path, "vultr", changed_json(lambda e: "plans-metal" in e.url, zero_gpus))

    kept = [offer for offer in _recorded_offers("vultr") if not offer["offer_id"].startswith(f"{plan}/")]
    assert summary.status == "partial"
    assert sorted(offer["offer_id"] for offer in _offers(summary)) == sorted(
        offer["offer_id"] for offer in kept
    )
    assert summary.stats["errors"] == [
        "spider bug: ZeroDivisionError: float division by zero in one of the plans "
        "(from https://api.vultr.com/v2/plans-metal?per_page=500); that row is rejected"
    ]
    rejected = [row for row in _lines(summary.rejected_feed) if row["reason"] == "spider_bug"]
    assert [row["raw"]["row"]["id"] for row in rejected] == [broken]

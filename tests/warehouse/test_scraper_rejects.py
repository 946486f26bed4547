"""The quotes a spider rejected (`<platform>.rejected.jsonl`) load into rejected_offers with the crawl."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import warehouse_template
from synthetic_crawls import WriteCrawl, synthetic_offer

from scrapers.crawl.runner import run_crawl
from warehouse.loading import load_crawl

REJECTS_SQL = "SELECT platform, reason, raw FROM rejected_offers ORDER BY reason"


@pytest.mark.slow  # a crawl in a child process
def test_a_bad_quote_line_lands_in_rejected_offers_with_its_line_numbered_reason(tmp_path: Path) -> None:
    quotes = tmp_path / "quotes.yaml"
    quotes.write_text(
        "- {seller: 经纪甲, gpu: L20, price: 1900, currency: CNY, billing_period: month}\n"
        "- {seller: 经纪甲, gpu: H20 141G, price: -5, currency: CNY, billing_period: month}\n"
        "- {seller: 经纪乙, gpu: H20 96G, price: 4464, currency: CNY, billing_period: month}\n",
        "utf-8",
    )
    crawl = run_crawl("quotes", tmp_path / "crawl", env={**os.environ, "GPUPLAN_QUOTES_FILE": str(quotes)})
    assert crawl.stats["rejected"] == 1
    con = warehouse_template.scratch()
    result = load_crawl(con, tmp_path / "crawl" / "quotes.summary.json")
    assert (result.status, result.offers_loaded, result.items_rejected) == ("partial", 2, 1)
    ((platform, reason, raw),) = con.execute(REJECTS_SQL).fetchall()
    assert (platform, reason) == ("quotes", "quote_invalid: quotes.yaml line 2: price must be > 0, got -5")
    assert json.loads(raw)["raw"] | {"problems": None} == {
        "file": "quotes.yaml",
        "line": 2,
        "seller": "经纪甲",
        "gpu": "H20 141G",
        "price": -5,
        "currency": "CNY",
        "billing_period": "month",
        "problems": None,
    }
    offers = con.execute("SELECT gpu_model FROM offers ORDER BY price_amount").fetchall()
    assert offers == [("L20 48GB",), ("H20 96GB",)]
    recorded = con.execute("SELECT status, items_rejected FROM crawl_runs").fetchall()
    assert recorded == [("partial", 1)]
    assert load_crawl(con, tmp_path / "crawl" / "quotes.summary.json").already_loaded
    assert con.execute("SELECT count(*) FROM rejected_offers").fetchall() == [(1,)]


def test_spider_rejects_are_counted_and_odd_lines_kept_the_runners_status_stands(
    write_crawl: WriteCrawl, tmp_path: Path
) -> None:
    rejected = tmp_path / "crawls" / "synthcloud.rejected.jsonl"
    absurd = {"platform": "synthcloud", "reason": "price_absurd", "raw": synthetic_offer(2)}
    rejected.parent.mkdir(parents=True)
    rejected.write_text(json.dumps(absurd) + "\n{truncated\n", "utf-8")
    summary = write_crawl([synthetic_offer(1)], stats={"rejected_feed": rejected.name})
    con = warehouse_template.scratch()
    result = load_crawl(con, summary)
    assert (result.status, result.offers_loaded, result.items_rejected, result.error) == ("ok", 1, 2, None)
    rows = con.execute(REJECTS_SQL).fetchall()
    assert [(reason, raw) for _, reason, raw in rows] == [
        ("in the spider's rejected feed but not a rejected-quote record", "{truncated"),
        ("price_absurd", json.dumps(absurd)),
    ]


def test_a_missing_rejected_feed_is_said_and_the_offers_still_load(
    write_crawl: WriteCrawl, tmp_path: Path
) -> None:
    summary = write_crawl([synthetic_offer(1)], stats={"rejected_feed": "gone.rejected.jsonl"})
    result = load_crawl(warehouse_template.scratch(), summary)
    gone = tmp_path / "crawls" / "gone.rejected.jsonl"
    assert (result.status, result.offers_loaded, result.items_rejected) == ("ok", 1, 0)
    assert result.error == f"rejected feed {gone} named by the summary does not exist"


def test_items_rejected_counts_both_the_error_the_loaders_own(
    write_crawl: WriteCrawl, tmp_path: Path
) -> None:
    rejected = tmp_path / "crawls" / "synthcloud.rejected.jsonl"
    rejected.parent.mkdir(parents=True)
    rejected.write_text(json.dumps({"reason": "price_absurd", "raw": synthetic_offer(2)}) + "\n", "utf-8")
    offers = [synthetic_offer(1), synthetic_offer(3, price_amount=-1)]
    result = load_crawl(
        warehouse_template.scratch(), write_crawl(offers, stats={"rejected_feed": rejected.name})
    )
    assert (result.status, result.offers_loaded, result.items_rejected) == ("partial", 1, 2)
    assert result.error == "1 item(s) rejected (price_amount must be > 0 ×1), see rejected_offers"

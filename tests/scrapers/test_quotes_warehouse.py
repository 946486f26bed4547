"""The quotes source end to end: a crawl's files loaded into a real, migrated warehouse."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
from crawl_helpers import crawl_env

from scrapers.crawl.runner import run_crawl
from warehouse.loading import load_crawl

HOURS_PER_MONTH = 730  # the warehouse's month (8760 h / 12)


@pytest.mark.slow
def test_the_articles_quotes_are_monthly_offers_with_per_gpu_hour_figures(
    writer_con: duckdb.DuckDBPyConnection, tmp_path: Path
) -> None:
    summary = run_crawl("quotes", tmp_path, offline=True, env=crawl_env())
    result = load_crawl(writer_con, tmp_path / "quotes.summary.json")
    assert (summary.status, result.status, result.offers_loaded, result.items_rejected) == ("ok", "ok", 3, 0)
    rows = writer_con.execute(
        "SELECT gpu_model, price_amount, price_currency, billing_period, min_term_periods, pricing_type, "
        "hourly_rentable, price_cny_per_gpu_hour, extra->>'seller', offer_id "
        "FROM offers ORDER BY price_amount"
    ).fetchall()
    assert [row[:7] for row in rows] == [
        ("Ascend 910B 64GB", 2139.0, "CNY", "month", 1, "monthly_plan", False),
        ("H20 96GB", 4464.0, "CNY", "month", 1, "monthly_plan", False),
        ("H800 80GB", 9993.0, "CNY", "month", 1, "monthly_plan", False),
    ]
    monthly_cny = (2139, 4464, 9993)
    assert [row[7] for row in rows] == pytest.approx([m / HOURS_PER_MONTH for m in monthly_cny], rel=1e-9)
    assert round(rows[0][7], 3) == 2.930
    # Chinese text survives JSONL and DuckDB unchanged.
    assert {row[8] for row in rows} == {"聚力算力平台"}
    assert rows[0][9] == "聚力算力平台/华为910B 64G/1x/1 month"


@pytest.mark.slow
def test_a_file_with_a_bad_line_loads_its_good_lines_as_a_partial_crawl(
    writer_con: duckdb.DuckDBPyConnection, tmp_path: Path
) -> None:
    quotes = tmp_path / "quotes.yaml"
    quotes.write_text(
        "- {seller: 经纪甲, gpu: L20, price: 1900, currency: CNY, billing_period: month, min_term: 3}\n"
        "- {seller: 经纪甲, gpu: H20 141G, price: -5, currency: CNY, billing_period: month}\n",
        "utf-8",
    )
    run_crawl("quotes", tmp_path / "crawl", env={**crawl_env(), "GPUPLAN_QUOTES_FILE": str(quotes)})
    result = load_crawl(writer_con, tmp_path / "crawl" / "quotes.summary.json")
    assert (result.status, result.offers_loaded) == ("partial", 1)
    assert result.error == "quotes.yaml line 2: price must be > 0, got -5"
    ((term, hourly, per_hour),) = writer_con.execute(
        "SELECT min_term_periods, hourly_rentable, price_cny_per_gpu_hour FROM offers"
    ).fetchall()
    assert (term, hourly) == (3, False)
    assert per_hour == pytest.approx(1900 / HOURS_PER_MONTH)

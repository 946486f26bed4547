"""docs/article-comparison.md is checked here: its tables of our numbers must be what we compute.

The offers are the seed article's broker quotes as the `quotes` source ships them
(scrapers/data/quotes.example.yaml: Ascend 910B 64G 2139 CNY, H20 96G 4464 CNY, H800 80G 9993 CNY
per card and month), crawled offline by the real spider and loaded by the real loader, so FX
conversion, the per-card rule and the monthly commitment all take part.
"""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path

import pandas as pd
import pytest
from warehouse_template import scratch

from scrapers.crawl.runner import run_crawl
from sizing.catalog import load_gpus
from sizing.planner import requirements
from warehouse import daily_plans
from warehouse.loading import load_crawl
from warehouse.requirements import requirements_frame

DOC = Path(__file__).parents[2] / "docs" / "article-comparison.md"
DAY = date(2026, 11, 30)
MODELS = ("7B", "13B", "30B", "70B")
METHODS = ("full", "full-bf16", "lora", "qlora")
ARTICLE_PRICES_CNY_PER_CARD_MONTH = {2139, 4464, 9993}  # 910B 64G, H20 96G, H800 80G


@pytest.fixture(scope="module")
def article_plans(tmp_path_factory) -> pd.DataFrame:
    folder = tmp_path_factory.mktemp("quotes")
    crawl = run_crawl("quotes", folder, offline=True)
    con = scratch()
    result = load_crawl(con, folder / "quotes.summary.json")
    assert (crawl.status, result.offers_loaded) == ("ok", len(ARTICLE_PRICES_CNY_PER_CARD_MONTH)), result
    quoted = con.execute("SELECT gpu_model, gpu_count, price_amount FROM offers").df()
    # the source still ships the article's quotes, per card and month
    assert set(quoted["price_amount"]) == ARTICLE_PRICES_CNY_PER_CARD_MONTH
    daily_plans.record_plan_crawls(
        con, DAY, pd.DataFrame([{"platform": "quotes", "crawl_id": result.crawl_id, "status": result.status}])
    )
    units = quoted[["gpu_model", "gpu_count"]]
    daily_plans.store_requirements(con, DAY, requirements_frame(MODELS, METHODS, load_gpus(), units))
    daily_plans.compute_candidates(con, DAY)
    daily_plans.compute_cheapest_plans(con, DAY)
    frame = daily_plans.plans_for_date(con, DAY)
    con.close()
    return frame.set_index(["model", "method", "ranking"])


def _doc_rows(table_name: str = "ours") -> list[list[str]]:
    """The cells of the table between the `<name>:begin` and `<name>:end` markers of the document."""
    text = DOC.read_text("utf-8")
    table = re.search(rf"<!-- {table_name}:begin -->(.*?)<!-- {table_name}:end -->", text, re.DOTALL)
    assert table, f"docs/article-comparison.md lost its {table_name}:begin/end markers"
    lines = [line for line in table.group(1).strip().splitlines() if line.startswith("|")][2:]
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in lines]


def _plan_cell(row: pd.Series) -> str:
    if row["status"] != "ok":
        return "no offer fits"
    return f"{row['gpu_model']} x {row['gpu_count']}"


def test_the_document_lists_every_model_and_method():
    assert [(cells[0], cells[1]) for cells in _doc_rows()] == [(m, x) for m in MODELS for x in METHODS]


@pytest.mark.parametrize("cells", _doc_rows(), ids=lambda cells: f"{cells[0]}-{cells[1]}")
def test_the_document_states_our_plans(article_plans, cells):
    model, method, rent_plan, cny_per_month, tokens_per_day, run_plan, run_days, run_cny = cells
    rent = article_plans.loc[(model, method, "lowest_rent")]
    run = article_plans.loc[(model, method, "lowest_run_total")]
    assert (rent_plan, run_plan) == (_plan_cell(rent), _plan_cell(run))
    if rent["status"] == "ok":
        assert cny_per_month == f"{rent['rent_cny_per_month']:,.0f}"
        assert tokens_per_day == f"{rent['tokens_per_day'] / 1e6:,.0f}"
        assert (run_days, run_cny) == (f"{run['train_days']:,.1f}", f"{run['total_cny']:,.0f}")
        assert run["total_usd"] <= rent["total_usd"]
    else:
        assert cny_per_month == tokens_per_day == run_days == run_cny == ""


@pytest.mark.parametrize("cells", _doc_rows("memory"), ids=lambda cells: cells[0])
def test_the_document_states_the_memory_one_gpu_would_need(cells):
    model, _article, *ours = cells
    expected = [
        f"{requirements(model, method, gpu_counts=(1,), gpus=['H800 SXM 80GB'])[0].per_gpu_memory_gb:.0f}"
        for method in METHODS
    ]
    assert ours == expected

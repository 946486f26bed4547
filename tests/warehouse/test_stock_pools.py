"""A stock pool counts once: offers that are sizes of one shared stock count (`pool_id`) count as
their largest listing, in every stock figure, whatever order they were loaded in.

The crawls are RunPod's bundled fixture days (scrapers/fixtures/runpod: the GraphQL answers in the
structure of dstackai/gpuhunt's and toolshedlabs' RunPod clients, README there), loaded as the spider
writes them (`expected.jsonl`, which the snapshot tests hold to the spider's output). RunPod reports
stock per GPU type and cloud; the spider asks it per pod size, and "in stock" for a size means at
least one pod of it can start. RTX 4090 on 2026-11-30: secure 1x, 2x, 4x, 8x in stock (at least 8
free, not 1+2+4+8 = 15), community 1x, 2x, 4x (at least 4, not 7): 12, where the plain sum said 22.
The day before, community 4x was sold out: 8 + 2 = 10.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import duckdb
import pandas as pd
import pytest
import warehouse_template
from synthetic_crawls import WriteCrawl, crawl_writer

from config.watches_file import StockWatch
from digest.watches import evaluate_watches
from scrapers.registry import fixture_dir
from warehouse import daily_plans, queries
from warehouse.loading import load_crawl

DAY = dt.date(2026, 11, 30)
BEFORE = DAY - dt.timedelta(days=1)
RTX_4090 = "RTX 4090 24GB"


def _fixture_offers(day: str) -> list[dict]:
    path = fixture_dir("runpod") / day / "expected.jsonl"
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def _load_day(
    con: duckdb.DuckDBPyConnection, write_crawl: WriteCrawl, day: dt.date, offers: list[dict]
) -> None:
    stamp = f"{day.isoformat()}T06:00:00Z"
    summary = write_crawl(
        offers, name=f"runpod-{day}", platform="runpod", started_at=stamp, finished_at=stamp
    )
    result = load_crawl(con, summary)
    assert result.status == "ok", result.error
    daily_plans.record_plan_crawls(
        con, day, pd.DataFrame([{"platform": "runpod", "crawl_id": result.crawl_id, "status": "ok"}])
    )


def _figures(con: duckdb.DuckDBPyConnection) -> dict[str, object]:
    """Every stock figure of RTX 4090 on both days, and of each GPU model on the latest."""
    daily = dict(
        con.execute(
            "SELECT observed_date, gpus_available FROM price_history_daily WHERE gpu_model = $gpu",
            {"gpu": RTX_4090},
        ).fetchall()
    )
    models = dict(
        con.execute(
            "SELECT gpu_model, gpus_available FROM price_history_daily WHERE observed_date = $day",
            {"day": DAY},
        ).fetchall()
    )
    free = {
        r["gpu_model"]: r["gpus_free"]
        for r in queries.records(con, "gpus/cheapest_offers", max_stale_hours=None)
    }
    watches = tuple(StockWatch(1, "4090", RTX_4090, n) for n in (12, 13))
    fired = [(w.now.value, w.fired) for w in evaluate_watches(con, watches, DAY, None)]
    changes = queries.records(con, "digest/stock_changes", previous_day=BEFORE, day=DAY)
    return {"daily": daily, "models": models, "gpus": free, "watches": fired, "changes": changes}


@pytest.fixture
def runpod_days(writer_con: duckdb.DuckDBPyConnection, write_crawl: WriteCrawl) -> duckdb.DuckDBPyConnection:
    _load_day(writer_con, write_crawl, BEFORE, _fixture_offers("previous"))
    _load_day(writer_con, write_crawl, DAY, _fixture_offers(""))
    return writer_con


def test_the_spider_says_which_pod_sizes_share_a_pool() -> None:
    rtx = [o for o in _fixture_offers("") if o["gpu_model"] == RTX_4090]
    assert sum(o["available_gpus"] for o in rtx) == 22, "the trap: every pod size counted as its own machine"
    pools = {o["pool_id"] for o in rtx}
    assert pools == {"NVIDIA GeForce RTX 4090/secure", "NVIDIA GeForce RTX 4090/community"}


def test_a_pool_counts_once_by_its_largest_size_in_every_stock_figure(
    runpod_days: duckdb.DuckDBPyConnection,
) -> None:
    figures = _figures(runpod_days)
    assert figures["daily"] == {DAY: 8 + 4, BEFORE: 8 + 2}
    assert figures["gpus"][RTX_4090] == 12
    assert figures["watches"] == [(12, True), (12, False)]
    units = runpod_days.execute(
        """
        WITH o AS (
            SELECT observed_date AS scope, * FROM offers WHERE gpu_model = $gpu AND observed_date = $day
        )
        SELECT machine, free_gpus FROM free_gpus('o') ORDER BY machine
        """,
        {"gpu": RTX_4090, "day": DAY},
    ).fetchall()
    assert units == [
        ("pool NVIDIA GeForce RTX 4090/community", 4),
        ("pool NVIDIA GeForce RTX 4090/secure", 8),
    ]


def test_every_figure_is_the_same_whatever_order_the_offers_were_loaded_in(
    runpod_days: duckdb.DuckDBPyConnection, tmp_path: Path
) -> None:
    """The later day first, each day's offers in reverse order: the same figures."""
    reversed_con = warehouse_template.scratch()
    write_reversed = crawl_writer(tmp_path / "reversed")
    _load_day(reversed_con, write_reversed, DAY, _fixture_offers("")[::-1])
    _load_day(reversed_con, write_reversed, BEFORE, _fixture_offers("previous")[::-1])
    assert _figures(reversed_con) == _figures(runpod_days)


def test_a_lium_node_offered_at_several_counts_counts_its_free_gpus_once(
    writer_con: duckdb.DuckDBPyConnection, write_crawl: WriteCrawl
) -> None:
    """Lium's fixture day (scrapers/fixtures/lium: the public nodes feed as gpuhunt records it): the
    H200 node of 8 with 5 free is offered at 1 to 5 GPUs (one machine_id), beside a 1-GPU H200 node.
    The B200 node with 3 free and a minimum order of 4 cannot be rented: 0."""
    offers = [
        json.loads(line)
        for line in (fixture_dir("lium") / "expected.jsonl").read_text("utf-8").splitlines()
        if line.strip()
    ]
    h200 = [o["available_gpus"] for o in offers if o["gpu_model"] == "H200 SXM 141GB"]
    assert sum(h200) == 5 * 5 + 1, "the trap: each of the node's five offers says its 5 free GPUs"
    summary = write_crawl(
        offers,
        name="lium",
        platform="lium",
        started_at="2026-11-30T06:00:00Z",
        finished_at="2026-11-30T06:00:00Z",
    )
    assert load_crawl(writer_con, summary).status == "ok"
    daily = dict(
        writer_con.execute(
            "SELECT gpu_model, gpus_available FROM price_history_daily WHERE observed_date = $day",
            {"day": DAY},
        ).fetchall()
    )
    assert (daily["H200 SXM 141GB"], daily["B200 180GB"]) == (5 + 1, 1 + 8 + 0)

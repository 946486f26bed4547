"""A crawl dated in the future: the crawling host's clock ahead.

Reproduced with SYNTHETIC crawls (reliability.synthetic_crawls) whose summaries carry the host's
wrong clock. Before: such a crawl stayed in `latest_offers` until that date (later crawls could
not displace it) and kept the freshness check green. Now a crawl counts as crawled no later than
it was loaded, a run dated ahead of now is not the latest, and the freshness check goes red.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
import pandas as pd
import pytest
from warehouse_template import migrated

from pipelines.checks import build_checks
from pipelines.resources import WarehouseResource
from reliability.synthetic_crawls import PLATFORM, write_crawl
from reliability.warehouse_files import settings_in
from warehouse import daily_plans, job_plans
from warehouse.engine import connect
from warehouse.loading import load_crawl

pytestmark = pytest.mark.faults

AHEAD = timedelta(days=3)


def _crawl(folder: Path, offers: int, finished_at: datetime) -> Path:
    """A SYNTHETIC crawl of `offers` offers whose summary says it finished at `finished_at`."""
    summary = write_crawl(folder, finished_at.date(), offers)
    record = json.loads(summary.read_text("utf-8"))
    record["started_at"] = (finished_at - timedelta(minutes=1)).isoformat()
    record["finished_at"] = finished_at.isoformat()
    summary.write_text(json.dumps(record), "utf-8")
    return summary


def _latest(con: duckdb.DuckDBPyConnection) -> list[tuple[str, int]]:
    return con.execute("SELECT crawl_id, count(*) FROM latest_offers GROUP BY ALL").fetchall()


def test_crawl_dated_ahead_is_displaced_by_the_next_crawl(tmp_path: Path) -> None:
    settings = settings_in(tmp_path)
    now = datetime.now(UTC)
    ahead = _crawl(tmp_path / "ahead", 30, now + AHEAD)  # its host's clock three days ahead
    with connect.writer(migrated(settings.warehouse)) as con:
        early = load_crawl(con, ahead)
    assert "clock was ahead" in (early.error or ""), early.error
    later = _crawl(tmp_path / "later", 12, datetime.now(UTC))  # the next crawl, on a right clock
    with connect.writer(settings.warehouse) as con:
        next_crawl = load_crawl(con, later)

    with connect.reader(settings.warehouse) as con:
        assert _latest(con) == [(next_crawl.crawl_id, 12)]
        [(total,)] = con.execute("SELECT count(*) FROM offers").fetchall()
    assert total == 42  # the crawl dated ahead keeps its offers as history


def test_run_dated_ahead_is_not_latest_and_freshness_fails(tmp_path: Path) -> None:
    settings = settings_in(tmp_path)
    now = datetime.now(UTC).replace(tzinfo=None)
    with connect.writer(migrated(settings.warehouse)) as con:
        good = load_crawl(con, _crawl(tmp_path / "yesterday", 8, datetime.now(UTC) - timedelta(hours=40)))
        # the whole host's clock was ahead as it crawled and loaded, and has been put right since
        runs = pd.DataFrame(
            {
                "crawl_id": ["synthetic-ahead"],
                "platform": [PLATFORM],
                "status": ["ok"],
                "offers_loaded": [5],
                "finished_at": [now + AHEAD],
                "loaded_at": [now + AHEAD],
            }
        )
        con.register("ahead_runs", runs)
        con.execute("INSERT INTO crawl_runs BY NAME SELECT * FROM ahead_runs")

    with connect.reader(settings.warehouse) as con:
        assert _latest(con) == [(good.crawl_id, 8)]
    (fresh,) = [check for check in build_checks([PLATFORM]) if check.check_key.name == "fresh"]
    result = fresh(warehouse=WarehouseResource.from_settings(settings))
    assert not result.passed
    assert result.metadata["stale_platforms"].value == PLATFORM


def test_plans_dated_ahead_are_not_the_latest_plans(tmp_path: Path) -> None:
    """The clock moved back a day: the plans made while it ran ahead stay stored, but the
    latest plans (`gpuplan plans`, `plans --gpu`, the job plans) are those of the newest day that
    has begun. Before: `max(plan_date)` kept the day ahead as "latest" until the clock reached it."""
    settings = settings_in(tmp_path)
    today = datetime.now(UTC).date()
    ahead = today + AHEAD
    with connect.writer(migrated(settings.warehouse)) as con:
        for day, platform in ((today, "today-cloud"), (ahead, "ahead-cloud")):
            con.execute(
                "INSERT INTO cheapest_plans (plan_date, model, method, ranking, status, platform, gpu_model,"
                " computed_at) VALUES ($d, '7B', 'lora', 'cost', 'ok', $p, 'H100 SXM 80GB', now())",
                {"d": day, "p": platform},
            )
            con.execute(
                "INSERT INTO job_plans (plan_date, job, rank, status, model, method, tokens, epochs,"
                " platform, computed_at) VALUES ($d, 'mine', 1, 'ok', '7B', 'lora', 1e9, 1, $p, now())",
                {"d": day, "p": platform},
            )
    with connect.reader(settings.warehouse) as con:
        latest = daily_plans.plans_for_date(con)
        assert set(latest["plan_date"].dt.date) == {today} and set(latest["platform"]) == {"today-cloud"}
        assert set(daily_plans.plans_for_gpu(con, "H100 SXM 80GB")["plan_date"].dt.date) <= {today}
        assert set(job_plans.job_plans_for_date(con)["platform"]) == {"today-cloud"}
        asked = daily_plans.plans_for_date(con, ahead)  # asked for by its date, the day ahead is there
        assert set(asked["platform"]) == {"ahead-cloud"}

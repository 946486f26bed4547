"""One plan sequence (warehouse.plan_sequence.plan_days): the daily graph, the Dagster `backfill_plans` job
and `gpuplan backfill` give a day the same cheapest plans, with the same settings.

The settings are not the defaults (GPUPLAN_DEFAULT_TOKENS of 3e9, two models), so a path that left
one of them to a default (as `gpuplan backfill` once did with the token budget) gives other
train_days and totals. The day's offers are the bundled offline snapshots of three platforms
(recorded responses, scrapers/fixtures), crawled once by the daily run; the two backfills plan the
same crawls on copies of that warehouse with its plans deleted.
"""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

import dagster as dg
import duckdb
import pytest

from config.settings import Settings
from pipelines.definitions import build_defs
from pipelines.runs import execute_day
from warehouse import backfill
from warehouse.engine import connect
from warehouse.plan_sequence import PlanOptions

pytestmark = pytest.mark.slow

DAY = dt.date(2026, 11, 30)
PLATFORMS = ["datacrunch", "quotes", "vastai"]
PLAN_TABLES = (
    "plan_requirements",
    "plan_candidates",
    "cheapest_plans",
    "plan_changes",
    "plan_excluded_offers",
)
PLANS = "SELECT * EXCLUDE (computed_at) FROM cheapest_plans ORDER BY ALL"


def _settings(root: Path, name: str) -> Settings:
    return Settings.from_env(
        {
            "GPUPLAN_WAREHOUSE": str(root / name / "warehouse.duckdb"),
            "GPUPLAN_CRAWL_DIR": str(root / "crawls"),  # one crawl folder: the same crawls for all
            "GPUPLAN_MODELS": "7B,70B",
            "GPUPLAN_DEFAULT_TOKENS": "3e9",
        }
    )


def _without_plans(daily: Settings, copy: Settings) -> list[dt.date]:
    """`copy`'s warehouse: the daily run's, its plans deleted; the days it had plans for."""
    copy.warehouse.parent.mkdir(parents=True)
    shutil.copyfile(connect.writer_path(daily.warehouse), connect.writer_path(copy.warehouse))
    with connect.writer(copy.warehouse) as con:
        days = [
            row[0]
            for row in con.execute("SELECT DISTINCT plan_date FROM cheapest_plans ORDER BY 1").fetchall()
        ]
        for table in PLAN_TABLES:
            con.execute(f"DELETE FROM {table}")  # table: a name of PLAN_TABLES
        assert con.execute("SELECT count(*) FROM cheapest_plans").fetchall() == [(0,)]
    return days


def _plans(settings: Settings) -> list[tuple[object, ...]]:
    with duckdb.connect(str(settings.warehouse), read_only=True) as con:
        return con.execute(PLANS).fetchall()


def test_the_daily_run_and_both_backfills_give_the_same_plans(tmp_path: Path) -> None:
    daily = _settings(tmp_path, "daily")
    result = execute_day(daily, DAY, offline=True, platforms=PLATFORMS, wait_s=30)
    assert result.failures == []
    expected = _plans(daily)
    with duckdb.connect(str(daily.warehouse), read_only=True) as con:
        tokens = con.execute("SELECT DISTINCT job_tokens FROM cheapest_plans WHERE status = 'ok'").fetchall()
    assert tokens == [(3e9,)]  # GPUPLAN_DEFAULT_TOKENS reached the daily tables

    cli = _settings(tmp_path, "cli")
    days = _without_plans(daily, cli)
    assert len(days) == 2 and days[-1] == DAY  # the offline run replays the day before first
    with connect.writer(cli.warehouse) as con:
        backfilled = backfill.backfill_plans(con, PlanOptions.from_settings(cli), days[0], days[-1])
    assert [day.day for day in backfilled] == days
    assert _plans(cli) == expected

    dagster = _settings(tmp_path, "dagster")
    _without_plans(daily, dagster)
    job = build_defs(dagster).resolve_job_def("backfill_plans")
    run = job.execute_in_process(
        instance=dg.DagsterInstance.ephemeral(),
        tags={
            "dagster/asset_partition_range_start": str(days[0]),
            "dagster/asset_partition_range_end": str(days[-1]),
        },
        raise_on_error=False,
    )
    assert run.success
    assert _plans(dagster) == expected

"""The Dagster `backfill_plans` job over a range of daily partitions, on real imported history.

Two real SkyPilot Lambda catalogs (2026-04-02 and 04-06, before and after Lambda's April price
rise) are imported with `scrapers.history`; there is no crawl folder for those days. The job then
runs the range 04-02..04-06 as one run, the way a backfill launched from the UI runs it (the
range tags Dagster sets on a single-run backfill): `offers` records the imported runs as the
days' crawls, the plan assets plan the two days with data, oldest first.
"""

from __future__ import annotations

import datetime as dt

import dagster as dg
import duckdb
import pandas as pd
import pytest
from warehouse_template import migrated

from config.settings import Settings
from pipelines.definitions import build_defs
from scrapers import registry
from scrapers.history import formats
from warehouse import backfill
from warehouse.engine import connect
from warehouse.imports import import_file
from warehouse.plan_sequence import PlanOptions

pytestmark = pytest.mark.slow

FIRST, LAST = dt.date(2026, 4, 2), dt.date(2026, 4, 6)
RANGE_TAGS = {
    "dagster/asset_partition_range_start": str(FIRST),
    "dagster/asset_partition_range_end": str(LAST),
}
PLAN_ASSETS = ("plan_requirements", "plan_candidates", "cheapest_plans", "plan_changes")
PLANS = (
    "SELECT plan_date, model, method, ranking, status, platform, offer_id, gpu_count, rent_usd_per_month "
    "FROM cheapest_plans ORDER BY ALL"
)


def _import(settings: Settings, catalogs) -> None:
    with connect.writer(migrated(settings.warehouse)) as con:
        for catalog in catalogs:
            assert import_file(con, formats.get("skypilot"), catalog).ok


@pytest.fixture(scope="module")
def backfilled(lambda_catalogs, tmp_path_factory):
    """The two catalogs imported, then the `backfill_plans` job run once over 04-02..04-06."""
    root = tmp_path_factory.mktemp("backfill-job")
    settings = Settings.from_env(
        {"GPUPLAN_WAREHOUSE": str(root / "warehouse.duckdb"), "GPUPLAN_CRAWL_DIR": str(root / "crawls")}
    )
    _import(settings, lambda_catalogs[:2])
    defs = build_defs(settings)
    result = defs.resolve_job_def("backfill_plans").execute_in_process(
        instance=dg.DagsterInstance.ephemeral(), tags=RANGE_TAGS, raise_on_error=False
    )
    return settings, defs, result


def test_the_job_selects_no_crawl_and_backfills_a_range_in_one_run(backfilled) -> None:
    _, defs, _ = backfilled
    job = defs.resolve_job_def("backfill_plans")
    keys = {key.to_user_string() for key in job.asset_layer.executable_asset_keys}
    assert keys == {"gpus", "offers", *PLAN_ASSETS}
    # Dagster launches a backfill of this job (from its page or the asset graph) as one run per range
    assert job.backfill_policy == dg.BackfillPolicy.single_run()


def test_imported_days_get_plans_and_the_april_rise_is_a_change(backfilled) -> None:
    settings, _, result = backfilled
    assert result.success
    with duckdb.connect(str(settings.warehouse), read_only=True) as con:
        recorded = con.execute(
            "SELECT plan_date, platform, source FROM plan_crawls JOIN crawl_runs USING (crawl_id, platform) "
            "ORDER BY plan_date"
        ).fetchall()
        per_day = con.execute(
            "SELECT plan_date, count(*) FROM cheapest_plans GROUP BY ALL ORDER BY 1"
        ).fetchall()
        moves = con.execute(
            "SELECT change_date, change_type, count(*) FROM plan_changes GROUP BY ALL ORDER BY ALL"
        ).fetchall()
    # offers took the imported runs for the two days with data; the three days between have none
    assert recorded == [(FIRST, "lambda", "import:skypilot"), (LAST, "lambda", "import:skypilot")]
    asks = len(settings.models) * len(settings.methods) * 2
    assert per_day == [(FIRST, asks), (LAST, asks)]
    # 04-06 compares with 04-02, the previous day with plans: Lambda's rise made every plan dearer
    assert moves == [(LAST, "price_up", asks)]
    offers = result.asset_materializations_for_node("offers")[-1].metadata
    assert "import:skypilot" in offers["crawls"].value
    # one materialization per day of the range, each with the run's metadata
    changes = [
        m.metadata
        for m in result.asset_materializations_for_node("plans")
        if m.asset_key.path == ["plan_changes"]
    ][-1]
    assert changes["days_planned"].value == 2
    assert changes["days_without_data"].value == "2026-04-03, 2026-04-04, 2026-04-05"
    checks = {e.check_name: e.passed for e in result.get_asset_check_evaluations()}
    # watches: none configured, so none fired; imported days are no crawls, so nothing drifts
    drift = {f"{platform}_drift": True for platform in registry.platforms()}
    assert checks == {"prices_believable": True, "every_ask_has_a_plan": True, "watches": True, **drift}


def test_the_job_and_gpuplan_backfill_compute_the_same_plans(backfilled, lambda_catalogs, tmp_path) -> None:
    settings, _, _ = backfilled
    cli = Settings.from_env({"GPUPLAN_WAREHOUSE": str(tmp_path / "cli.duckdb")})
    _import(cli, lambda_catalogs[:2])
    with connect.writer(cli.warehouse) as con:
        days = backfill.backfill_plans(con, PlanOptions.from_settings(cli), FIRST, LAST)
    assert [day.day for day in days] == [FIRST, LAST]
    tables = {}
    for name, path in (("job", settings.warehouse), ("cli", cli.warehouse)):
        with duckdb.connect(str(path), read_only=True) as con:
            tables[name] = (
                con.execute(PLANS).df(),
                con.execute(
                    "SELECT change_date, model, method, ranking, change_type, new_value FROM plan_changes "
                    "ORDER BY ALL"
                ).df(),
            )
    for job_frame, cli_frame in zip(tables["job"], tables["cli"], strict=True):
        pd.testing.assert_frame_equal(job_frame, cli_frame)

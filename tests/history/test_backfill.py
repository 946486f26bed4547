"""Backfilled plans on real imported history: the pipeline's own plan functions, day by day, oldest first."""

from __future__ import annotations

import datetime as dt
import subprocess
import sys

import pytest
import warehouse_template

from config.settings import Settings
from scrapers.history import formats
from sizing.catalog import load_gpus
from warehouse import queries
from warehouse.backfill import backfill_plans
from warehouse.imports import import_file
from warehouse.plan_sequence import PlanOptions
from warehouse.requirements import requirements_frame

pytestmark = pytest.mark.slow  # backfills real history

SETTINGS = Settings.from_env({})  # the default models (7B..70B) and methods (full, lora, qlora)
DAYS = [dt.date(2026, 4, 2), dt.date(2026, 4, 6), dt.date(2026, 4, 20), dt.date(2026, 5, 7)]
PLAN_COLUMNS = (
    "plan_date, model, method, ranking, status, platform, offer_id, gpu_model, gpu_count, rent_usd_per_month"
)


def _backfill(con, first, last):
    return backfill_plans(con, PlanOptions.from_settings(SETTINGS), first, last)


def _lambda_warehouse(lambda_catalogs):
    con = warehouse_template.scratch()
    for catalog in lambda_catalogs:
        import_file(con, formats.get("skypilot"), catalog)
    return con


@pytest.fixture(scope="module")
def backfilled(lambda_catalogs):
    con = _lambda_warehouse(lambda_catalogs)
    return con, _backfill(con, None, None)


def test_every_day_with_data_gets_its_plans(backfilled) -> None:
    con, days = backfilled
    assert [day.day for day in days] == DAYS
    per_day = len(SETTINGS.models) * len(SETTINGS.methods) * 2  # two rankings
    assert all(day.plans == per_day and day.platforms == 1 for day in days)
    assert con.execute("SELECT DISTINCT platform FROM plan_crawls").fetchall() == [("lambda",)]


def test_the_april_price_rise_is_a_plan_change(backfilled) -> None:
    con, days = backfilled
    assert days[0].changes == 0  # nothing before the first day
    moves = con.execute(
        "SELECT change_type, count(*) FROM plan_changes WHERE change_date = DATE '2026-04-06' GROUP BY ALL"
    ).fetchall()
    # Lambda raised every price 13-50 % between the 2 and 6 April catalogs: every plan got dearer
    assert moves == [("price_up", days[1].plans)]


def test_requirements_are_the_pipelines_for_each_day(backfilled) -> None:
    con, _ = backfilled
    gpus = load_gpus()
    for day in DAYS:
        units = queries.frame(con, "plans/unit_sizes", plan_date=day)
        expected = requirements_frame(SETTINGS.models, SETTINGS.methods, gpus, units)
        stored = con.execute(
            "SELECT model, method, gpu_model, gpu_count, fits, tokens_per_second FROM plan_requirements "
            "WHERE plan_date = $d ORDER BY ALL",
            {"d": day},
        ).fetchall()
        columns = ["model", "method", "gpu_model", "gpu_count", "fits", "tokens_per_second"]
        assert stored == sorted(expected[columns].itertuples(index=False, name=None))


def test_backfilling_again_changes_nothing(backfilled) -> None:
    con, _ = backfilled
    before = con.execute(f"SELECT {PLAN_COLUMNS} FROM cheapest_plans ORDER BY ALL").fetchall()
    changes = con.execute(
        "SELECT change_date, model, method, ranking, change_type FROM plan_changes ORDER BY ALL"
    )
    changes_before = changes.fetchall()
    _backfill(con, None, None)
    assert con.execute(f"SELECT {PLAN_COLUMNS} FROM cheapest_plans ORDER BY ALL").fetchall() == before
    again = con.execute(
        "SELECT change_date, model, method, ranking, change_type FROM plan_changes ORDER BY ALL"
    )
    assert again.fetchall() == changes_before


def test_crawls_the_pipeline_recorded_for_a_day_are_kept(lambda_catalogs) -> None:
    con = _lambda_warehouse(lambda_catalogs)
    # say the pipeline planned 20 April from the 6 April run: the backfill keeps that record
    april_6 = con.execute("SELECT crawl_id FROM crawl_runs WHERE started_at = DATE '2026-04-06'").fetchall()[
        0
    ][0]
    con.execute(
        "INSERT INTO plan_crawls (plan_date, platform, crawl_id, status, recorded_at) "
        "VALUES (DATE '2026-04-20', 'lambda', $id, 'ok', now()::TIMESTAMP)",
        {"id": april_6},
    )
    backfill_plans(
        con,
        PlanOptions.from_settings(SETTINGS),
        dt.date(2026, 4, 20),
        dt.date(2026, 4, 20),
    )
    recorded = con.execute("SELECT plan_date, crawl_id FROM plan_crawls ORDER BY plan_date").fetchall()
    assert recorded == [(dt.date(2026, 4, 20), april_6)]


def test_backfilling_earlier_days_refreshes_the_next_days_changes(lambda_catalogs, backfilled) -> None:
    full, _ = backfilled
    con = _lambda_warehouse(lambda_catalogs)
    backfill_plans(
        con,
        PlanOptions.from_settings(SETTINGS),
        dt.date(2026, 4, 20),
        dt.date(2026, 5, 7),
    )
    query = "SELECT model, method, ranking, change_type FROM plan_changes WHERE change_date = $d ORDER BY ALL"
    assert con.execute(query, {"d": DAYS[2]}).fetchall() == []  # no day before it yet
    days = backfill_plans(
        con,
        PlanOptions.from_settings(SETTINGS),
        dt.date(2026, 4, 1),
        dt.date(2026, 4, 6),
    )
    assert [day.day for day in days] == DAYS[:2]
    # 20 April now compares with 6 April, exactly as in a backfill of all four days at once
    expected = full.execute(query, {"d": DAYS[2]}).fetchall()
    assert expected and con.execute(query, {"d": DAYS[2]}).fetchall() == expected
    assert (
        backfill_plans(
            con,
            PlanOptions.from_settings(SETTINGS),
            dt.date(2025, 1, 1),
            dt.date(2025, 12, 31),
        )
        == []
    )


def test_runpods_placeholder_prices_make_no_plan_on_real_history(sample) -> None:
    observations = sample("price_history/cherielilili_observations_2026-02-11_to_2026-07-20.csv")
    con = warehouse_template.scratch()
    import_file(con, formats.get("observations"), observations)
    days = backfill_plans(
        con,
        PlanOptions.from_settings(SETTINGS),
        dt.date(2026, 4, 16),
        dt.date(2026, 4, 17),
    )
    # From 04-16 RunPod answered 0.5 USD per GPU-hour for its sold-out MI300X (1, 2, 4, 8 GPUs) and
    # H200 (1, 2, 8): the other platforms' median was about 2.7-3.5. Those 7 offers a day are left out.
    excluded = con.execute(
        "SELECT platform, gpu_model, price_usd_per_gpu_hour, count(*) FROM plan_excluded_offers GROUP BY ALL "
        "ORDER BY ALL"
    ).fetchall()
    assert excluded == [("runpod", "H200 SXM 141GB", 0.5, 6), ("runpod", "MI300X 192GB", 0.5, 8)]
    assert [day.offers_excluded for day in days] == [7, 7]
    on_placeholder = con.execute(
        "SELECT count(*) FROM cheapest_plans "
        "WHERE platform = 'runpod' AND rent_usd_per_hour = 0.5 * gpu_count"
    )
    assert on_placeholder.fetchall() == [(0,)]
    # the 70B plans that took RunPod's MI300X at 0.5 now rent a real one
    real = con.execute(
        "SELECT DISTINCT platform, rent_usd_per_hour / gpu_count FROM cheapest_plans "
        "WHERE model = '70B' AND gpu_model = 'MI300X 192GB'"
    ).fetchall()
    assert real and all(platform != "runpod" and usd > 1.0 for platform, usd in real)
    # left out of plans, kept in the history
    assert con.execute(
        "SELECT count(*) FROM offers WHERE platform = 'runpod' AND price_usd_per_gpu_hour = 0.5 "
        "AND observed_date BETWEEN DATE '2026-04-16' AND DATE '2026-04-17'"
    ).fetchall() == [(14,)]


# Runs `gpuplan backfill` (with every command loaded, as a user's start does) on a warehouse holding
# one imported catalog, then says which modules of Dagster or of pipelines/ got imported.
BACKFILL_ALONE = """
import sys
from typer.testing import CliRunner
from gpuplan.cli import app
runner = CliRunner()
for args in (["import", "skypilot", sys.argv[2]], ["backfill"]):
    result = runner.invoke(app, ["--warehouse", sys.argv[1], *args])
    assert result.exit_code == 0, result.output
print(sorted({name.split(".")[0] for name in sys.modules} & {"dagster", "pipelines"}))
"""


def test_backfilling_needs_neither_dagster_nor_pipelines(lambda_catalogs, tmp_path) -> None:
    # STYLE: pipelines/ is Dagster wiring that nothing imports; the backfill and its sizing live in warehouse/
    done = subprocess.run(
        [sys.executable, "-c", BACKFILL_ALONE, str(tmp_path / "w.duckdb"), str(lambda_catalogs[0])],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"

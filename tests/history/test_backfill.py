"""Backfilled plans on real imported history: the pipeline's own plan functions, day by day, oldest first."""

from __future__ import annotations

import datetime as dt

import pytest

from gpuplan.commands.backfill import backfill_plans
from gpuplan.imports import formats
from gpuplan.imports.runs import import_file
from gpuplan.settings import Settings
from pipelines.assets.plans import requirements_frame
from sizing.catalog import load_gpus
from warehouse import connect, queries

SETTINGS = Settings.from_env({})  # the default models (7B..70B) and methods (full, lora, qlora)
DAYS = [dt.date(2026, 4, 2), dt.date(2026, 4, 6), dt.date(2026, 4, 20), dt.date(2026, 5, 7)]
PLAN_COLUMNS = (
    "plan_date, model, method, ranking, status, platform, offer_id, gpu_model, gpu_count, rent_usd_per_month"
)


def _lambda_warehouse(lambda_catalogs):
    con = connect.in_memory()
    for catalog in lambda_catalogs:
        import_file(con, formats.get("skypilot"), catalog)
    return con


@pytest.fixture(scope="module")
def backfilled(lambda_catalogs):
    con = _lambda_warehouse(lambda_catalogs)
    return con, backfill_plans(con, SETTINGS, None, None)


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
        units = queries.frame(con, "plan_unit_sizes", plan_date=day)
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
    backfill_plans(con, SETTINGS, None, None)
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
        "INSERT INTO plan_crawls VALUES (DATE '2026-04-20', 'lambda', $id, 'ok', now()::TIMESTAMP)",
        {"id": april_6},
    )
    backfill_plans(con, SETTINGS, dt.date(2026, 4, 20), dt.date(2026, 4, 20))
    recorded = con.execute("SELECT plan_date, crawl_id FROM plan_crawls ORDER BY plan_date").fetchall()
    assert recorded == [(dt.date(2026, 4, 20), april_6)]


def test_backfilling_earlier_days_refreshes_the_next_days_changes(lambda_catalogs, backfilled) -> None:
    full, _ = backfilled
    con = _lambda_warehouse(lambda_catalogs)
    backfill_plans(con, SETTINGS, dt.date(2026, 4, 20), dt.date(2026, 5, 7))
    query = "SELECT model, method, ranking, change_type FROM plan_changes WHERE change_date = $d ORDER BY ALL"
    assert con.execute(query, {"d": DAYS[2]}).fetchall() == []  # no day before it yet
    days = backfill_plans(con, SETTINGS, dt.date(2026, 4, 1), dt.date(2026, 4, 6))
    assert [day.day for day in days] == DAYS[:2]
    # 20 April now compares with 6 April, exactly as in a backfill of all four days at once
    expected = full.execute(query, {"d": DAYS[2]}).fetchall()
    assert expected and con.execute(query, {"d": DAYS[2]}).fetchall() == expected
    assert backfill_plans(con, SETTINGS, dt.date(2025, 1, 1), dt.date(2025, 12, 31)) == []

"""The one change detector (queries/plans/changes.sql) and migration 091, which made plan_changes the
one table of both subjects' changes. Offers are SYNTHETIC (synthetic_offers.py)."""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

import duckdb
import pandas as pd
import pytest
from synthetic_offers import DAY1, DAY2
from synthetic_offers import crawl as _crawl
from synthetic_offers import offer as _offer
from synthetic_offers import plan as _plan
from warehouse_template import scratch

from warehouse import connect, plans
from warehouse.migrate import available, migrate

NOW = dt.datetime(2026, 12, 1, 6, 0)


def test_a_move_of_exactly_the_threshold_is_a_change(tmp_path: Path) -> None:
    """'At least' price_move_pct, as the README says (the daily plans once counted 'more than')."""
    with scratch() as con:
        _crawl(con, DAY1, "cloud", [_offer("cloud", "h100", "H100 SXM 80GB", 1.0)])
        _plan(con, DAY1, {("7B", "full"): 70})
        _crawl(con, DAY2, "cloud", [_offer("cloud", "h100", "H100 SXM 80GB", 1.25)])  # +25.0 % exactly
        _plan(con, DAY2, {("7B", "full"): 70})
        assert plans.compute_plan_changes(con, DAY2, 25.0) == 2  # both rankings
        changes = plans.changes_for_date(con, DAY2)
        assert set(changes["change_type"]) == {"price_up"}
        assert changes["pct_change"].tolist() == [25.0, 25.0]
        assert set(changes["measure"]) == {"rent_usd_per_month"}
        assert set(changes["subject"]) == {"plan"} and changes["job"].isna().all()
        assert (changes["old_platform"] == "cloud").all() and (changes["new_gpu_count"] == 1).all()
        assert plans.compute_plan_changes(con, DAY2, 25.01) == 0
        assert plans.compute_plan_changes(con, DAY2, 25.0, subject="job") == 0  # no job plans
        assert len(plans.changes_for_date(con, DAY2)) == 0
        with pytest.raises(ValueError, match="subject must be one of plan, job"):
            plans.compute_plan_changes(con, DAY2, 25.0, subject="jobs")


def _before_091(tmp_path: Path) -> Path:
    folder = tmp_path / "before_091"
    folder.mkdir()
    shipped = Path(connect.__file__).with_name("migrations")
    for migration in available():
        if migration.version < 91:
            shutil.copy(shipped / migration.name, folder)
    return folder


JOB_CHANGES = pd.DataFrame(
    {
        "change_date": [DAY2, DAY2, DAY2],
        "job": ["sft", "sft", "gone"],
        "change_type": ["new_platform", "price_down", "no_longer_possible"],
        "old_platform": ["a", "a", "a"],
        "new_platform": ["b", "b", None],
        "old_gpu_model": ["H100 SXM 80GB"] * 3,
        "new_gpu_model": ["H100 SXM 80GB", "H100 SXM 80GB", None],
        "old_gpu_count": [8, 8, 4],
        "new_gpu_count": [8, 8, None],
        "old_total_usd": [1000.0, 1000.0, 500.0],
        "new_total_usd": [800.0, 800.0, None],
        "pct_change": [-20.0, -20.0, None],
        "detail": ["a H100 SXM 80GB x8 -> b H100 SXM 80GB x8", "b ...: 1000.00 -> 800.00", "no offer; was"],
        "computed_at": [NOW] * 3,
    }
)


def test_the_migration_moves_every_job_change_into_plan_changes(tmp_path: Path) -> None:
    with duckdb.connect() as con:
        migrate(con, _before_091(tmp_path))
        con.register("job_changes", JOB_CHANGES)
        con.execute("INSERT INTO job_plan_changes BY NAME SELECT * FROM job_changes")
        con.execute(
            "INSERT INTO job_plans (plan_date, job, rank, status, model, method, tokens, epochs, "
            "computed_at) VALUES ($d, 'sft', 1, 'ok', '7B', 'lora', 1e9, 1, $now), "
            "($d, 'sft', 2, 'ok', '7B', 'lora', 1e9, 1, $now)",
            {"d": DAY2, "now": NOW},
        )
        con.execute(
            "INSERT INTO plan_changes VALUES ($d, '7B', 'full', 'lowest_rent', 'price_up', '730.00', "
            "'912.50', 730.0, 912.5, 25.0, "
            "'cloud H100 SXM 80GB x1: 730.00 -> 912.50 USD/month (+25.0%)', $now)",
            {"d": DAY2, "now": NOW},
        )
        before = con.execute("SELECT * FROM job_plan_changes ORDER BY ALL").fetchall()
        migrate(con)
        # the view of the old name shows every job change as the table held it
        assert con.execute("SELECT * FROM job_plan_changes ORDER BY ALL").fetchall() == before
        jobs = con.execute(
            "SELECT job, model, method, ranking, measure, change_type, old_value, new_value "
            "FROM plan_changes WHERE subject = 'job' ORDER BY ALL"
        ).fetchall()
        assert jobs == [
            (
                "gone",
                None,
                None,
                "lowest_total",
                "total_usd",
                "no_longer_possible",
                "a H100 SXM 80GB x4",
                None,
            ),
            ("sft", "7B", "lora", "lowest_total", "total_usd", "new_platform", "a", "b"),
            ("sft", "7B", "lora", "lowest_total", "total_usd", "price_down", "1000.00", "800.00"),
        ]
        daily = con.execute(
            "SELECT model, method, ranking, change_type, old_value, new_value, measure, old_measure_usd, "
            "new_measure_usd, pct_change, detail FROM plan_changes WHERE subject = 'plan'"
        ).fetchall()
        assert daily == [
            (
                "7B",
                "full",
                "lowest_rent",
                "price_up",
                "730.00",
                "912.50",
                "rent_usd_per_month",
                730.0,
                912.5,
                25.0,
                "cloud H100 SXM 80GB x1: 730.00 -> 912.50 USD/month (+25.0%)",
            )
        ]

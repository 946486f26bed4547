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

from digest.content import build_digest
from pipelines.assets.plans import _changes_result
from warehouse import backfill, daily_plans
from warehouse.engine import connect
from warehouse.engine.migrate import available, migrate
from warehouse.plan_sequence import PlannedDays
from warehouse.requirements import SizedDays

NOW = dt.datetime(2026, 12, 1, 6, 0)


def test_a_move_of_exactly_the_threshold_is_a_change(tmp_path: Path) -> None:
    """'At least' price_move_pct, as the README says (the daily plans once counted 'more than')."""
    with scratch() as con:
        _crawl(con, DAY1, "cloud", [_offer("cloud", "h100", "H100 SXM 80GB", 1.0)])
        _plan(con, DAY1, {("7B", "full"): 70})
        _crawl(con, DAY2, "cloud", [_offer("cloud", "h100", "H100 SXM 80GB", 1.25)])  # +25.0 % exactly
        _plan(con, DAY2, {("7B", "full"): 70})
        assert daily_plans.compute_plan_changes(con, DAY2, 25.0) == 2  # both rankings
        changes = daily_plans.changes_for_date(con, DAY2)
        assert set(changes["change_type"]) == {"price_up"}
        assert changes["pct_change"].tolist() == [25.0, 25.0]
        # each ranking's own measure: the month's rent, the run's total (here billed by the hour)
        assert set(changes["measure"]) == {"commitment_usd", "total_usd"}
        assert set(changes["subject"]) == {"plan"} and changes["job"].isna().all()
        assert (changes["old_platform"] == "cloud").all() and changes["new_gpu_count"].tolist() == [1, 8]
        assert daily_plans.compute_plan_changes(con, DAY2, 25.01) == 0
        assert daily_plans.compute_plan_changes(con, DAY2, 25.0, subject="job") == 0  # no job plans
        assert len(daily_plans.changes_for_date(con, DAY2)) == 0
        with pytest.raises(ValueError, match="subject must be one of plan, job"):
            daily_plans.compute_plan_changes(con, DAY2, 25.0, subject="jobs")


def _before(tmp_path: Path, version: int) -> Path:
    """A migrations folder of the shipped migrations before `version`."""
    folder = tmp_path / f"before_{version:03d}"
    folder.mkdir()
    shipped = Path(connect.__file__).parents[1] / "migrations"
    for migration in available():
        if migration.version < version:
            shutil.copy(shipped / migration.name, folder)
    return folder


def _before_091(tmp_path: Path) -> Path:
    return _before(tmp_path, 91)


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


DAY3 = DAY2 + dt.timedelta(days=1)


def _old_ranking_day(con: duckdb.DuckDBPyConnection, day: dt.date) -> None:
    """7B full's plans of `day` as the planner stored them before the run ranking (migration 095):
    both on cloud's H100 at 1 USD/GPU-h, 'lowest_rent' and 'lowest_cost_per_btoken'."""
    con.execute(
        "INSERT INTO cheapest_plans (plan_date, model, method, ranking, status, platform, offer_id, "
        "gpu_model, gpu_count, units_rented, nodes, pricing_type, billing_period, rent_usd_per_hour, "
        "rent_usd_per_month, commitment_hours, commitment_usd, cost_usd_per_billion_tokens, total_usd, "
        "computed_at) "
        "SELECT $d, '7B', 'full', ranking, 'ok', 'cloud', 'h100', 'H100 SXM 80GB', 1, 1, 1, 'on_demand', "
        "'hour', 1.0, 730.0, 730, 730.0, 1e9 / (5000 * 3600), 56.0, $now "
        "FROM (VALUES ('lowest_rent'), ('lowest_cost_per_btoken')) AS r(ranking)",
        {"d": day, "now": NOW},
    )


def test_the_rename_is_never_a_plan_change(tmp_path: Path) -> None:
    """Days planned before the run ranking keep their 'lowest_cost_per_btoken' rows; a day planned
    (or backfilled) after it has 'lowest_run_total' rows. Backfilling a day between two old ones
    reports no change of either ranking's name, while the lowest rent, kept, still reports its moves
    across the boundary: 730 -> 912.50 USD (+25 %), then back (-20 %)."""
    with duckdb.connect() as con:
        migrate(con, _before(tmp_path, 95))
        for day in (DAY1, DAY3):
            _old_ranking_day(con, day)
        migrate(con)
        for day, usd in ((DAY1, 1.0), (DAY2, 1.25), (DAY3, 1.0)):
            _crawl(con, day, "cloud", [_offer("cloud", "h100", "H100 SXM 80GB", usd)])
        _plan(con, DAY2, {("7B", "full"): 70})
        daily_plans.compute_plan_changes_for_days(con, [DAY2], 10.0)  # as `gpuplan backfill` does

        changes = con.execute(
            "SELECT change_date, ranking, change_type, measure, round(pct_change, 6) "
            "FROM plan_changes ORDER BY ALL"
        ).fetchall()
        assert changes == [
            (DAY2, "lowest_rent", "price_up", "commitment_usd", 25.0),
            (DAY3, "lowest_rent", "price_down", "commitment_usd", -20.0),
        ]
        kept = con.execute(
            "SELECT plan_date, ranking, measure, measure_usd FROM cheapest_plans ORDER BY plan_date, ranking"
        ).fetchall()
        per_btoken = 1e9 / (5000 * 3600)
        assert [row[:3] for row in kept] == [
            (DAY1, "lowest_cost_per_btoken", "cost_usd_per_billion_tokens"),
            (DAY1, "lowest_rent", "commitment_usd"),
            (DAY2, "lowest_rent", "commitment_usd"),
            (DAY2, "lowest_run_total", "total_usd"),
            (DAY3, "lowest_cost_per_btoken", "cost_usd_per_billion_tokens"),
            (DAY3, "lowest_rent", "commitment_usd"),
        ]
        assert [row[3] for row in kept] == pytest.approx(
            [per_btoken, 730.0, 912.5, 1.25 * 56, per_btoken, 730.0]
        )
        for day in (DAY2, DAY3):
            said = build_digest(con, day, price_move_pct=10.0).plan_changes
            assert [(entry.ranking, entry.change_types) for entry in said] == [
                ("lowest_rent", ("price_up" if day == DAY2 else "price_down",))
            ]


def test_a_plan_change_of_several_kinds_counts_once_everywhere() -> None:
    """A plan that moves to another platform at a higher price is two rows of plan_changes
    (new_platform, price_up) and one plan change: the digest, `count_changed_plans` (refresh's line),
    the changed-plans frame (the Dagster asset's metadata), the per-day counts (backfill) and
    compute_plan_changes' return all say 1 per plan."""
    with scratch() as con:
        _crawl(con, DAY1, "cloud", [_offer("cloud", "h100", "H100 SXM 80GB", 1.0)])
        _crawl(con, DAY1, "other", [_offer("other", "h100", "H100 SXM 80GB", 3.0)])
        _plan(con, DAY1, {("7B", "full"): 70})
        _crawl(con, DAY2, "cloud", [_offer("cloud", "h100", "H100 SXM 80GB", 2.0)])
        _crawl(con, DAY2, "other", [_offer("other", "h100", "H100 SXM 80GB", 1.5)])
        _plan(con, DAY2, {("7B", "full"): 70})
        changed = daily_plans.compute_plan_changes(con, DAY2, 10.0)
        rows = daily_plans.changes_for_date(con, DAY2)
        assert sorted(set(rows["change_type"])) == ["new_platform", "price_up"]
        assert len(rows) == 4  # two kinds for each of the two rankings
        digest = build_digest(con, DAY2, price_move_pct=10.0).plan_changes
        assert [entry.change_types for entry in digest] == [("new_platform", "price_up")] * 2
        assert changed == daily_plans.count_changed_plans(con, DAY2) == len(digest) == 2
        assert daily_plans.count_changed_plans(con, DAY2, "plan") == 2
        assert daily_plans.count_changed_plans(con, DAY2, "job") == 0
        frame = daily_plans.changed_plans_for_date(con, DAY2, subject="plan")
        assert frame[["ranking", "changes"]].values.tolist() == [
            ["lowest_rent", "new_platform, price_up"],
            ["lowest_run_total", "new_platform, price_up"],
        ]
        assert all(";" in detail for detail in frame["detail"])  # both kinds' details, joined
        days = backfill.planned_days(con, DAY1, DAY2)
        assert days["changes"].tolist() == [0, 2]
        # the Dagster plan_changes asset: its count and its table, one row per plan change
        planned = PlannedDays((DAY2,), SizedDays(pd.DataFrame(), (), 0), 0, 0, changed)
        result = _changes_result(con, planned, {}, [DAY2])
        assert result.metadata is not None and result.metadata["dagster/row_count"] == 2
        table = result.metadata["changes"].value
        assert table.count("| new_platform, price_up |") == 2 and "| price_up |" not in table

"""pipelines/watches.py: the asset check that shows in the Dagster UI which GPUPLAN_WATCHES fired.

The offers and plans are SYNTHETIC rows (one H100 offer a day on vastai), written as the pipeline
writes them; the watches file and the GPU names go through the real reader (`config.watches_file`).
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from pathlib import Path

import dagster as dg
import pandas as pd
import pytest
from warehouse_template import migrated

from pipelines.partitions import daily_partitions
from pipelines.resources import MailerResource, WarehouseResource
from pipelines.watches import watches
from warehouse import daily_plans
from warehouse.engine import connect

DAY = date(2026, 11, 30)
PREVIOUS = DAY - timedelta(days=1)


def _day(con, day: date, usd: float) -> None:
    crawl_id = f"synthetic-vastai-{day}"
    at = datetime.combine(day, datetime.min.time())
    con.execute(
        "INSERT INTO crawl_runs (crawl_id, platform, status, offers_loaded, loaded_at) "
        "VALUES ($id, 'vastai', 'ok', 1, $at)",
        {"id": crawl_id, "at": at},
    )
    con.execute(
        "INSERT INTO offers (crawl_id, platform, offer_id, gpu_name_raw, gpu_model, gpu_count, price_amount, "
        "price_currency, price_per, billing_period, pricing_type, hourly_rentable, price_usd_per_gpu_hour, "
        "observed_at, observed_date, run_day) VALUES ($id, 'vastai', 'h100', 'H100', 'H100 SXM 80GB', 1, "
        "$usd, 'USD', 'gpu', 'hour', 'on_demand', TRUE, $usd, $at, $day, $day)",
        {"id": crawl_id, "usd": usd, "at": at, "day": day},
    )
    daily_plans.record_plan_crawls(
        con, day, pd.DataFrame([{"platform": "vastai", "crawl_id": crawl_id, "status": "ok"}])
    )
    con.execute(
        "INSERT INTO cheapest_plans (plan_date, model, method, ranking, status, computed_at) "
        "VALUES ($day, '7B', 'lora', 'lowest_rent', 'no_offer_fits', $at)",
        {"day": day, "at": at},
    )


def _evaluate(settings, watches_file: Path | None) -> dg.AssetCheckEvaluation:
    @dg.asset(name="plan_changes", partitions_def=daily_partitions(settings.schedule_timezone))
    def plan_changes_written_above() -> None:
        """Stands for the plan_changes asset: the day's plans are in the warehouse already."""

    mailer = MailerResource(watches_file=str(watches_file) if watches_file else None)
    result = dg.materialize(
        [plan_changes_written_above, watches],
        partition_key=DAY.isoformat(),
        resources={"warehouse": WarehouseResource.from_settings(settings), "mailer": mailer},
    )
    (evaluation,) = result.get_asset_check_evaluations()
    return evaluation


@pytest.fixture
def two_days(settings):
    with connect.writer(migrated(settings.warehouse)) as con:
        _day(con, PREVIOUS, 2.2)
        _day(con, DAY, 1.9)
    return settings


def test_a_watch_that_fires_warns_with_the_watch(two_days, tmp_path):
    file = tmp_path / "watches.yaml"
    file.write_text(
        "- gpu: H100\n  below_usd_per_gpu_hour: 2.0\n- gpu: H100\n  below_usd_per_gpu_hour: 3.0\n",
        encoding="utf-8",
    )
    evaluation = _evaluate(two_days, file)
    assert not evaluation.passed and evaluation.severity == dg.AssetCheckSeverity.WARN
    # the first fires today; the second held yesterday too
    assert evaluation.description == (
        "2026-11-30: H100 SXM 80GB under $2.00/GPU-h: now $1.90/GPU-h at vastai (was $2.20/GPU-h)"
    )
    assert (evaluation.metadata["watches"].value, evaluation.metadata["fired"].value) == (2, 1)
    assert "line 3: H100 SXM 80GB under $3.00/GPU-h" in evaluation.metadata["results"].value


def test_no_watch_fired_or_no_file_passes(two_days, tmp_path):
    file = tmp_path / "watches.yaml"
    file.write_text("- gpu: H100\n  below_usd_per_gpu_hour: 1.0\n", encoding="utf-8")
    assert _evaluate(two_days, file).passed
    evaluation = _evaluate(two_days, None)
    assert evaluation.passed and evaluation.metadata["watches"].value == 0


def test_a_malformed_file_fails_the_check_with_its_line(two_days, tmp_path):
    file = tmp_path / "watches.yaml"
    file.write_text("- gpu: H100\n  below_usd_per_gpu_hour: 2\n  platforms: [vast]\n", encoding="utf-8")
    evaluation = _evaluate(two_days, file)
    assert not evaluation.passed and evaluation.severity == dg.AssetCheckSeverity.ERROR
    assert evaluation.description.startswith(f"GPUPLAN_WATCHES {file} line 3: unknown platform 'vast'")

"""pipelines/assets/jobs.py and its check: every job gets a plan or a reason; a bad jobs file fails
the asset with its line, and the day's plans stay as they were.

The offers are SYNTHETIC (one made-up crawl of one platform, recorded for the day).
"""

from __future__ import annotations

from datetime import date, datetime
from pathlib import Path

import dagster as dg
import pandas as pd
import pytest
from warehouse_template import migrated

from config.settings import Settings
from pipelines.assets.jobs import build_job_assets, start_of
from pipelines.checks import every_job_has_a_plan
from pipelines.partitions import daily_partitions
from pipelines.resources import WarehouseResource
from warehouse import daily_plans, job_plans
from warehouse.engine import connect

DAY = date(2026, 11, 30)
OFFER = {
    "crawl_id": "synthetic-cloud",
    "platform": "cloud",
    "source": "crawl",
    "offer_id": "h100",
    "gpu_name_raw": "H100 SXM 80GB",
    "gpu_model": "H100 SXM 80GB",
    "gpu_count": 1,
    "price_amount": 2.0,
    "price_currency": "USD",
    "price_per": "gpu",
    "billing_period": "hour",
    "min_term_periods": 1,
    "pricing_type": "on_demand",
    "hourly_rentable": True,
    "price_usd_per_gpu_hour": 2.0,
    "price_cny_per_gpu_hour": 14.0,
    "observed_at": datetime(2026, 11, 30),
    "observed_date": DAY,
    "run_day": DAY,
}
JOBS = """\
- name: small
  model: 7B
  method: lora
  tokens: 1B
- name: far
  model: 7B
  method: lora
  tokens: 1B
  platforms: [nowhere]
"""


def _warehouse(settings: Settings, jobs: Path) -> WarehouseResource:
    with connect.writer(migrated(settings.warehouse)) as con:
        con.execute(
            "INSERT INTO crawl_runs (crawl_id, platform, status, items_yielded, offers_loaded, loaded_at) "
            "VALUES ('synthetic-cloud', 'cloud', 'ok', 1, 1, $at)",
            {"at": datetime(2026, 11, 30)},
        )
        con.register("offer_frame", pd.DataFrame([OFFER]))
        con.execute("INSERT INTO offers BY NAME SELECT * FROM offer_frame")
        daily_plans.record_plan_crawls(
            con, DAY, pd.DataFrame([{"platform": "cloud", "crawl_id": "synthetic-cloud", "status": "ok"}])
        )
    return WarehouseResource.from_settings(
        Settings.from_env({"GPUPLAN_WAREHOUSE": str(settings.warehouse), "GPUPLAN_JOBS": str(jobs)})
    )


def _run(warehouse: WarehouseResource) -> dg.ExecuteInProcessResult:
    return dg.materialize(
        [*build_job_assets(daily_partitions("Asia/Shanghai")), every_job_has_a_plan],
        partition_key=DAY.isoformat(),
        resources={"warehouse": warehouse},
        raise_on_error=False,
    )


def test_every_job_gets_a_plan_or_a_reason(settings, tmp_path):
    jobs = tmp_path / "jobs.yaml"
    jobs.write_text(JOBS, encoding="utf-8")
    result = _run(_warehouse(settings, jobs))
    (evaluation,) = result.get_asset_check_evaluations()
    assert result.success and evaluation.passed
    with connect.reader(settings.warehouse) as con:
        rows = job_plans.job_plans_for_date(con, DAY)
    best = rows[rows["rank"] == 1].set_index("job")
    assert best.loc["small", "status"] == "ok" and best.loc["small", "platform"] == "cloud"
    assert best.loc["far", "reason"] == f"no offers from nowhere in the crawls of {DAY}"


@pytest.mark.parametrize(
    ("text", "line", "planned"),
    [
        # a job refused alone: the others are planned, the step fails naming its line
        (JOBS.replace("tokens: 1B", "tokens: lots", 1), "line 4", {"far"}),
        (JOBS + "- name: small\n  model: 7B\n  method: lora\n  tokens: 1B\n", "line 10", {"small", "far"}),
    ],
)
def test_a_bad_jobs_file_fails_the_asset_with_its_line_and_keeps_the_days_plans(
    settings, tmp_path, text, line, planned
):
    jobs = tmp_path / "jobs.yaml"
    jobs.write_text(JOBS, encoding="utf-8")
    warehouse = _warehouse(settings, jobs)
    assert _run(warehouse).success
    jobs.write_text(text, encoding="utf-8")
    result = _run(warehouse)
    assert not result.success
    (failure,) = [event for event in result.all_events if event.is_step_failure]
    message = failure.step_failure_data.error.message
    assert f"{jobs} {line}: " in message and "\n" not in message.strip()
    with connect.reader(settings.warehouse) as con:
        kept = job_plans.job_plans_for_date(con, DAY)
    assert set(kept["job"]) == planned  # the jobs that could be read, planned


def test_a_job_planned_for_a_past_day_starts_at_its_beginning():
    now = datetime(2026, 12, 5, 3, 0)
    assert start_of(date(2026, 12, 5), "Asia/Shanghai", now) == now
    assert start_of(date(2026, 11, 2), "Asia/Shanghai", now) == datetime(2026, 11, 1, 16, 0)  # 00:00 +08:00

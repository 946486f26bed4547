"""pipelines/drift_checks.py: one warning check per platform on `offers`, naming what drifted, all
evaluated by one step.

The crawl history is SYNTHETIC (made-up crawl_runs, offers and plan_crawls rows)."""

from __future__ import annotations

from datetime import date, datetime, timedelta

import dagster as dg
import pandas as pd
from warehouse_template import migrated

from config.settings import Settings
from pipelines.definitions import build_defs
from pipelines.drift_checks import build_drift_checks
from pipelines.partitions import daily_partitions
from pipelines.resources import WarehouseResource
from scrapers.registry import platforms
from warehouse import daily_plans, drift
from warehouse.engine import connect

DAY = date(2026, 11, 30)


def _crawl(con, day: date, offers: int, platform: str = "synthcloud") -> None:
    crawl_id = f"synthetic-{platform}-{day}"
    at = datetime.combine(day, datetime.min.time())
    con.execute(
        "INSERT INTO crawl_runs (crawl_id, platform, status, offers_loaded, loaded_at) "
        "VALUES ($id, $platform, 'ok', $n, $at)",
        {"id": crawl_id, "platform": platform, "n": offers, "at": at},
    )
    for n in range(offers):
        con.execute(
            "INSERT INTO offers (crawl_id, platform, offer_id, gpu_name_raw, gpu_model, gpu_count, "
            "price_amount, price_currency, price_per, billing_period, pricing_type, hourly_rentable, "
            "price_usd_per_gpu_hour, observed_at, observed_date, run_day) VALUES ($id, $platform, "
            "$offer, 'H100', 'H100 SXM 80GB', 1, 2.0, 'USD', 'gpu', 'hour', 'on_demand', TRUE, 2.0, "
            "$at, $day, $day)",
            {"id": crawl_id, "platform": platform, "offer": f"synthetic-{n}", "at": at, "day": day},
        )
    daily_plans.record_plan_crawls(
        con, day, pd.DataFrame([{"platform": platform, "crawl_id": crawl_id, "status": "ok"}])
    )


def _run(settings: Settings, platforms: list[str]) -> dg.ExecuteInProcessResult:
    @dg.asset(name="offers", partitions_def=daily_partitions(settings.schedule_timezone))
    def offers_loaded_above() -> None:
        """Stands for the offers asset: the offers are in the warehouse already."""

    return dg.materialize(
        [offers_loaded_above, *build_drift_checks(platforms)],
        partition_key=DAY.isoformat(),
        resources={"warehouse": WarehouseResource.from_settings(settings)},
    )


def _evaluate(settings: Settings) -> dg.AssetCheckEvaluation:
    (evaluation,) = _run(settings, ["synthcloud"]).get_asset_check_evaluations()
    return evaluation


def test_a_crawl_that_lost_most_of_its_offers_warns_and_says_why(settings: Settings) -> None:
    with connect.writer(migrated(settings.warehouse)) as con:
        for back in range(1, 8):
            _crawl(con, DAY - timedelta(days=back), 10)
        _crawl(con, DAY, 3)
    evaluation = _evaluate(settings)
    assert evaluation.check_name == "synthcloud_drift"
    assert not evaluation.passed and evaluation.severity == dg.AssetCheckSeverity.WARN
    assert evaluation.description == "2026-11-30: 3 offers, under half the usual 10"
    assert evaluation.metadata["history_crawls"].value == 7


def test_a_usual_day_passes(settings: Settings) -> None:
    with connect.writer(migrated(settings.warehouse)) as con:
        for back in range(0, 8):
            _crawl(con, DAY - timedelta(days=back), 10)
    assert _evaluate(settings).passed


def test_one_step_checks_every_platform_each_under_its_own_name(settings: Settings) -> None:
    with connect.writer(migrated(settings.warehouse)) as con:
        for back in range(1, 8):
            _crawl(con, DAY - timedelta(days=back), 10, "synthcloud")
            _crawl(con, DAY - timedelta(days=back), 10, "othercloud")
        _crawl(con, DAY, 4, "synthcloud")
        _crawl(con, DAY, 10, "othercloud")
    result = _run(settings, ["synthcloud", "othercloud"])
    passed = {e.check_name: e.passed for e in result.get_asset_check_evaluations()}
    assert passed == {"synthcloud_drift": False, "othercloud_drift": True}
    steps = {event.step_key for event in result.all_events if event.is_step_start}
    assert steps == {"offers", "crawl_drift"}


def test_every_platform_has_a_drift_check_on_offers(settings: Settings) -> None:
    defs = build_defs(settings)
    keys = {key for check in defs.asset_checks or [] for key in check.check_keys}  # type: ignore[union-attr]
    names = {
        key.name for key in keys if key.asset_key == dg.AssetKey("offers") and key.name.endswith("_drift")
    }
    assert names == {drift.check_name(platform) for platform in platforms()}

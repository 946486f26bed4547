"""pipelines/checks.py, and each crawl's own check (`crawled`, evaluated in the crawl step).

The crawls are the real spiders replaying their bundled snapshots; the warehouse rows of the other
checks are SYNTHETIC (made up per test, as each says).
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import dagster as dg
import pandas as pd
import pytest
from warehouse_template import migrated

from pipelines.assets.crawls import CRAWLED, build_crawl_assets, crawl_key
from pipelines.checks import build_checks, every_ask_has_a_plan, prices_believable
from pipelines.partitions import daily_partitions
from pipelines.resources import CrawlerResource, WarehouseResource
from scrapers import registry
from warehouse import daily_plans
from warehouse.engine import connect

DAY = date(2026, 11, 30)
PLATFORM = "vastai"


def _crawled(
    settings, platform: str = PLATFORM, day: date = DAY, offline: bool = True
) -> dg.AssetCheckEvaluation:
    """Materialize `platform`'s crawl for `day`; the evaluation of its `crawled` check."""
    partitions = daily_partitions(settings.schedule_timezone)
    result = dg.materialize(
        build_crawl_assets([platform], partitions),
        partition_key=day.isoformat(),
        resources={
            "warehouse": WarehouseResource.from_settings(settings),
            "crawler": CrawlerResource(offline=offline),
        },
    )
    (evaluation,) = result.get_asset_check_evaluations()
    assert (evaluation.asset_key, evaluation.check_name) == (crawl_key(platform), CRAWLED)
    return evaluation


@pytest.mark.slow  # crawls offline in a child process
def test_a_crawl_that_yielded_items_passes_in_its_own_step(settings):
    evaluation = _crawled(settings)
    assert evaluation.passed
    assert evaluation.metadata["status"].value == "ok"
    assert evaluation.metadata["items_yielded"].value > 0


def test_a_past_day_without_its_crawl_fails_naming_the_day(settings):
    # live, a past day keeps its crawl: there is none, so nothing was crawled for it
    evaluation = _crawled(settings, day=DAY - timedelta(days=30), offline=False)
    assert not evaluation.passed
    assert evaluation.description == f"no crawl of {PLATFORM} for {DAY - timedelta(days=30)}"


def test_freshness_flags_a_platform_that_stopped_loading_offers(settings):
    now = datetime.now(UTC).replace(tzinfo=None)
    runs = pd.DataFrame(
        {
            "crawl_id": ["synthetic-stale", "synthetic-fresh", "synthetic-fresh-failed-today"],
            "platform": ["stale", "fresh", "fresh"],
            "status": ["ok", "ok", "failed"],
            "offers_loaded": [10, 10, 0],
            "finished_at": [now - timedelta(hours=40), now - timedelta(hours=20), now],
            "loaded_at": now,
        }
    )
    with connect.writer(migrated(settings.warehouse)) as con:
        con.register("synthetic_runs", runs)
        con.execute("INSERT INTO crawl_runs BY NAME SELECT * FROM synthetic_runs")
    (fresh,) = [c for c in build_checks(["stale", "fresh", "never"]) if c.check_key.name == "fresh"]

    result = fresh(warehouse=WarehouseResource.from_settings(settings))

    assert not result.passed
    assert result.metadata["stale_platforms"].value == "stale"  # "never" has no data to go stale


def test_a_platform_skipped_for_want_of_a_token_passes(settings, monkeypatch):
    platform = next(
        p for p in registry.platforms() if (token := registry.spider_class(p).token) and token.required
    )
    monkeypatch.delenv(registry.spider_class(platform).token.env, raising=False)
    today = datetime.now(ZoneInfo(settings.schedule_timezone)).date()
    evaluation = _crawled(settings, platform, today, offline=False)  # skipped before any request
    assert evaluation.passed
    assert evaluation.metadata["status"].value == "skipped"


def test_the_price_check_lists_a_placeholder_price_that_plans_leave_out(settings):
    # SYNTHETIC: one H100 offer per platform for DAY; RunPod's 0.5 USD is its out-of-stock placeholder
    prices = {"runpod": 0.5, "lambda": 2.99, "nebius": 2.95, "vastai": 1.9}
    observed_at = datetime.combine(DAY, datetime.min.time())
    with connect.writer(migrated(settings.warehouse)) as con:
        for platform, usd in prices.items():
            crawl_id = f"synthetic-{platform}"
            con.execute(
                "INSERT INTO crawl_runs (crawl_id, platform, status, offers_loaded, loaded_at) "
                "VALUES ($id, $platform, 'ok', 1, $at)",
                {"id": crawl_id, "platform": platform, "at": observed_at},
            )
            con.execute(
                "INSERT INTO offers (crawl_id, platform, offer_id, gpu_name_raw, gpu_model, gpu_count, "
                "price_amount, price_currency, price_per, billing_period, pricing_type, hourly_rentable, "
                "price_usd_per_gpu_hour, observed_at, observed_date, run_day) VALUES ($id, $platform, "
                "'h100', 'H100', 'H100 SXM 80GB', 1, $usd, 'USD', 'gpu', 'hour', 'on_demand', TRUE, $usd, "
                "$at, $day, $day)",
                {"id": crawl_id, "platform": platform, "usd": usd, "at": observed_at, "day": DAY},
            )
            daily_plans.record_plan_crawls(
                con, DAY, pd.DataFrame([{"platform": platform, "crawl_id": crawl_id, "status": "ok"}])
            )

    @dg.asset(name="offers", partitions_def=daily_partitions(settings.schedule_timezone))
    def offers_loaded_above() -> None:
        """Stands for the offers asset: the offers are in the warehouse already."""

    result = dg.materialize(
        [offers_loaded_above, prices_believable],
        partition_key=DAY.isoformat(),
        resources={"warehouse": WarehouseResource.from_settings(settings)},
    )
    (evaluation,) = result.get_asset_check_evaluations()
    assert not evaluation.passed
    assert evaluation.metadata["below_price_floor"].value == 1
    listed = evaluation.metadata["offers"].value
    assert "| runpod | h100 | H100 SXM 80GB | 0.50 | 2.95 |" in listed and "left out of plans" in listed


def test_a_day_without_any_crawl_recorded_has_no_plans_and_fails_the_plan_check(settings):
    with connect.writer(migrated(settings.warehouse)):
        pass  # an empty, migrated warehouse: nothing crawled or imported for DAY

    @dg.asset(name="cheapest_plans", partitions_def=daily_partitions(settings.schedule_timezone))
    def no_plans_computed() -> None:
        """Stands for cheapest_plans on a day without data."""

    result = dg.materialize(
        [no_plans_computed, every_ask_has_a_plan],
        partition_key=DAY.isoformat(),
        resources={"warehouse": WarehouseResource.from_settings(settings)},
    )
    (evaluation,) = result.get_asset_check_evaluations()
    assert not evaluation.passed
    assert evaluation.description == f"no crawl recorded for {DAY}..{DAY}: no plans"

"""offers.run_day (migration 031): the day of the offer's run, as daily_runs computes it, set by both
loaders and backfilled; and the GPU names `gpuplan history` resolves against."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path

import duckdb
import warehouse_template

from scrapers.history import formats
from warehouse import history
from warehouse.engine import connect
from warehouse.engine.migrate import available, migrate
from warehouse.imports import import_file
from warehouse.loading import load_crawl

from .test_trend import _crawl

# Offers whose run_day is not their run's day as daily_runs.day computes it.
MISMATCHED_SQL = """
SELECT count(*) FROM offers AS o JOIN crawl_runs AS r USING (crawl_id)
WHERE o.run_day IS DISTINCT FROM run_day_of(r.started_at, r.loaded_at)  -- migration 085
"""


def test_both_loaders_set_the_run_day_daily_runs_computes(lambda_catalogs, tmp_path: Path) -> None:
    con = warehouse_template.scratch()
    load_crawl(con, _crawl(tmp_path / "crawl", "2026-04-06", 4.10))
    # A summary without started_at: the run's day is the day it was loaded.
    undated = _crawl(tmp_path / "undated", "2026-04-07", 4.20)
    summary = json.loads(undated.read_text())
    undated.write_text(json.dumps({**summary, "started_at": None}))
    load_crawl(con, undated)
    import_file(con, formats.get("skypilot"), lambda_catalogs[0])
    days = con.execute("SELECT DISTINCT source, run_day FROM offers ORDER BY run_day").fetchall()
    today = dt.datetime.now(dt.UTC).date()
    assert days == [
        ("import:skypilot", dt.date(2026, 4, 2)),
        ("crawl", dt.date(2026, 4, 6)),
        ("crawl", today),
    ]
    assert con.execute(MISMATCHED_SQL).fetchall() == [(0,)]


def test_the_migration_gives_existing_offers_their_run_day(tmp_path: Path) -> None:
    before = tmp_path / "before_031"
    before.mkdir()
    for migration in available():
        if migration.version < 31:
            shutil.copy(Path(connect.__file__).parents[1] / "migrations" / migration.name, before)
    with duckdb.connect(str(tmp_path / "w.duckdb")) as con:
        migrate(con, before)
        con.execute(
            "INSERT INTO crawl_runs (crawl_id, platform, status, started_at, offers_loaded, loaded_at) "
            "VALUES ('c1', 'lambda', 'ok', '2026-04-06 23:30:00', 1, '2026-04-08 01:00:00'), "
            "('c2', 'lambda', 'ok', NULL, 1, '2026-04-08 01:00:00')"
        )
        con.execute(
            "INSERT INTO offers (crawl_id, platform, offer_id, gpu_name_raw, gpu_model, gpu_count, "
            "price_amount, price_currency, price_per, billing_period, pricing_type, hourly_rentable, "
            "price_usd_per_gpu_hour, observed_at, observed_date) "
            "SELECT crawl_id, 'lambda', 'h100', 'gpu_1x_h100', 'H100 SXM 80GB', 1, price, 'USD', 'gpu', "
            "'hour', 'on_demand', TRUE, price, '2026-03-01 00:00:00', '2026-03-01' "
            "FROM (VALUES ('c1', 4.0), ('c2', 5.0)) AS v(crawl_id, price)"
        )
        assert migrate(con)[0] == "031_offers_run_day.sql"
        days = con.execute("SELECT crawl_id, run_day FROM offers ORDER BY crawl_id").fetchall()
        assert days == [("c1", dt.date(2026, 4, 6)), ("c2", dt.date(2026, 4, 8))]
        trend = history.price_trend(con, "H100 SXM 80GB", dt.date(2026, 4, 1), dt.date(2026, 4, 30))
        assert trend["min_usd_per_gpu_hour"].tolist() == [4.0, 5.0]


def test_gpu_names_are_the_catalog_and_the_models_priced_recently(tmp_path: Path) -> None:
    con = warehouse_template.scratch()
    con.execute("DELETE FROM gpus")  # a warehouse whose gpus table has not been synced
    assert history.priced_gpu_models(con)["gpu_model"].tolist() == []  # empty warehouse
    load_crawl(con, _crawl(tmp_path / "old", "2026-01-05", 4.10))
    recent = _crawl(tmp_path / "recent", "2026-06-01", 3.90)
    recent.with_name("lambda.jsonl").write_text(
        recent.with_name("lambda.jsonl").read_text().replace("H100 SXM 80GB", "H200 SXM 141GB")
    )
    load_crawl(con, recent)
    # H100 was last priced 148 days before the latest run: outside the default window
    assert history.priced_gpu_models(con)["gpu_model"].tolist() == ["H200 SXM 141GB"]
    everything = history.priced_gpu_models(con, since=dt.date(2026, 1, 1))
    assert everything["gpu_model"].tolist() == ["H100 SXM 80GB", "H200 SXM 141GB"]
    con.execute(
        "INSERT INTO gpus (gpu_model, family, memory_gb) VALUES ('A100 SXM 80GB', 'A100', 80), "
        "('H200 SXM 141GB', 'H200', 141)"
    )
    assert history.priced_gpu_models(con)["gpu_model"].tolist() == ["A100 SXM 80GB", "H200 SXM 141GB"]

"""pipelines/runs.py: one day's run in-process, as `gpuplan refresh` runs it, platform by platform."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from warehouse_template import migrated

from config.settings import Settings
from pipelines.runs import execute_day, previous_demo_day
from scrapers.crawl.summary import CrawlSummary
from warehouse import daily_plans
from warehouse.engine import connect

DAY = dt.date(2026, 11, 30)
PLATFORMS = ["datacrunch", "quotes"]


@pytest.mark.slow
def test_on_crawl_follows_each_platform_from_waiting_to_its_summary(settings: Settings) -> None:
    seen: list[tuple[str, str, CrawlSummary | None]] = []
    days: list[tuple[dt.date, bool, int]] = []  # each day's run: (day, replayed, crawl events before it)
    result = execute_day(
        settings,
        DAY,
        offline=True,
        platforms=PLATFORMS,
        on_crawl=lambda platform, state, summary: seen.append((platform, state, summary)),
        on_day=lambda day, _, replay: days.append((day, replay, len(seen))),
        wait_s=30,
    )
    assert result.failures == [] and result.run_id
    # a fresh warehouse: the recorded day before is replayed first, its crawls heard too
    assert [(day, replay) for day, replay, _ in days] == [(DAY - dt.timedelta(days=1), True), (DAY, False)]
    replayed, seen = seen[: days[1][2]], seen[days[1][2] :]
    assert {name for name, state, _ in replayed if state == "done"} <= set(PLATFORMS)
    for platform in PLATFORMS:
        states = [state for name, state, _ in seen if name == platform]
        assert states == ["waiting", "crawling", "done"], platform
        (summary,) = [summary for name, state, summary in seen if name == platform and state == "done"]
        assert summary is not None and summary.status == "ok" and summary.items_yielded > 0
    assert [state for _, state, _ in seen[: len(PLATFORMS)]] == ["waiting"] * len(PLATFORMS)
    with connect.reader(settings.warehouse) as con:
        assert set(daily_plans.day_crawls(con, DAY)["platform"]) == set(PLATFORMS)


@pytest.mark.slow
def test_a_failed_step_is_listed_with_its_cause(settings: Settings) -> None:
    broken = Settings.from_env(
        {
            "GPUPLAN_WAREHOUSE": str(settings.warehouse),
            "GPUPLAN_CRAWL_DIR": str(settings.crawl_dir),
            "GPUPLAN_MODELS": "7B,no-such-model",
        }
    )
    result = execute_day(broken, DAY, offline=True, platforms=["quotes"], wait_s=30)
    assert any(f.startswith("plans: ") and "no-such-model" in f for f in result.failures)


def test_the_day_before_is_replayed_only_on_a_warehouse_without_history(settings: Settings) -> None:
    # No warehouse yet: a first offline run replays the recorded day before first.
    assert previous_demo_day(settings, DAY, ["quotes"]) == (DAY - dt.timedelta(days=1), ["quotes"])
    with connect.writer(migrated(settings.warehouse)) as con:
        # history that was never planned (an import, or a year loaded before the first refresh):
        # a run ten days earlier, no plan_crawls row
        con.execute(
            "INSERT INTO crawl_runs (crawl_id, platform, status, items_yielded, offers_loaded, loaded_at) "
            "VALUES ('earlier', 'quotes', 'ok', 3, 3, $at)",
            {"at": dt.datetime.combine(DAY - dt.timedelta(days=10), dt.time(6))},
        )
    assert previous_demo_day(settings, DAY, ["quotes"]) is None, "demo data must not land beside history"


def test_a_warehouse_published_by_an_older_gpuplan_is_migrated_not_refused(
    settings: Settings, tmp_path: Path
) -> None:
    """An upgrade: the published snapshot lacks this code's newest migration. The refresh the error
    message asks for must not stop on that same error before it writes."""
    import shutil

    import duckdb

    from warehouse.engine.migrate import available, migrate

    newest = max(migration.version for migration in available())
    older = tmp_path / "older_migrations"
    older.mkdir()
    shipped = Path(connect.__file__).parents[1] / "migrations"
    for migration in available():
        if migration.version < newest:
            shutil.copy(shipped / migration.name, older)
    settings.warehouse.parent.mkdir(parents=True, exist_ok=True)
    with duckdb.connect(str(settings.warehouse)) as con:
        migrate(con, older)
    with pytest.raises(connect.OutdatedWarehouseError):
        connect.reader(settings.warehouse)

    assert previous_demo_day(settings, dt.date(2026, 11, 30), None) is not None
    with connect.reader(settings.warehouse) as con:  # migrated and published: readers work again
        (version,) = con.execute("SELECT max(version) FROM schema_migrations").fetchall()[0]
    assert version == newest

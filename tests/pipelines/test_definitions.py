"""pipelines/definitions.py and the pieces it wires: loading, executor, checks, partitions, schedule."""

from __future__ import annotations

import shutil
import subprocess
import sys
from datetime import date, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import dagster as dg
import pytest

from config.settings import Settings
from pipelines.assets.crawls import crawl_key, is_current
from pipelines.definitions import build_defs
from scrapers.registry import platforms

WRITING_ASSETS = (
    "fx_rates",
    "gpus",
    "offers",
    "plan_requirements",
    "plan_candidates",
    "cheapest_plans",
    "plan_changes",
)


def test_definitions_load_with_one_crawl_per_platform(settings):
    defs = build_defs(settings)
    dg.Definitions.validate_loadable(defs)
    graph = defs.resolve_asset_graph()
    keys = set(graph.get_all_asset_keys())
    assert {crawl_key(platform) for platform in platforms()} <= keys
    assert {dg.AssetKey(name) for name in (*WRITING_ASSETS, "digest")} <= keys
    # the daily job is the whole graph
    job = defs.resolve_job_def("daily_refresh")
    assert set(job.asset_layer.executable_asset_keys) == keys


def test_no_asset_waits_in_a_dagster_pool_and_every_run_is_one_process(settings):
    """The writer is one file lock the kernel frees (warehouse.engine.connect), not a pool slot that a
    killed run keeps; and a run's ~16 steps share one process instead of starting one each."""
    defs = build_defs(settings)
    graph = defs.resolve_asset_graph()
    assert {key.to_user_string(): graph.get(key).pools for key in graph.get_all_asset_keys()} == {
        key.to_user_string(): set() for key in graph.get_all_asset_keys()
    }
    for job in ("daily_refresh", "backfill_plans"):
        assert defs.resolve_job_def(job).executor_def is dg.in_process_executor, job


def test_each_platform_has_its_crawl_check_and_its_drift_check_without_a_step_each(settings):
    defs = build_defs(settings)
    job = defs.resolve_job_def("daily_refresh")
    checks = defs.resolve_asset_graph().asset_check_keys
    for platform in platforms():
        assert dg.AssetCheckKey(crawl_key(platform), "crawled") in checks
        assert dg.AssetCheckKey(dg.AssetKey("offers"), f"{platform}_drift") in checks
    steps = set(job.graph.node_dict)
    assert {"crawls", "crawl_drift"} <= steps
    assert len(steps) < 20, sorted(steps)  # not one step per platform and check


def test_every_crawl_is_made_by_one_step_that_can_run_any_subset(settings):
    defs = build_defs(settings)
    crawls = defs.resolve_assets_def(crawl_key(platforms()[0]))
    assert crawls.keys == {crawl_key(platform) for platform in platforms()}
    assert crawls.can_subset and crawls.op.name == "crawls"


def test_the_instance_settings_keep_no_pools_and_monitor_runs(tmp_path):
    """Run monitoring marks a killed run failed in the end (it holds nothing meanwhile); the daemon
    starts a queued run within a second."""
    shutil.copy2(Path(__file__).parents[2] / "config" / "dagster.yaml", tmp_path / "dagster.yaml")
    with dg.DagsterInstance.from_config(str(tmp_path)) as instance:
        assert instance.run_monitoring_enabled
        assert instance.run_monitoring_max_runtime_seconds > 0
        assert instance.event_log_storage.get_pool_config().default_pool_limit is None
        assert instance.run_coordinator.dequeue_interval_seconds == 1  # type: ignore[attr-defined]


def test_schedule_and_partitions_follow_the_settings():
    settings = Settings.from_env(
        {"GPUPLAN_SCHEDULE_CRON": "30 7 * * 1-5", "GPUPLAN_SCHEDULE_TZ": "Europe/Berlin"}
    )
    defs = build_defs(settings, first_day=date(2026, 11, 1))  # the tick below is a past day
    schedule = defs.resolve_schedule_def("daily_refresh_schedule")
    assert (schedule.cron_schedule, schedule.execution_timezone) == ("30 7 * * 1-5", "Europe/Berlin")
    partitions = defs.resolve_assets_def("offers").partitions_def
    assert partitions.timezone == "Europe/Berlin"

    # A tick plans the day it falls on in the schedule's zone.
    tick = datetime(2026, 11, 30, 7, 30, tzinfo=ZoneInfo("Europe/Berlin"))
    with dg.build_schedule_context(
        scheduled_execution_time=tick, repository_def=defs.get_repository_def()
    ) as context:
        request = schedule.evaluate_tick(context).run_requests[0]
    assert request.partition_key == "2026-11-30"


def test_default_schedule_is_six_in_shanghai_for_that_day():
    defs = build_defs(Settings.from_env({}), first_day=date(2026, 11, 1))  # the tick below is a past day
    schedule = defs.resolve_schedule_def("daily_refresh_schedule")
    assert (schedule.cron_schedule, schedule.execution_timezone) == ("0 6 * * *", "Asia/Shanghai")
    tick = datetime(2026, 11, 29, 22, 0, tzinfo=ZoneInfo("UTC"))  # 06:00 on the 30th in Shanghai
    with dg.build_schedule_context(
        scheduled_execution_time=tick, repository_def=defs.get_repository_def()
    ) as context:
        assert schedule.evaluate_tick(context).run_requests[0].partition_key == "2026-11-30"


def test_loading_the_code_location_opens_no_database(tmp_path, env, monkeypatch):
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    from pipelines.definitions import defs

    dg.Definitions.validate_loadable(defs())
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize(
    ("day", "now", "current"),
    [
        (
            date(2026, 11, 30),
            datetime(2026, 11, 29, 22, 0, tzinfo=ZoneInfo("UTC")),
            True,
        ),  # 06:00 in Shanghai
        (date(2026, 11, 29), datetime(2026, 11, 29, 22, 0, tzinfo=ZoneInfo("UTC")), True),  # yesterday there
        (date(2026, 11, 28), datetime(2026, 11, 29, 22, 0, tzinfo=ZoneInfo("UTC")), False),
        (date(2026, 12, 1), datetime(2026, 11, 29, 22, 0, tzinfo=ZoneInfo("UTC")), False),  # the future
    ],
)
def test_live_crawls_only_observe_the_present(day, now, current):
    assert is_current(day, "Asia/Shanghai", now) is current


@pytest.mark.slow
def test_dg_check_defs_loads_the_project(tmp_path, env):
    """`dg check defs` as a user runs it in the project, on a copy: the suite writes nothing into the
    checkout (dg leaves a .tmp_dagster_home_* folder in its working folder, Python its caches)."""
    dg_cli = Path(sys.executable).with_name("dg")
    root = Path(__file__).parents[2]
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy2(root / "pyproject.toml", project / "pyproject.toml")
    for package in ("config", "gpuplan", "scrapers", "warehouse", "sizing", "digest", "pipelines"):
        shutil.copytree(root / package, project / package, ignore=shutil.ignore_patterns("__pycache__"))
    done = subprocess.run(
        [str(dg_cli), "check", "defs"],
        cwd=project,
        env={
            "PATH": str(Path(sys.executable).parent),
            "HOME": str(tmp_path),
            "PYTHONDONTWRITEBYTECODE": "1",
            **env,
        },
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "All definitions loaded successfully" in done.stdout + done.stderr


def test_no_instance_file_at_the_repo_root_where_dagster_dev_would_warn() -> None:
    """README: `DAGSTER_HOME` names a folder with a copy of config/dagster.yaml, and `dg dev` runs
    from the repo root; a dagster.yaml there would make `dagster dev` warn that it is not used."""
    root = Path(__file__).parents[2]
    assert not (root / "dagster.yaml").exists() and not (root / "dagster.yml").exists()
    assert "cp config/dagster.yaml data/dagster/" in (root / "README.md").read_text(encoding="utf-8")

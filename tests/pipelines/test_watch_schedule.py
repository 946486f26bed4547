"""The intraday watches in Dagster (pipelines/intraday.py): the schedule follows GPUPLAN_WATCH_EVERY."""

from __future__ import annotations

from pathlib import Path

import pytest

from config.settings import Settings, SettingsError
from pipelines.definitions import build_defs
from pipelines.intraday import watch_cron


def _settings(tmp_path: Path, **env: str) -> Settings:
    return Settings.from_env({"GPUPLAN_WAREHOUSE": str(tmp_path / "w.duckdb"), **env})


@pytest.mark.parametrize(
    ("every", "cron"), [(None, "*/15 * * * *"), ("10m", "*/10 * * * *"), ("1h", "0 */1 * * *")]
)
def test_the_watch_schedule_runs_every_gpuplan_watch_every(
    tmp_path: Path, every: str | None, cron: str
) -> None:
    env = {"GPUPLAN_WATCH_EVERY": every} if every else {}
    defs = build_defs(_settings(tmp_path, **env))
    (schedule,) = [s for s in defs.schedules or () if s.name == "watch_cycle_schedule"]
    assert schedule.cron_schedule == cron
    assert schedule.job_name == "watch_cycle"


def test_a_period_that_does_not_divide_the_hour_runs_at_its_nearest_divisor_below() -> None:
    assert watch_cron(7) == "*/6 * * * *"
    assert watch_cron(25) == "*/20 * * * *"
    assert watch_cron(300) == "0 */4 * * *"


@pytest.mark.parametrize("every", ["0", "soon", "2d", "1441"])
def test_a_bad_watch_period_is_a_clear_error(tmp_path: Path, every: str) -> None:
    with pytest.raises(SettingsError, match="GPUPLAN_WATCH_EVERY"):
        _settings(tmp_path, GPUPLAN_WATCH_EVERY=every)

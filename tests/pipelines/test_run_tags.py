"""What the Dagster instance shows after `gpuplan refresh` in which a platform failed: the run's
tags (origin, failed platforms), its warning, and the cheapest plans' headline and preview."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path

import dagster as dg
import pytest
from typer.testing import CliRunner

from config.settings import Settings
from gpuplan.cli import app
from pipelines.assets.crawls import FAILED_TAG
from pipelines.definitions import build_defs
from pipelines.runs import ORIGIN_TAG, execute_day
from scrapers import registry

pytestmark = pytest.mark.slow

DAY = dt.date(2026, 11, 30)


def _bodies(folder: Path) -> list[Path]:
    snapshot = json.loads((folder / "snapshot.json").read_text("utf-8"))
    return [(folder / exchange["response"]["body_file"]).resolve() for exchange in snapshot["exchanges"]]


def test_a_run_with_a_failed_platform_says_so_on_the_instance(
    settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = "vastai"
    fixtures = tmp_path / "fixtures"
    shutil.copytree(registry.FIXTURES / broken, fixtures / broken)
    for platform in registry.platforms():
        if platform != broken:
            (fixtures / platform).symlink_to(registry.FIXTURES / platform, target_is_directory=True)
    for body in _bodies(fixtures / broken):
        assert body.is_relative_to(fixtures / broken)
        body.write_text("<html>we changed our site</html>")
    monkeypatch.setattr(registry, "FIXTURES", fixtures)
    home = tmp_path / "dagster_home"
    home.mkdir()
    shutil.copy2(Path(__file__).parents[2] / "config" / "dagster.yaml", home / "dagster.yaml")
    monkeypatch.setenv("DAGSTER_HOME", str(home))

    result = execute_day(settings, DAY, offline=True, platforms=[broken, "datacrunch"], wait_s=30)

    assert result.failures == []  # one platform down is not a failed run
    with dg.DagsterInstance.get() as instance:
        runs = instance.get_runs()
        assert len(runs) == 2  # the replayed day before, then the day
        tags = {run.tags["dagster/partition"]: run.tags for run in runs}
        today, before = tags[DAY.isoformat()], tags[(DAY - dt.timedelta(days=1)).isoformat()]
        assert today[ORIGIN_TAG] == before[ORIGIN_TAG] == "gpuplan refresh"
        assert today["gpuplan/crawls"] == "offline"
        assert today[FAILED_TAG] == broken  # the day's snapshot is broken, not the one before
        assert FAILED_TAG not in before
        warnings = [
            entry.message
            for entry in instance.all_logs(result.run_id)
            if entry.level == 30 and FAILED_TAG not in entry.message
        ]
        assert any(f"platform crawls failed: {broken}" in message for message in warnings)

        event = instance.get_latest_materialization_event(dg.AssetKey("cheapest_plans"))
        assert event is not None and event.asset_materialization is not None
        metadata = event.asset_materialization.metadata
    headline = metadata["headline"]
    assert isinstance(headline, dg.TextMetadataValue)
    assert headline.value.startswith(f"{DAY}: ") and " → " in headline.value and " USD for " in headline.value
    preview = metadata["preview"].value
    assert isinstance(preview, str)
    # the CLI's headers, every column, and what changed against the day before
    assert preview.splitlines()[2].startswith("| model | by | plan | CNY/mo |") and "| changed |" in preview
    assert "\n- by: " in preview  # the legend of the short headers
    # the partitions now start at the first day the warehouse holds (the replayed one)
    partitions = build_defs(settings).resolve_assets_def("offers").partitions_def
    assert partitions is not None
    assert partitions.get_first_partition_key() == (DAY - dt.timedelta(days=1)).isoformat()


def test_an_offline_refresh_says_it_does_not_read_the_users_quotes_file(
    env: dict[str, str], tmp_path: Path
) -> None:
    quotes = tmp_path / "quotes.yaml"
    quotes.write_text("quotes: []\n")
    result = CliRunner().invoke(
        app,
        ["refresh", "--offline", "--date", DAY.isoformat(), "--platform", "datacrunch"],
        env={**env, "GPUPLAN_QUOTES_FILE": str(quotes)},
    )
    assert result.exit_code == 0, result.output
    assert (
        "offline: GPUPLAN_QUOTES_FILE is not read; the bundled example quotes are replayed" in result.output
    )

"""`gpuplan refresh` ends with its answer: below the plans table, three lines saying which platforms
failed (by name), how many plans changed (one per changed plan, as the digest counts them) and
what the run did with the digest; the legend names only the marks the table shows (--legend: all).
Off a terminal, the replayed day before is two lines, not a line per platform."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from digest.changes import changed_plans
from gpuplan.cli import app
from scrapers import registry

pytestmark = pytest.mark.slow

DAY = dt.date(2026, 11, 30)
BROKEN = "vastai"


def _bodies(folder: Path) -> list[Path]:
    snapshot = json.loads((folder / "snapshot.json").read_text("utf-8"))
    return [(folder / exchange["response"]["body_file"]).resolve() for exchange in snapshot["exchanges"]]


def test_the_summary_names_the_failed_platform_counts_changed_plans_and_says_what_the_digest_did(
    env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fixtures = tmp_path / "fixtures"
    shutil.copytree(registry.FIXTURES / BROKEN, fixtures / BROKEN)
    for platform in registry.platforms():
        if platform != BROKEN:
            (fixtures / platform).symlink_to(registry.FIXTURES / platform, target_is_directory=True)
    for body in _bodies(fixtures / BROKEN):  # the day's snapshot broken, the day before's intact
        body.write_text("<html>we changed our site</html>")
    monkeypatch.setattr(registry, "FIXTURES", fixtures)

    platforms = ["--platform", BROKEN, "--platform", "datacrunch", "--platform", "runpod"]
    result = CliRunner().invoke(
        app, ["refresh", "--offline", "--date", DAY.isoformat(), *platforms], env={**env, "COLUMNS": "80"}
    )

    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    before = DAY - dt.timedelta(days=1)
    # the replayed day before is said, not listed platform by platform
    assert lines[0] == f"replaying {before}, the recorded day before: 3 platforms"
    assert lines[1] == f"replayed {before}: 3 of 3 platforms ok"
    assert sum(line.startswith(f"{BROKEN}: ") for line in lines) == 1
    with duckdb.connect(env["GPUPLAN_WAREHOUSE"], read_only=True) as con:
        changed = len(changed_plans(con, DAY))
    # (the day's non-zero count against the digest's: tests/pipelines/test_demo.py)
    failed, plans, digest = lines[-3:]
    assert failed == f"failed: {BROKEN}; 2 of 3 platforms ok"
    assert plans.startswith("plans: 24 (") and plans.endswith(
        f"; {changed} plan changes since the day before"
    )
    assert digest == "digest: not sent (offline run); `gpuplan digest --preview FILE.html` shows it"
    # the legend: the rankings and the marks the table shows, not every column's meaning
    title = lines.index(f"Cheapest plans, {DAY}")
    legend = next(i for i in range(title, len(lines)) if lines[i].startswith("by: "))
    said = " ".join(lines[legend : legend + 2])
    assert "--legend: every column" in said and "USD/Btok:" not in said
    hidden = next(i for i in range(title, len(lines)) if lines[i].startswith("hidden at this width"))
    # the table, its legend and the summary fit; the notes between them are prose, a line each
    assert max(len(line) for line in [*lines[title : hidden + 1], *lines[-3:]]) <= 80


def test_legend_explains_every_column(env: dict[str, str]) -> None:
    args = ["refresh", "--offline", "--date", DAY.isoformat(), "--platform", "datacrunch", "--legend"]
    result = CliRunner().invoke(app, args, env={**env, "COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert "USD/Btok: hourly rent over tokens per hour" in said and "--legend: every column" not in said
    assert result.output.splitlines()[-3] == "failed: none; 1 of 1 platforms ok"

"""A warehouse with two days or more shows the product: plan changes, with reasons, and a chart.

1. On REAL history: the four SkyPilot Lambda catalogs of April-May 2026 (../shared/samples/), imported
   and planned by the pipeline's own functions (`backfill_plans`). Lambda raised every price 13-50 %
   between the 2 and the 6 April catalogs, so every plan of 6 April changed.
2. The offline demo: `gpuplan refresh --offline` on a fresh warehouse loads two recorded
   days per platform; `gpuplan digest --preview` must then show changes and a chart. It runs once the
   bundled snapshots hold the previous day (`scrapers/fixtures/<slug>/previous/`).
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
import warehouse_template
from typer.testing import CliRunner

from config.settings import Settings
from digest.content import build_digest
from digest.render import render
from gpuplan.cli import app
from scrapers.history import formats
from scrapers.registry import fixture_dir, platforms
from warehouse.backfill import backfill_plans
from warehouse.imports import import_file
from warehouse.plan_sequence import PlanOptions

LAMBDA_DAYS = ("2026-04-02", "2026-04-06", "2026-04-20", "2026-05-07")
SETTINGS = Settings.from_env({})  # the default models and methods


@pytest.fixture(scope="module")
def lambda_history(sample):
    con = warehouse_template.scratch()
    for day in LAMBDA_DAYS:
        import_file(con, formats.get("skypilot"), sample(f"skypilot_catalog_format/lambda_vms_{day}.csv"))
    backfill_plans(con, PlanOptions.from_settings(SETTINGS), None, None)
    yield con
    con.close()


@pytest.mark.slow  # backfills real history
def test_real_history_gives_one_entry_per_changed_plan_with_reasons_and_a_chart(lambda_history):
    con = lambda_history
    digest = build_digest(con, date(2026, 4, 6), price_move_pct=SETTINGS.price_move_pct)
    [(rows, plans)] = con.execute(
        "SELECT count(*), count(DISTINCT (model, method, ranking)) FROM plan_changes "
        "WHERE change_date = DATE '2026-04-06'"
    ).fetchall()
    assert len(digest.plan_changes) == plans == len(SETTINGS.models) * len(SETTINGS.methods) * 2
    assert rows >= plans
    for change in digest.plan_changes:
        assert change.old.platform == change.new.platform == "lambda"
        assert change.pct_change is not None and change.pct_change > 0  # every plan got dearer
        assert change.reasons, change  # and the mail says why
    rendered = render(digest, "en")
    assert rendered.images, "two days of prices and news: the chart is drawn"
    # each rise is said once, above the plans it moved: "lambda's V100 16GB rose 12.0% to ..., still
    # the best in 6 plans"
    causes = [line for line in rendered.text.splitlines() if line.startswith("lambda's ")]
    assert causes and all(" rose " in line and " still the best in " in line for line in causes)
    assert sum(int(line.rsplit(" ", 2)[-2]) for line in causes) <= len(digest.plan_changes)


def _two_day_demo() -> bool:
    return any((fixture_dir(slug) / "previous").is_dir() for slug in platforms())


@pytest.mark.slow
@pytest.mark.skipif(
    not _two_day_demo(), reason="the bundled snapshots hold one day (no scrapers/fixtures/*/previous/ yet)"
)
def test_a_fresh_offline_refresh_then_preview_shows_changes_and_a_chart(tmp_path: Path):
    env = {
        "GPUPLAN_WAREHOUSE": str(tmp_path / "warehouse.duckdb"),
        "GPUPLAN_CRAWL_DIR": str(tmp_path / "crawls"),
    }
    runner = CliRunner()
    refreshed = runner.invoke(app, ["refresh", "--offline"], env=env)
    assert refreshed.exit_code == 0, refreshed.output
    out = tmp_path / "digest.html"
    previewed = runner.invoke(app, ["digest", "--preview", str(out)], env=env)
    assert previewed.exit_code == 0, previewed.output
    assert "plan change" in previewed.output.splitlines()[0], previewed.output
    page = out.read_text(encoding="utf-8")
    assert 'src="data:image/png;base64,' in page  # the chart
    assert "why: " in page

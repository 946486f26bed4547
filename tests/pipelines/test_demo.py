"""A first offline refresh shows the product: the day before from the snapshots' `previous/`, then the day.

Every platform's bundled fixture holds a recorded day before (`scrapers/fixtures/<slug>/previous/`,
RECONSTRUCTED on public clients' structure, and for `quotes` the same example file a day earlier:
see each fixture's README). A first `gpuplan refresh --offline` on a fresh warehouse replays those first,
as the day before, then the latest snapshots, so its plans already show changes.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import duckdb
import pytest
from typer.testing import CliRunner

from digest.changes import changed_plans
from gpuplan.cli import app
from scrapers import registry
from warehouse import daily_plans

pytestmark = pytest.mark.slow

DAY = dt.date(2026, 11, 30)
BEFORE = DAY - dt.timedelta(days=1)
VAST_OFFER = "28941031"  # a Vast 1x H100 SXM whose price differs between the two recorded days


def _recorded_price(folder: Path, offer_id: str) -> float:
    rows = [json.loads(line) for line in (folder / "expected.jsonl").read_text("utf-8").splitlines()]
    (price,) = {
        r["price_amount"] for r in rows if r["offer_id"] == offer_id and r["pricing_type"] == "on_demand"
    }
    return float(price)


def _with_previous() -> list[str]:
    return [p for p in registry.platforms() if registry.previous_fixture_dir(p) is not None]


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, str], list[str]]:
    root = tmp_path_factory.mktemp("demo")
    env = {"GPUPLAN_WAREHOUSE": str(root / "warehouse.duckdb"), "GPUPLAN_CRAWL_DIR": str(root / "crawls")}
    outputs = []
    for _ in range(2):  # a first run, and a later one
        result = CliRunner().invoke(app, ["refresh", "--offline", "--date", DAY.isoformat()], env=env)
        assert result.exit_code == 0, result.output
        outputs.append(result.output)
    return env, outputs


def _reader(env: dict[str, str]) -> duckdb.DuckDBPyConnection:
    return duckdb.connect(env["GPUPLAN_WAREHOUSE"], read_only=True)


def test_a_fresh_offline_refresh_plans_the_day_before_first_and_shows_changes(demo) -> None:
    env, outputs = demo
    with _reader(env) as con:
        changes = daily_plans.changes_for_date(con, DAY)
        days = con.execute(
            "SELECT plan_date, count(DISTINCT platform) FROM plan_crawls GROUP BY ALL ORDER BY ALL"
        ).fetchall()
        planned = con.execute(
            "SELECT plan_date, min(computed_at) FROM cheapest_plans GROUP BY ALL ORDER BY ALL"
        ).fetchall()
        vast = con.execute(
            "SELECT c.plan_date, o.price_amount FROM offers o JOIN plan_crawls c USING (crawl_id) "
            "WHERE c.platform = 'vastai' AND o.offer_id = $id AND o.pricing_type = 'on_demand' ORDER BY ALL",
            {"id": VAST_OFFER},
        ).fetchall()
    assert not changes.empty, "the first offline run shows no change"
    assert "0 change(s)" not in outputs[0]
    # one count of what changed: a changed plan once, whatever its kinds, as the digest counts it
    with _reader(env) as con:
        changed = daily_plans.count_changed_plans(con, DAY)
        said = len(changed_plans(con, DAY))
    assert changed == said > 0
    assert f"{changed} plan changes since the day before" in " ".join(outputs[0].split())
    assert days == [(BEFORE, len(_with_previous())), (DAY, len(registry.platforms()))]
    assert planned[0][0] == BEFORE and planned[0][1] < planned[1][1], "the day before is planned first"
    latest = registry.fixture_dir("vastai")
    assert vast == [
        (BEFORE, pytest.approx(_recorded_price(latest / registry.PREVIOUS, VAST_OFFER))),
        (DAY, pytest.approx(_recorded_price(latest, VAST_OFFER))),
    ], "the day before came from previous/"


def test_demo_data_is_offline_and_later_runs_keep_working(demo) -> None:
    env, outputs = demo
    with _reader(env) as con:
        offline = con.execute("SELECT DISTINCT offline FROM crawl_runs").fetchall()
        runs_before = con.execute(
            "SELECT count(DISTINCT crawl_id) FROM plan_crawls WHERE plan_date = $d", {"d": BEFORE}
        ).fetchall()
        changes = daily_plans.changes_for_date(con, DAY)
    assert offline == [(True,)], "demo data must never stand for a live crawl"
    assert runs_before == [(len(_with_previous()),)], "the later run crawled no day before again"
    assert not changes.empty and "Cheapest plans" in outputs[1]


def test_the_demo_shows_every_spider_scrapy_lists(demo) -> None:
    """`scrapy list` (the spider loader, from the repository root) is the list of platforms: the
    first offline refresh says what each of them did, one line each, the key-needing ones too."""
    listed = subprocess.run(
        [sys.executable, "-m", "scrapy", "list"],
        cwd=Path(__file__).parents[2],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout.split()
    _, outputs = demo
    assert len(listed) >= 28, listed
    missing = [name for name in listed if not re.search(rf"^{re.escape(name)}: ok, [1-9]", outputs[0], re.M)]
    assert not missing, f"no 'ok' line for {missing} in:\n{outputs[0]}"
    assert f" offers from {len(listed)} of {len(listed)} platforms" in outputs[0]


def test_the_demo_has_monthly_or_longer_prices_from_five_platforms_besides_quotes(demo) -> None:
    """Monthly (包月) prices from the platforms, not only the broker file: billed by the
    month or year, or with a minimum term of at least a month (the billing macro's hours)."""
    env, _ = demo
    with _reader(env) as con:
        rows = con.execute(
            "SELECT platform, count(*) FROM offers "
            "WHERE hours_per_billing_period(billing_period) * min_term_periods "
            ">= hours_per_billing_period('month') AND platform <> 'quotes' GROUP BY ALL ORDER BY ALL"
        ).fetchall()
    assert len(rows) >= 5, rows


def test_a_long_job_is_cheapest_on_a_monthly_offer_and_a_short_one_by_the_hour(demo) -> None:
    """Monthly offers win where they are cheaper for a job that long: a month of work on a monthly
    quote, two days of work by the hour (its minimum term would cost a whole month)."""
    env, _ = demo

    def best(tokens: str) -> dict[str, Any]:
        ask = ["plans", "--model", "13B", "--method", "lora", "--tokens", tokens, "--date", DAY.isoformat()]
        result = CliRunner().invoke(app, [*ask, "--json"], env=env)
        assert result.exit_code == 0, result.output
        return json.loads(result.output)[0]

    long_job, short_job = best("10B"), best("200M")
    assert long_job["billing_period"] in ("month", "year"), long_job
    assert short_job["billing_period"] in ("hour", "day"), short_job

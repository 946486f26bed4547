"""A first offline refresh shows the product: the day before from the snapshots' `previous/`, then the day.

The bundled fixtures will hold a recorded previous day per platform (`scrapers/fixtures/<slug>/
previous/`); until they do, this test builds one in a copy of the fixtures. The previous day here
is SYNTHETIC: each recorded answer a day earlier (its Date header), with every JSON price
(values under keys like price/dph/bid, as the reliability suite finds them) 1.5 times as high,
so the day's plans are cheaper than the day before's: real changes to show.
"""

from __future__ import annotations

import datetime as dt
import email.utils
import json
import re
from pathlib import Path
from typing import Any

import duckdb
import pytest
from typer.testing import CliRunner

from gpuplan.cli import app
from scrapers import registry
from scrapers.replay import SNAPSHOT_FILE
from warehouse import plans

pytestmark = pytest.mark.slow

DAY = dt.date(2026, 11, 30)
BEFORE = DAY - dt.timedelta(days=1)
PRICE_KEY = re.compile(r"price|dph|bid", re.IGNORECASE)
DEARER = 1.5


def _dearer(node: Any, key: str | None = None) -> Any:
    if isinstance(node, dict):
        return {k: _dearer(v, k) for k, v in node.items()}
    if isinstance(node, list):
        return [_dearer(value, key) for value in node]
    if key and PRICE_KEY.search(key) and isinstance(node, int | float) and not isinstance(node, bool):
        return round(node * DEARER, 4)
    return node


def _previous_day(latest: Path, previous: Path) -> None:
    """`latest`'s snapshot recorded a day earlier, its JSON prices DEARER times as high, into `previous`."""
    previous.mkdir(parents=True)
    snapshot = json.loads((latest / SNAPSHOT_FILE).read_text("utf-8"))
    for index, exchange in enumerate(snapshot["exchanges"]):
        response = exchange["response"]
        body = (latest / response["body_file"]).read_bytes()
        if "json" in response["headers"].get("Content-Type", ""):
            body = json.dumps(_dearer(json.loads(body)), ensure_ascii=False).encode("utf-8")
        if "Date" in response["headers"]:
            sent = email.utils.parsedate_to_datetime(response["headers"]["Date"])
            response["headers"]["Date"] = email.utils.format_datetime(
                sent - dt.timedelta(days=1), usegmt=True
            )
        response["body_file"] = f"{index:02d}-previous.body"
        (previous / response["body_file"]).write_bytes(body)
    snapshot["synthetic"] = True
    (previous / SNAPSHOT_FILE).write_text(json.dumps(snapshot, ensure_ascii=False), "utf-8")


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, str], list[str]]:
    root = tmp_path_factory.mktemp("demo")
    fixtures = root / "fixtures"
    for platform in registry.platforms():
        latest = registry.fixture_dir(platform)
        folder = fixtures / platform
        folder.mkdir(parents=True)
        for path in latest.iterdir():  # the latest day as bundled; relative body paths still resolve
            (folder / path.name).symlink_to(path.resolve(), target_is_directory=path.is_dir())
        _previous_day(latest, folder / registry.PREVIOUS)
    env = {"GPUPLAN_WAREHOUSE": str(root / "warehouse.duckdb"), "GPUPLAN_CRAWL_DIR": str(root / "crawls")}
    outputs = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(registry, "FIXTURES", fixtures)
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
        changes = plans.changes_for_date(con, DAY)
        days = con.execute(
            "SELECT plan_date, count(DISTINCT platform) FROM plan_crawls GROUP BY ALL ORDER BY ALL"
        ).fetchall()
        planned = con.execute(
            "SELECT plan_date, min(computed_at) FROM cheapest_plans GROUP BY ALL ORDER BY ALL"
        ).fetchall()
        vast = con.execute(
            "SELECT c.plan_date, min(o.price_usd_per_gpu_hour) FROM offers o "
            "JOIN plan_crawls c USING (crawl_id) WHERE c.platform = 'vastai' GROUP BY ALL ORDER BY ALL"
        ).fetchall()
    assert not changes.empty, "the first offline run shows no change"
    assert "0 change(s)" not in outputs[0]
    platforms = len(registry.platforms())
    assert days == [(BEFORE, platforms), (DAY, platforms)]
    assert planned[0][0] == BEFORE and planned[0][1] < planned[1][1], "the day before is planned first"
    (_, before_price), (_, day_price) = vast
    assert before_price == pytest.approx(day_price * DEARER, rel=0.01), "the day before came from previous/"


def test_demo_data_is_offline_and_later_runs_keep_working(demo) -> None:
    env, outputs = demo
    with _reader(env) as con:
        offline = con.execute("SELECT DISTINCT offline FROM crawl_runs").fetchall()
        runs_before = con.execute(
            "SELECT count(DISTINCT crawl_id) FROM plan_crawls WHERE plan_date = $d", {"d": BEFORE}
        ).fetchall()
        changes = plans.changes_for_date(con, DAY)
    assert offline == [(True,)], "demo data must never stand for a live crawl"
    assert runs_before == [(len(registry.platforms()),)], "the later run crawled no day before again"
    assert not changes.empty and "Cheapest plans" in outputs[1]

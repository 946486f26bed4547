"""The daily Dagster run with failing platforms, while two other processes hold the warehouse open.

One run of the pipeline's own assets and checks (crawls, offers, plans, digest) for DAY, with the
crawler resource pointed at fault servers: one platform's server answers HTTP 503 every time,
one answers an empty list, one answers as recorded. Meanwhile `reader_child.py` runs twice: one
process holds a read-only connection throughout, one opens a fresh one for every read.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import dagster as dg
import pytest
from loopback import serving

from config.settings import Settings
from pipelines.assets.crawls import CRAWLED, crawl_key
from pipelines.assets.crawls import GROUP as CRAWLS
from pipelines.definitions import build_defs
from pipelines.resources import CrawlerResource, MailerResource, WarehouseResource
from reliability.fake_secrets import FAKE_SECRETS
from reliability.fault_days import CRAWL_TIMEOUT_S, LOOPBACK_SETTINGS, day_settings, http_date, run_day
from reliability.faults import BY_NAME, empty_list_error, platforms_for, snapshot, web_platforms
from reliability.synthetic_crawls import PLATFORM, write_crawl
from scrapers.crawl.runner import CrawlJob, Progress, iter_crawls
from scrapers.platform import ORIGIN_OVERRIDE_SETTING
from warehouse import daily_plans
from warehouse.engine import connect

pytestmark = pytest.mark.faults

HISTORY_DAY = date(2026, 11, 29)
DAY = date(2026, 11, 30)  # the fixtures' recorded day, a partition that exists whatever the clock says
READER = Path(__file__).with_name("reader_child.py")


class LoopbackCrawler(CrawlerResource):
    """The pipeline's crawler resource with each platform's requests sent to its fault server
    (live crawls, all in one crawl process, as the pipeline runs them)."""

    origins: dict[str, str]

    def crawl_progress(self, platforms: Sequence[str], out_dir: Path) -> Iterator[Progress]:
        jobs = [
            CrawlJob(
                platform, settings={ORIGIN_OVERRIDE_SETTING: self.origins[platform], **LOOPBACK_SETTINGS}
            )
            for platform in platforms
        ]
        return iter_crawls(jobs, out_dir, timeout_s=CRAWL_TIMEOUT_S)


@dataclass(frozen=True)
class DailyRun:
    settings: Settings
    result: dg.ExecuteInProcessResult
    faults: dict[str, str]  # platform -> fault name
    history: dict[str, object]  # what the warehouse held before the run
    readers: dict[str, dict[str, list]]  # "hold" | "poll" -> the reader's report


def _holding(mode: str, settings: Settings, stop_file: Path) -> subprocess.Popen[str]:
    reader = subprocess.Popen(
        [sys.executable, str(READER), mode, str(settings.warehouse), str(stop_file)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert reader.stdout.readline().strip() == "ready", reader.stderr.read()
    return reader


def _holdings(settings: Settings) -> dict[str, object]:
    with connect.reader(settings.warehouse) as con:
        return {
            "offers_by_crawl": dict(
                con.execute("SELECT crawl_id, count(*) FROM offers GROUP BY ALL").fetchall()
            ),
            "plans": con.execute(
                "SELECT * EXCLUDE (computed_at) FROM cheapest_plans ORDER BY ALL"
            ).fetchall(),
        }


@pytest.fixture(scope="module")
def daily_run(tmp_path_factory: pytest.TempPathFactory) -> DailyRun:
    root = tmp_path_factory.mktemp("daily-run")
    settings = day_settings(root)
    write_crawl(settings.crawl_dir / HISTORY_DAY.isoformat(), HISTORY_DAY, 40)
    run_day(settings, HISTORY_DAY)
    history = _holdings(settings)
    down = web_platforms()[0]
    empty = next(platform for platform in platforms_for(BY_NAME["empty_list"]) if platform != down)
    healthy = next(platform for platform in web_platforms() if platform not in (down, empty))
    faults = {down: "server_error_persisting", empty: "empty_list", healthy: "clean"}
    chosen = list(faults)
    defs = build_defs(settings, offline=True, first_day=DAY)
    # the whole graph but the crawls of the platforms not chosen (as `gpuplan refresh --platform` runs it)
    selection = (dg.AssetSelection.all() - dg.AssetSelection.groups(CRAWLS)) | dg.AssetSelection.assets(
        *(crawl_key(platform) for platform in chosen)
    )
    stop_file = root / "stop-reading"
    with ExitStack() as stack, pytest.MonkeyPatch.context() as env:
        for name, value in FAKE_SECRETS.items():  # the crawls inherit this process's environment
            env.setenv(name, value)
        servers = {}
        for platform, fault in faults.items():
            first, then = BY_NAME[fault].answers(platform, None)
            servers[platform] = stack.enter_context(
                serving(snapshot(platform), http_date(DAY), BY_NAME[fault].rewrite(), first, then)
            )
        readers = {mode: _holding(mode, settings, stop_file) for mode in ("hold", "poll")}
        result = dg.materialize(
            [*defs.assets, *defs.asset_checks],
            selection=selection,
            partition_key=DAY.isoformat(),
            resources={
                "warehouse": WarehouseResource.from_settings(settings),
                # offline: no FX download and no mail; the crawls go to the fault servers either way
                "crawler": LoopbackCrawler(offline=True, origins={p: s.url for p, s in servers.items()}),
                "mailer": MailerResource(),
            },
            instance=dg.DagsterInstance.ephemeral(),
            raise_on_error=False,
        )
        stop_file.touch()
        reports = {}
        for mode, reader in readers.items():
            out, err = reader.communicate(timeout=60)
            assert reader.returncode == 0, err
            reports[mode] = json.loads(out)
    return DailyRun(settings, result, faults, history, reports)


def _by_fault(run: DailyRun, fault: str) -> str:
    return next(platform for platform, name in run.faults.items() if name == fault)


def test_daily_run_goes_on_past_failing_platforms(daily_run: DailyRun) -> None:
    result = daily_run.result
    assert result.success, "a failing platform failed the run"
    down, empty, healthy = (
        _by_fault(daily_run, f) for f in ("server_error_persisting", "empty_list", "clean")
    )
    crawled = {m.asset_key.path[-1]: m.metadata for m in result.asset_materializations_for_node("crawls")}
    assert crawled[down]["status"].value == "failed" and "HTTP 503" in crawled[down]["error"].value
    assert crawled[empty]["status"].value == "failed"
    assert empty_list_error(empty) in crawled[empty]["error"].value
    assert crawled[healthy]["status"].value == "ok"
    crawled = {e.asset_key: e.passed for e in result.get_asset_check_evaluations() if e.check_name == CRAWLED}
    assert crawled == {crawl_key(down): False, crawl_key(empty): False, crawl_key(healthy): True}
    checks = {e.check_name: e.passed for e in result.get_asset_check_evaluations() if e.check_name != CRAWLED}
    assert checks["every_ask_has_a_plan"] and checks["prices_believable"]
    (offers,) = [
        m.metadata for m in result.asset_materializations_for_node("offers") if m.asset_key.path == ["offers"]
    ]
    assert offers["failed_platforms"].value == ", ".join(sorted((down, empty)))
    with connect.reader(daily_run.settings.warehouse) as con:
        day_crawls = daily_plans.day_crawls(con, DAY).set_index("platform")
        day_plans = daily_plans.plans_for_date(con, DAY)
    # the history's platform, not crawled today, past GPUPLAN_STALE_HOURS: recorded as it drops out
    assert dict(day_crawls["status"]) == {
        down: "failed",
        empty: "failed",
        healthy: "ok",
        PLATFORM: "not_crawled",
    }
    assert day_crawls.loc[healthy, "offers_loaded"] > 0
    assert set(day_plans.loc[day_plans["status"] == "ok", "platform"]) <= {healthy}
    after = _holdings(daily_run.settings)
    assert {crawl: after["offers_by_crawl"].get(crawl) for crawl in daily_run.history["offers_by_crawl"]} == (
        daily_run.history["offers_by_crawl"]
    )
    assert [row for row in after["plans"] if row[0] == HISTORY_DAY] == daily_run.history["plans"]


def test_readers_holding_the_warehouse_through_the_daily_run(daily_run: DailyRun) -> None:
    assert daily_run.result.success  # the writer was never blocked by the readers
    hold, poll = daily_run.readers["hold"], daily_run.readers["poll"]
    assert hold["errors"] == [] and poll["errors"] == []
    first = hold["observations"][0]
    assert all(seen == first for seen in hold["observations"]), "the held snapshot changed under its reader"
    assert len(hold["observations"]) > 10 and len(poll["observations"]) > 10, "the readers hardly read"
    for seen in poll["observations"]:
        assert seen["offers"] == seen["offers_loaded"] and seen["orphan_plan_crawls"] == 0, seen
    for earlier, later in zip(poll["observations"], poll["observations"][1:], strict=False):
        assert later["offers"] >= earlier["offers"] and later["crawls"] >= earlier["crawls"], (earlier, later)
    with connect.reader(daily_run.settings.warehouse) as con:
        [(offers, crawls, plan_rows)] = con.execute(
            "SELECT (SELECT count(*) FROM offers), (SELECT count(*) FROM crawl_runs), "
            "(SELECT count(*) FROM cheapest_plans)"
        ).fetchall()
    assert poll["observations"][0] == first
    assert (poll["observations"][-1]["offers"], poll["observations"][-1]["crawls"]) == (offers, crawls)
    assert poll["observations"][-1]["plans"] == plan_rows > first["plans"]

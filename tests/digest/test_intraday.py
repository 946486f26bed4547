"""Intraday watches (digest/intraday.py): real crawls of Vast.ai's recorded answer through a loopback
server, loaded into a real warehouse, checked cycle by cycle, pushed to a loopback channel."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from datetime import UTC, date, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path

import pytest
from loopback import Reply, serving
from push_server import PushServer
from reliability.faults import snapshot
from reliability.synthetic_crawls import PLATFORM, write_crawl

from config.notify_file import parse_channels
from config.watches_file import parse_watches
from digest.intraday import fired_line, watch_key
from digest.wording import Wording
from pipelines.intraday import needed_platforms, run_cycle
from scrapers.crawl.runner import CrawlJob, crawl
from scrapers.crawl.summary import CrawlSummary
from scrapers.platform import ORIGIN_OVERRIDE_SETTING
from scrapers.replay import Exchange
from sizing.jobs import Job
from warehouse.engine import connect
from warehouse.job_plans import plan_job
from warehouse.loading import load_crawl

# Vast.ai's recorded answer lists one A100 SXM 80GB machine: 8 GPUs free (offer 28422871).
LISTING = 28422871
LOOPBACK = {"AUTOTHROTTLE_ENABLED": "False", "DOWNLOAD_DELAY": "0", "DOWNLOAD_TIMEOUT": "5"}
WATCHES = """\
- gpu: A100 SXM 80GB
  min_available_gpus: 8
  platforms: [vastai]
"""


@pytest.fixture
def push_server() -> Iterator[PushServer]:
    served = PushServer()
    yield served
    served.close()


def _listed(present: list[bool]):
    """A rewrite of the recorded answer that lists LISTING only while `present[0]` is True."""

    def rewrite(exchange: Exchange) -> Reply:
        body = json.loads(exchange.body)
        if not present[0]:
            body["offers"] = [offer for offer in body["offers"] if offer["id"] != LISTING]
        return Reply(exchange.status, dict(exchange.headers), json.dumps(body).encode())

    return rewrite


@pytest.mark.slow
def test_a_listing_that_appears_stays_goes_and_comes_back_fires_twice(
    tmp_path: Path, push_server: PushServer
) -> None:
    watches = parse_watches(WATCHES, "watches.yaml", ["vastai"])
    channels = parse_channels(
        "- kind: webhook\n  url: ${BASE}/hook\n  send: [watches]", "notify.yaml", {"BASE": push_server.url}
    )
    warehouse = tmp_path / "warehouse.duckdb"
    present = [False]
    fired, crawled = [], []
    with serving(snapshot("vastai"), "", _listed(present)) as server:

        def crawl_loopback(names: Sequence[str], out_dir: Path) -> list[CrawlSummary]:
            crawled.append(list(names))
            jobs = [CrawlJob(name, {ORIGIN_OVERRIDE_SETTING: server.url}) for name in names]
            return crawl(jobs, out_dir, settings=LOOPBACK, timeout_s=120)

        for n, listed in enumerate([False, True, True, False, True]):
            present[0] = listed
            # the platform's clock, a second on per cycle: two cycles within one second would quote
            # the same answer at the same Date, one crawl (its id is its feed's hash) loaded twice
            server.date_header = format_datetime(datetime.now(UTC) + timedelta(seconds=n), usegmt=True)
            cycle = run_cycle(
                warehouse, tmp_path / f"cycle{n}", watches, {}, ["runpod", "vastai"], crawl_loopback, channels
            )
            assert [load.status for load in cycle.loads] == ["ok"]
            (check,) = cycle.checks
            assert check.known and check.holding == listed
            fired.append(check.fired)
    assert crawled == [["vastai"]] * 5  # only the platform the watch names
    assert fired == [False, True, False, False, True]
    hooks = [r.body for r in push_server.requests if r.path == "/hook"]
    key = watch_key(watches[0])
    assert [hook["key"] for hook in hooks] == [f"watch:{key}:1", f"watch:{key}:2"]
    (entry,) = hooks[0]["entries"]
    assert entry["now"]["value"] == 8 and entry["now"]["platform"] == "vastai"
    assert "A100 SXM 80GB" in hooks[0]["text"] and "vastai" in hooks[0]["text"]
    with connect.writer(warehouse, publish=False) as con:  # the crawls are history; no plans were made
        ((runs,),) = con.execute("SELECT count(*) FROM crawl_runs WHERE platform = 'vastai'").fetchall()
        ((plans,),) = con.execute("SELECT count(*) FROM best_plans").fetchall()
    assert runs == 5 and plans == 0
    assert not warehouse.exists()  # nothing published: the daily run publishes


def test_a_cycle_crawls_only_what_the_watches_need() -> None:
    known = ["autodl", "runpod", "vastai"]
    named = parse_watches("- gpu: H100\n  below_usd_per_gpu_hour: 2\n  platforms: [runpod]\n", "w", known)
    anywhere = parse_watches("- gpu: H100\n  min_available_gpus: 8\n", "w", known)
    job = parse_watches("- job: mine\n  below_total_usd: 900\n", "w", known)
    assert needed_platforms(named, {}, known) == ["runpod"]
    assert needed_platforms(named + anywhere, {}, known) == known
    mine = Job(name="mine", model="7B", method="lora", tokens=1e9, platforms=("autodl",))
    assert needed_platforms(named + job, {"mine": mine}, known) == ["autodl", "runpod"]
    assert needed_platforms(job, {}, known) == known


def test_a_job_watch_fires_once_with_the_plan_the_job_planner_makes(tmp_path: Path) -> None:
    day = date.today() - timedelta(days=1)  # crawled yesterday: the latest crawl, never ahead of now
    job = Job(name="tiny", model="7B", method="lora", tokens=1e8, within_days=30)
    watches = parse_watches("- job: tiny\n  below_total_usd: 100000\n", "watches.yaml", [PLATFORM])
    warehouse = tmp_path / "warehouse.duckdb"
    crawled: list[list[str]] = []

    def crawl_synthetic(names: Sequence[str], out_dir: Path) -> list[CrawlSummary]:
        crawled.append(list(names))
        return [CrawlSummary.read(write_crawl(out_dir, day, 40 + len(crawled)))]

    first = run_cycle(warehouse, tmp_path / "c1", watches, {"tiny": job}, [PLATFORM], crawl_synthetic)
    second = run_cycle(warehouse, tmp_path / "c2", watches, {"tiny": job}, [PLATFORM], crawl_synthetic)
    assert crawled == [[PLATFORM], [PLATFORM]]  # a job with no platforms: every platform
    assert [c.fired for c in first.checks + second.checks] == [True, False]
    (check,) = first.checks
    assert check.reading is not None
    with connect.writer(warehouse, publish=False) as con:  # the planner of `gpuplan plans --tokens`
        best = plan_job(con, job, start_at=first.checked_at).plans[0]
    assert (check.reading.platform, check.reading.gpu_model, check.reading.gpu_count) == (
        PLATFORM,
        best["gpu_model"],
        best["gpu_count"],
    )
    assert check.reading.value == pytest.approx(best["total_usd"])
    assert check.reading.finish is not None and check.reading.finish <= first.checked_at + timedelta(days=30)
    line = fired_line(Wording.of("en"), check)
    assert PLATFORM in line and "finishing " + check.reading.finish.strftime("%Y-%m-%d %H:%M UTC") in line


def test_an_outage_neither_fires_nor_rearms_a_watch(tmp_path: Path) -> None:
    day = date.today() - timedelta(days=1)
    watches = parse_watches("- gpu: H100\n  min_available_gpus: 8\n", "watches.yaml", [PLATFORM])
    warehouse = tmp_path / "warehouse.duckdb"
    outcomes = iter(["ok", "failed", "ok", "ok"])
    offers = iter([10, 11, 12, 13])

    def crawl_synthetic(names: Sequence[str], out_dir: Path) -> list[CrawlSummary]:
        summary = write_crawl(out_dir, day, next(offers))
        status = next(outcomes)
        if status == "failed":  # the platform answered nothing: no feed, a failed crawl
            data = json.loads(summary.read_text("utf-8"))
            data.update(status="failed", error="HTTP 503", items_yielded=0, feed=None)
            summary.write_text(json.dumps(data), "utf-8")
        return [CrawlSummary.read(summary)]

    seen = []
    for n in range(4):
        cycle = run_cycle(warehouse, tmp_path / f"c{n}", watches, {}, [PLATFORM], crawl_synthetic)
        (check,) = cycle.checks
        seen.append((check.known, check.holding, check.fired))
    # 8 GPUs free at synthcloud; the failed crawl in between is no "stopped holding"
    assert seen == [(True, True, True), (False, True, False), (True, True, False), (True, True, False)]
    assert cycle.checks[0].problem is None and cycle.checks[0].fires == 1


FROM_SCRATCH = """
WITH days AS (SELECT DISTINCT run_day FROM gpu_price_votes),
keys AS (SELECT * FROM price_window_keys('days'))
SELECT * FROM price_window_votes('keys') ORDER BY ALL
"""


def _priced_crawl(folder: Path, day: date, platform: str, offers: int, cheapest: float | None = None) -> Path:
    """A SYNTHETIC crawl of `platform` on `day`; its first offer at `cheapest` USD per GPU-hour."""
    summary = write_crawl(folder, day, offers, name=platform, platform=platform)
    if cheapest is not None:
        feed = folder / f"{platform}.jsonl"
        first, *rest = feed.read_text("utf-8").splitlines(keepends=True)
        line = json.loads(first)
        line["price_amount"] = cheapest
        feed.write_text(json.dumps(line) + "\n" + "".join(rest), "utf-8")
    return summary


def test_an_intraday_cycle_leaves_the_votes_and_verdicts_a_full_recompute_gives(tmp_path: Path) -> None:
    """A cycle's loads replace only the votes their crawls touch (one platform on one day); after
    cycles that move a platform's prices, list an implausibly cheap offer and fail a crawl, the
    history rule's votes and verdicts equal those computed from every crawl."""
    today = datetime.now(UTC).date()
    warehouse = tmp_path / "warehouse.duckdb"
    platforms = ["alpha", "beta", "gamma", "delta"]
    with connect.writer(warehouse, publish=False) as con:  # the daily runs of the days before
        for back in (3, 2, 1, 0):
            day = today - timedelta(days=back)
            for n, platform in enumerate(platforms):
                if (platform, back) != ("gamma", 1):  # gamma's vote of that day: its days before
                    load_crawl(con, _priced_crawl(tmp_path / f"daily-{day}", day, platform, 20 + n + back))
    watches = parse_watches(
        "- gpu: H100\n  below_usd_per_gpu_hour: 0.5\n  platforms: [alpha, delta]\n", "w", platforms
    )
    cycles = iter(
        [
            {"alpha": 0.05, "delta": None},  # alpha lists an H100 at a fortieth of the market
            {"alpha": 1.4, "delta": "failed"},
            {"alpha": None, "delta": 0.9},
        ]
    )

    def crawl_synthetic(names: Sequence[str], out_dir: Path) -> list[CrawlSummary]:
        cheapest = next(cycles)
        summaries = []
        for name in names:
            summary = _priced_crawl(
                out_dir, today, name, 30, None if cheapest[name] == "failed" else cheapest[name]
            )
            if cheapest[name] == "failed":
                data = json.loads(summary.read_text("utf-8"))
                data.update(status="failed", error="HTTP 503")
                summary.write_text(json.dumps(data), "utf-8")
            summaries.append(CrawlSummary.read(summary))
        return summaries

    for n in range(3):
        cycle = run_cycle(warehouse, tmp_path / f"cycle{n}", watches, {}, platforms, crawl_synthetic)
        assert cycle.platforms == ("alpha", "delta")
    with connect.writer(warehouse, publish=False) as con:
        stored = con.execute("SELECT * FROM price_reference_votes ORDER BY ALL").fetchall()
        judged = con.execute("SELECT * FROM implausible_offers ORDER BY ALL").fetchall()
        assert stored == con.execute(FROM_SCRATCH).fetchall()
        con.execute("BEGIN TRANSACTION")  # the full recompute: every day's votes from every crawl
        con.execute("DELETE FROM price_reference_votes")
        con.execute("INSERT INTO price_reference_votes " + FROM_SCRATCH)
        assert con.execute("SELECT * FROM implausible_offers ORDER BY ALL").fetchall() == judged
        con.execute("ROLLBACK")
    assert {(row[0], row[3]) for row in stored if row[0] == today} == {(today, p) for p in platforms}
    assert [(row[1], row[8]) for row in judged] == [("alpha", 0.05)]

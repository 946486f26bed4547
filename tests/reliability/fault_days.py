"""Fault days: real crawls against the fault server, then the real loader and plans, day after day.

Day 0 crawls every platform cleanly (the history that must survive). On each later day every
platform gets one fault of its own (faults.platforms_for decides which), so a day shows each
fault beside the others' outcomes: whatever one platform got, the others must end as their own
faults say. All crawls run first. A day's crawls run as the daily run crawls: together, in one crawl
child (`scrapers.crawl.runner.crawl`), each platform against its own loopback server, into
`<crawl_dir>/<day>/`, the Dagster layout; the days' children run side by side. Then the
days are loaded in order, each in one writer session as the daily run does it:
the steps of the `offers`, `gpus` and plan assets (`run_day`). After each day the published
warehouse is read back (`DayState`) with the day's digest as it would be mailed.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import pandas as pd
from loopback import Hit, serving
from warehouse_template import migrated

from config.settings import Settings
from digest.content import build_digest
from digest.render import render
from reliability.faults import (
    BY_NAME,
    CLEAN,
    FAULTS,
    CrawlFault,
    platforms_for,
    snapshot,
    token_env,
    web_platforms,
)
from scrapers.crawl.runner import CrawlJob, crawl
from scrapers.crawl.summary import CrawlSummary
from scrapers.platform import CLOCK_TOLERANCE_SETTING, ORIGIN_OVERRIDE_SETTING
from warehouse import daily_plans, gpus, plan_sequence
from warehouse.engine import connect
from warehouse.loading import LoadResult, load_crawl
from warehouse.plan_sequence import PlanOptions

# The fixtures' recorded day (their Date headers): day 0, the clean history.
FIRST_DAY = date(2026, 11, 30)
# Days crawled at a time: each day is one crawl child (CPU: its start-up, the parsing), so one
# per core.
DAYS_AT_ONCE = os.cpu_count() or 1
# A crawl here takes seconds; a hung one must fail its test, not the suite's time limit.
CRAWL_TIMEOUT_S = 120.0
# Scrapy settings every crawl here runs with: the loopback origin, no politeness delays, a fast
# backoff (retries still happen, in milliseconds) and a short timeout for a loopback answer.
LOOPBACK_SETTINGS = {
    "AUTOTHROTTLE_ENABLED": "False",
    "DOWNLOAD_DELAY": "0",
    "RETRY_BACKOFF_BASE_S": "0.05",
    "DOWNLOAD_TIMEOUT": "5",
    # The days served are any days, not the crawler's: their Date is when the platform quoted.
    CLOCK_TOLERANCE_SETTING: str(100 * 365 * 86_400),
}
# What the day's plans are asked for: two asks keep the sizing step quick and still give plans on
# the smallest and the largest GPUs on offer.
MODELS = ("7B", "70B")
METHODS = ("lora",)
RANKINGS_PER_ASK = len(daily_plans.RANKINGS)


@dataclass
class CrawlRun:
    """One crawl of one platform with one fault on one day, and what became of it."""

    fault: CrawlFault
    platform: str
    day: date
    summary: CrawlSummary
    hits: list[Hit]
    request_headers: list[dict[str, str]]
    load: LoadResult | None = None  # set when the day is loaded
    request_bodies: list[bytes] = field(default_factory=list)


@dataclass(frozen=True)
class DayState:
    """The published warehouse right after a day's run."""

    day: date
    crawls: pd.DataFrame  # plans.day_crawls: the crawl of each platform feeding the day
    offers_by_crawl: dict[str, int]  # every crawl_id in offers -> its rows
    plan_rows: dict[date, list[tuple[Any, ...]]]  # every plan_date -> its cheapest_plans rows
    plans: pd.DataFrame  # the day's cheapest plans
    candidate_platforms: set[str]  # platforms of the day's plan candidates from the day's own crawls
    carried_platforms: set[str]  # platforms whose candidates are carried from an earlier crawl (stale)
    latest_platforms: set[str]  # platforms with rows in latest_offers
    digest_text: str  # the day's digest as mailed: subject and plain text
    digest_html: str


@dataclass
class FaultMatrix:
    settings: Settings
    runs: dict[tuple[str, str], CrawlRun] = field(default_factory=dict)  # (fault, platform) -> run
    states: dict[date, DayState] = field(default_factory=dict)

    def run(self, fault: str, platform: str) -> CrawlRun:
        return self.runs[fault, platform]

    def day_runs(self, day: date) -> list[CrawlRun]:
        return [run for run in self.runs.values() if run.day == day]


def schedule(names: Sequence[str]) -> dict[tuple[str, str], date]:
    """(fault, platform) -> day: day 0 clean for all; then each platform's faults, rotated by its
    position so that a day mixes different faults, one per platform."""
    days: dict[tuple[str, str], date] = {(CLEAN.name, name): FIRST_DAY for name in names}
    for position, name in enumerate(names):
        own = [fault.name for fault in FAULTS if name in platforms_for(fault)]
        width = max(1, len(own))
        for index, fault in enumerate(own):
            days[fault, name] = FIRST_DAY + timedelta(days=1 + (index + position) % width)
    return days


def http_date(day: date) -> str:
    """The Date header the platforms answer with on `day` (06:00 UTC, the schedule's hour)."""
    return format_datetime(datetime(day.year, day.month, day.day, 6, tzinfo=UTC), usegmt=True)


def crawl_day(
    day: date, faults: Sequence[tuple[CrawlFault, str]], settings: Settings, env: Mapping[str, str]
) -> list[CrawlRun]:
    """Crawl each (fault, platform) of `day` into `<crawl_dir>/<day>/`: one real crawl child for the
    day, as the daily run crawls, each platform against its own fault server."""
    with ExitStack() as stack:
        servers = []
        for fault, platform in faults:
            first, then = fault.answers(platform, env.get(token_env(platform) or ""))
            served = serving(snapshot(platform), http_date(day), fault.rewrite(), first, then)
            servers.append(stack.enter_context(served))
        jobs = [
            CrawlJob(platform, {ORIGIN_OVERRIDE_SETTING: server.url, **fault.settings})
            for (fault, platform), server in zip(faults, servers, strict=True)
        ]
        summaries = crawl(
            jobs,
            settings.crawl_dir / day.isoformat(),
            env=env,
            timeout_s=CRAWL_TIMEOUT_S,
            settings=LOOPBACK_SETTINGS,
        )
        return [
            CrawlRun(
                fault,
                platform,
                day,
                summary,
                list(server.hits),
                list(server.request_headers),
                request_bodies=list(server.request_bodies),
            )
            for (fault, platform), server, summary in zip(faults, servers, summaries, strict=True)
        ]


def day_settings(root: Path, env: Mapping[str, str] | None = None) -> Settings:
    """Settings of a warehouse and crawl folder in `root` that plan only MODELS and METHODS."""
    return Settings.from_env(
        {
            **(env or {}),
            "GPUPLAN_WAREHOUSE": str(root / "warehouse.duckdb"),
            "GPUPLAN_CRAWL_DIR": str(root / "crawls"),
            "GPUPLAN_MODELS": ",".join(MODELS),
            "GPUPLAN_METHODS": ",".join(METHODS),
        }
    )


def run_day(settings: Settings, day: date, carry_uncrawled: bool = False) -> list[LoadResult]:
    """The daily run after the crawls, in one writer session: the steps of the `offers`, `gpus`
    and plan assets for one day (load every crawl summary of the day, record them as the day's
    crawls, size, candidates, cheapest plans, changes). `carry_uncrawled` as the `offers` asset
    records a day: the platforms the day did not crawl are carried."""
    with connect.writer(migrated(settings.warehouse)) as con:
        results = [
            load_crawl(con, path)
            for path in sorted((settings.crawl_dir / day.isoformat()).glob("*.summary.json"))
        ]
        loaded = pd.DataFrame(
            [{"platform": r.platform, "crawl_id": r.crawl_id, "status": r.status} for r in results]
        )
        daily_plans.record_plan_crawls(
            con, day, loaded, settings.stale_hours, carry_uncrawled=carry_uncrawled
        )
        gpus.sync_catalog(con)
        plan_sequence.plan_days(con, [day], PlanOptions.from_settings(settings))
    return results


def read_state(settings: Settings, day: date) -> DayState:
    """The published warehouse after `day`'s run, and the day's digest (rendered, not sent)."""
    with connect.reader(settings.warehouse) as con:
        offers = con.execute("SELECT crawl_id, count(*) FROM offers GROUP BY crawl_id").fetchall()
        plan_rows: dict[date, list[tuple[Any, ...]]] = {}
        for row in con.execute("SELECT * EXCLUDE (computed_at) FROM cheapest_plans ORDER BY ALL").fetchall():
            plan_rows.setdefault(row[0], []).append(row)
        candidates = con.execute(
            "SELECT platform, bool_and(stale) FROM plan_candidates WHERE plan_date = $d GROUP BY platform",
            {"d": day},
        ).fetchall()
        latest = con.execute("SELECT DISTINCT platform FROM latest_offers").fetchall()
        rendered = render(build_digest(con, day, price_move_pct=settings.price_move_pct))
        return DayState(
            day=day,
            crawls=daily_plans.day_crawls(con, day),
            offers_by_crawl=dict(offers),
            plan_rows=plan_rows,
            plans=daily_plans.plans_for_date(con, day),
            candidate_platforms={platform for platform, stale in candidates if not stale},
            carried_platforms={platform for platform, stale in candidates if stale},
            latest_platforms={platform for (platform,) in latest},
            digest_text=f"{rendered.subject}\n{rendered.text}",
            digest_html=rendered.html,
        )


def build_matrix(root: Path, env: Mapping[str, str]) -> FaultMatrix:
    """Crawl every scheduled (fault, platform), then run the days in order (see the module doc)."""
    settings = day_settings(root, env)
    matrix = FaultMatrix(settings)
    days = schedule(web_platforms())
    by_day: dict[date, list[tuple[CrawlFault, str]]] = {}
    for (fault, platform), day in days.items():
        by_day.setdefault(day, []).append((BY_NAME[fault], platform))
    with ThreadPoolExecutor(DAYS_AT_ONCE) as pool:
        futures = [
            pool.submit(crawl_day, day, faults, settings, env) for day, faults in sorted(by_day.items())
        ]
        matrix.runs = {(run.fault.name, run.platform): run for future in futures for run in future.result()}
    for day in sorted(set(days.values())):
        for result in run_day(settings, day):
            matrix.runs[_key_of(matrix, day, result.platform)].load = result
        matrix.states[day] = read_state(settings, day)
    return matrix


def _key_of(matrix: FaultMatrix, day: date, platform: str) -> tuple[str, str]:
    (run,) = [run for run in matrix.day_runs(day) if run.platform == platform]
    return run.fault.name, platform

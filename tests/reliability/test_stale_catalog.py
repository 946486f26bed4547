"""A catalog's own date is judged: a crawl that reads a catalog dated past GPUPLAN_STALE_HOURS prices
no plan, as an old crawl past the bound prices none.

Real crawls of Shadeform (a SkyPilot catalog: its CSV table, then GitHub's list-commits answer for
the file, whose committer date is every offer's catalog_date; scrapers/fixtures/shadeform) against
the loopback fault server, loaded and planned as the daily run does (fault_days.run_day). Day 0:
the commits answer names the day before (a recent catalog). Day 1: it names a day years back, the
one hostile change. Before: the date was stored and never judged, so the years-old file priced
day 1's plans, fresh, and `gpuplan plans -p shadeform` planned from it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from config.settings import Settings
from digest.content import build_digest
from digest.render import render
from reliability.fake_secrets import secret_env
from reliability.fault_days import FIRST_DAY, MODELS, crawl_day, run_day
from reliability.faults import CrawlFault
from reliability.warehouse_files import cli
from sizing.jobs import Job
from warehouse import job_plans
from warehouse.engine import connect

pytestmark = pytest.mark.faults

PLATFORM = "shadeform"
DAY1 = FIRST_DAY + timedelta(days=1)
# Day 0's catalog: committed the day before it is crawled. The crawls run now (crawl_runs' times are
# the crawler's clock; only the answers' Date headers say the days served), so "recent" is by today.
RECENT = datetime.now(UTC).date() - timedelta(days=1)
YEARS_AGO = date(2019, 3, 14)  # day 1's catalog


def _committed_on(day: date) -> CrawlFault:
    """GitHub's list-commits answer with its one commit dated `day` (author and committer)."""

    def redate(payload: Any) -> Any:
        stamp = f"{day.isoformat()}T10:15:00Z"
        return [
            {**entry, "commit": {**entry["commit"], **{who: {**entry["commit"][who], "date": stamp}
                                                        for who in ("author", "committer")}}}
            for entry in payload
        ]  # fmt: skip

    return CrawlFault(
        f"catalog_of_{day.isoformat()}", f"the catalog's last commit is dated {day}", "ok", json=redate
    )


@dataclass(frozen=True)
class Days:
    settings: Settings
    statuses: dict[date, str]


@pytest.fixture(scope="module")
def days(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Days]:
    root: Path = tmp_path_factory.mktemp("stale-catalog")
    env = secret_env()
    settings = Settings.from_env(
        {
            **env,
            "GPUPLAN_WAREHOUSE": str(root / "warehouse.duckdb"),
            "GPUPLAN_CRAWL_DIR": str(root / "crawls"),
            "GPUPLAN_MODELS": ",".join(MODELS),
            "GPUPLAN_METHODS": "lora",
        }
    )
    statuses = {}
    for day, catalog in ((FIRST_DAY, RECENT), (DAY1, YEARS_AGO)):
        (run,) = crawl_day(day, [(_committed_on(catalog), PLATFORM)], settings, env)
        statuses[day] = run.summary.status
        run_day(settings, day, carry_uncrawled=True)
    yield Days(settings, statuses)


def _rows(settings: Settings, sql: str, **params: object) -> list[tuple[Any, ...]]:
    with connect.reader(settings.warehouse) as con:
        return con.execute(sql, params).fetchall()


def _planned(settings: Settings, day: date) -> tuple[int, int, int]:
    """(offers, stale ones) of the platform among `day`'s offers as plans read them, and its plans."""
    [(offers, stale)] = _rows(
        settings,
        "SELECT count(*), count(*) FILTER (stale) FROM judged_offers($d, $d) WHERE platform = $p",
        d=day,
        p=PLATFORM,
    )
    [(planned,)] = _rows(
        settings,
        "SELECT count(*) FROM cheapest_plans WHERE plan_date = $d AND platform = $p",
        d=day,
        p=PLATFORM,
    )
    return offers, stale, planned


def test_a_recent_catalog_prices_the_days_plans_fresh(days: Days) -> None:
    assert days.statuses[FIRST_DAY] == "ok"
    [(catalog_date,)] = _rows(
        days.settings,
        "SELECT r.catalog_date FROM plan_crawls AS p JOIN crawl_runs AS r USING (crawl_id)"
        " WHERE p.plan_date = $d AND p.platform = $p",
        p=PLATFORM,
        d=FIRST_DAY,
    )
    assert catalog_date == RECENT  # a day older than its crawl: within GPUPLAN_STALE_HOURS (48 h)
    offers, stale, planned = _planned(days.settings, FIRST_DAY)
    assert offers > 10 and stale == 0 and planned > 0
    [(dated_out,)] = _rows(
        days.settings,
        "SELECT dated_out FROM plan_crawls WHERE plan_date = $d AND platform = $p",
        d=FIRST_DAY,
        p=PLATFORM,
    )
    assert dated_out is False


def test_a_catalog_dated_years_back_prices_no_plan_and_the_digest_says_why(days: Days) -> None:
    assert days.statuses[DAY1] == "ok"  # the crawl itself worked: its file is what is old
    assert _planned(days.settings, DAY1) == (0, 0, 0)  # before: the years-old prices, fresh
    [(catalog_date, offers)] = _rows(
        days.settings,
        "SELECT r.catalog_date, count(*) FROM plan_crawls AS p JOIN crawl_runs AS r USING (crawl_id)"
        " JOIN offers AS o USING (crawl_id) WHERE p.plan_date = $d AND p.platform = $p GROUP BY ALL",
        p=PLATFORM,
        d=DAY1,
    )
    assert catalog_date == YEARS_AGO and offers > 10  # stored, as all history is
    with connect.reader(days.settings.warehouse) as con:
        text = render(build_digest(con, DAY1, price_move_pct=days.settings.price_move_pct)).text
    assert f"the catalog it read is dated {YEARS_AGO}" in text, text
    assert "past GPUPLAN_STALE_HOURS" in text and "offer is gone" not in text, text


def test_latest_plans_leave_the_old_catalog_out_and_say_its_date(days: Days) -> None:
    """The ad-hoc plans (`gpuplan plans --tokens`) read each platform's latest crawl: day 1's."""
    job = Job("probe", "7B", "lora", tokens=1e9, platforms=(PLATFORM,))
    with connect.reader(days.settings.warehouse) as con:
        answer = job_plans.plan_job(
            con, job, start_at=datetime.now(UTC).replace(tzinfo=None), stale_hours=days.settings.stale_hours
        )
    assert answer.plans == [] and answer.reason is not None
    assert f"{PLATFORM}'s catalog is dated {YEARS_AGO}" in answer.reason, answer.reason
    assert "past GPUPLAN_STALE_HOURS (48 h)" in answer.reason
    shown = cli(days.settings, "plans", "--model", "7B", "--method", "lora", "--tokens", "1B", "-p", PLATFORM)
    assert f"catalog is dated {YEARS_AGO}" in " ".join((shown.stdout + shown.stderr).split()), shown
    # the unbounded view still lists the offers, with their prices' age
    [(offers, stale, hours)] = _rows(
        days.settings,
        "SELECT count(*), count(*) FILTER (stale), min(stale_hours) FROM latest_offers WHERE platform = $p",
        p=PLATFORM,
    )
    assert offers > 10 and stale == 0 and hours > 24 * 365 * 7

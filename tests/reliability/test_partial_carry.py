"""A partial crawl stands only for what it read; a platform not crawled keeps its last good crawl.

Real crawls of Azure and PPIO against the loopback fault server (their recorded snapshots, the
structure SkyPilot's fetchers read: scrapers/fixtures/azure, scrapers/fixtures/ppio), loaded and
planned as the daily run does (fault_days.run_day). Day 0 answers as recorded; then one hostile
change a day. Before: a partial crawl replaced the platform's last good crawl whole (Azure's 1 of
20 requests: 39 offers became 2, none stale; PPIO's monthly list failing: 8 plans became 0 and the
digest said "offer is gone" 8 times), and a platform the day did not crawl dropped out of its plans.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

import pytest
from loopback import AS_RECORDED, Answer

from config.settings import Settings
from digest.content import build_digest
from digest.render import render
from reliability.fake_secrets import secret_env
from reliability.fault_days import FIRST_DAY, MODELS, crawl_day, run_day
from reliability.faults import CLEAN, CrawlFault
from warehouse.engine import connect

pytestmark = pytest.mark.faults

# the first request answers as recorded, every other (and each retry) gets HTTP 503
ONE_ANSWERS = CrawlFault(
    "one_request_answers", "the first request answers, the others HTTP 503", "partial",
    first=(AS_RECORDED,), then=Answer(status=503),
)  # fmt: skip
DAY1 = FIRST_DAY + timedelta(days=1)
DAY2 = FIRST_DAY + timedelta(days=2)


@dataclass(frozen=True)
class Days:
    settings: Settings
    statuses: dict[tuple[date, str], str]  # (plan day, platform) -> the crawl's status


def _settings(root: Path) -> Settings:
    return Settings.from_env(
        {
            **secret_env(),
            "GPUPLAN_WAREHOUSE": str(root / "warehouse.duckdb"),
            "GPUPLAN_CRAWL_DIR": str(root / "crawls"),
            "GPUPLAN_MODELS": ",".join(MODELS),
            "GPUPLAN_METHODS": "lora",
        }
    )


@pytest.fixture(scope="module")
def days(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Days]:
    """Day 0: azure and ppio as recorded. Day 1: each gets only its first request answered (Azure:
    1 of its 20 regions and price types; PPIO: the hourly list, not the monthly one). Day 2: only
    ppio is crawled, as recorded; azure is not crawled at all."""
    settings = _settings(tmp_path_factory.mktemp("partial-carry"))
    env = secret_env()
    plan = {
        FIRST_DAY: [(CLEAN, "azure"), (CLEAN, "ppio")],
        DAY1: [(ONE_ANSWERS, "azure"), (ONE_ANSWERS, "ppio")],
        DAY2: [(CLEAN, "ppio")],
    }
    statuses = {}
    for day, faults in plan.items():
        for run in crawl_day(day, faults, settings, env):
            statuses[day, run.platform] = run.summary.status
        run_day(settings, day, carry_uncrawled=True)
    yield Days(settings, statuses)


def _rows(settings: Settings, sql: str, **params: object) -> list[tuple]:
    with connect.reader(settings.warehouse) as con:
        return con.execute(sql, params).fetchall()


def _day_offers(settings: Settings, day: date, platform: str) -> tuple[int, int]:
    """(offers, stale ones) of `platform` among `day`'s offers, as the plans read them."""
    [(total, stale)] = _rows(
        settings,
        "SELECT count(*), count(*) FILTER (stale) FROM judged_offers($d, $d) WHERE platform = $p",
        d=day,
        p=platform,
    )
    return total, stale


def test_a_partial_crawl_keeps_the_last_good_offers_for_what_it_did_not_read(days: Days) -> None:
    assert days.statuses[DAY1, "azure"] == "partial"
    clean, clean_stale = _day_offers(days.settings, FIRST_DAY, "azure")
    assert clean > 30 and clean_stale == 0
    total, stale = _day_offers(days.settings, DAY1, "azure")
    assert total == clean  # before: only the offers of the one region that answered
    assert 0 < stale < clean  # what the partial crawl read is fresh, the rest carried, stale
    # the partial crawl says what it read: its one answer
    [(read,)] = _rows(
        days.settings,
        "SELECT read_sources FROM crawl_runs WHERE platform = 'azure' AND status = 'partial'",
    )
    assert len(read) == 1 and read[0].startswith("https://prices.azure.com/api/retail/prices?")


def test_latest_offers_mark_what_a_partial_crawl_carried(days: Days) -> None:
    """latest_offers: azure's latest crawl is day 1's partial one (day 2 did not crawl it): its
    offers and the carried ones, marked stale."""
    day1 = _rows(
        days.settings,
        "SELECT count(*), count(*) FILTER (stale) FROM latest_offers WHERE platform = 'azure'",
    )
    clean, _ = _day_offers(days.settings, FIRST_DAY, "azure")
    [(total, stale)] = day1
    assert total == clean and 0 < stale < clean


def test_a_failed_monthly_list_keeps_the_monthly_plans_and_the_digest_calls_nothing_gone(days: Days) -> None:
    assert days.statuses[DAY1, "ppio"] == "partial"
    monthly = (
        "SELECT count(*), count(*) FILTER (stale) FROM judged_offers($d, $d)"
        " WHERE platform = 'ppio' AND billing_period = 'month'"
    )
    [(before, _)] = _rows(days.settings, monthly, d=FIRST_DAY)
    [(after, stale)] = _rows(days.settings, monthly, d=DAY1)
    assert before > 0 and after == before and stale == before  # all carried from day 0
    plans = "SELECT count(*) FROM cheapest_plans WHERE plan_date = $d AND platform = 'ppio'"
    [(planned_before,)] = _rows(days.settings, plans, d=FIRST_DAY)
    [(planned_after,)] = _rows(days.settings, plans, d=DAY1)
    assert planned_before > 0 and planned_after == planned_before
    with connect.reader(days.settings.warehouse) as con:
        text = render(build_digest(con, DAY1, price_move_pct=days.settings.price_move_pct)).text
    assert "offer is gone" not in text and "no offers today" not in text, text


def test_a_platform_the_day_did_not_crawl_keeps_its_last_good_offers_stale(days: Days) -> None:
    assert (DAY2, "azure") not in days.statuses
    day1_total, _ = _day_offers(days.settings, DAY1, "azure")
    total, stale = _day_offers(days.settings, DAY2, "azure")
    # azure's last good crawl is day 1's partial one: it comes with what it carried, all stale
    assert total == stale == day1_total
    [(status, carried)] = _rows(
        days.settings,
        "SELECT status, carried FROM plan_crawls WHERE plan_date = $d AND platform = 'azure'",
        d=DAY2,
    )
    assert (status, carried) == ("not_crawled", True)
    with connect.reader(days.settings.warehouse) as con:
        text = render(build_digest(con, DAY2, price_move_pct=days.settings.price_move_pct)).text
    assert "azure has no offers today" not in text, text

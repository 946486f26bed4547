"""The carry rule (definitions/15_crawl_carries.sql) on a real migrated DuckDB: a partial crawl stands
only for what it read, and a last good crawl dated ahead (a clock since stepped back) is carried.

Offers are SYNTHETIC (hand-made rows in the loaders' format; source_url stands for the answer each
came from, as a spider cites it). The loopback crawls of real platforms are in
tests/reliability/test_partial_carry.py.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pandas as pd
import pytest
import warehouse_template
from synthetic_offers import offer
from warehouse_template import insert_rows

from warehouse import daily_plans

EAST = "https://cloud.invalid/prices?region=east"
WEST = "https://cloud.invalid/prices?region=west"
DAY = date(2026, 11, 30)


@pytest.fixture
def con():
    connection = warehouse_template.scratch()
    yield connection
    connection.close()


def _crawl(con, crawl_id: str, at: datetime, status: str, offers: list[dict], read: list[str] | None) -> None:
    """One crawl of 'cloud' that finished and loaded at `at`, with what it read (read_sources)."""
    con.execute(
        "INSERT INTO crawl_runs (crawl_id, platform, status, items_yielded, offers_loaded, started_at,"
        " finished_at, loaded_at, read_sources) VALUES ($id, 'cloud', $status, $n, $n, $at, $at, $at, $read)",
        {"id": crawl_id, "status": status, "n": len(offers), "at": at, "read": read},
    )
    rows = [
        {**o, "crawl_id": crawl_id, "observed_at": at, "observed_date": at.date(), "run_day": at.date()}
        for o in offers
    ]
    if rows:
        insert_rows(con, "offers", rows)


def _h100(offer_id: str, source_url: str, price: float = 2.0) -> dict:
    return offer("cloud", offer_id, "H100 SXM 80GB", price, source_url=source_url, available_gpus=8)


def _record(con, day: date, crawl_id: str, status: str) -> None:
    frame = pd.DataFrame([{"platform": "cloud", "crawl_id": crawl_id, "status": status}])
    daily_plans.record_plan_crawls(con, day, frame, 48.0)


def _day_offers(con, day: date) -> dict[str, tuple[float, bool]]:
    rows = con.execute(
        "SELECT offer_id, price_usd_per_gpu_hour, stale FROM judged_offers($d, $d)", {"d": day}
    ).fetchall()
    return {offer_id: (price, stale) for offer_id, price, stale in rows}


def test_a_partial_crawl_stands_for_what_it_read_and_carries_the_rest(con) -> None:
    before = datetime(2026, 11, 29, 6)
    _crawl(con, "good", before, "ok", [
        _h100("east-1", EAST), _h100("east-2", EAST), _h100("west-1", WEST), _h100("west-2", WEST),
    ], [EAST, WEST])  # fmt: skip
    _record(con, DAY - timedelta(days=1), "good", "ok")
    # east answered: east-1 at a new price, east-2 no more (gone); west failed: nothing read there
    _crawl(con, "partial", before + timedelta(days=1), "partial", [_h100("east-1", EAST, 1.5)], [EAST])
    _record(con, DAY, "partial", "partial")

    assert _day_offers(con, DAY) == {
        "east-1": (1.5, False),  # read again: today's price, fresh
        "west-1": (2.0, True),  # not read: carried, stale
        "west-2": (2.0, True),
    }  # east-2 is gone: its answer was read and lacks it


def test_a_partial_crawl_that_does_not_say_what_it_read_carries_all_it_lacks(con) -> None:
    """A summary without read_sources (written before they were recorded): nothing counts as read,
    so every last good offer the partial crawl does not hold again is carried."""
    before = datetime(2026, 11, 29, 6)
    _crawl(con, "good", before, "ok", [_h100("east-1", EAST), _h100("west-1", WEST)], None)
    _record(con, DAY - timedelta(days=1), "good", "ok")
    _crawl(con, "partial", before + timedelta(days=1), "partial", [_h100("east-1", EAST, 1.5)], None)
    _record(con, DAY, "partial", "partial")
    assert _day_offers(con, DAY) == {"east-1": (1.5, False), "west-1": (2.0, True)}


def test_a_last_good_crawl_dated_ahead_is_carried_when_the_crawl_fails(con) -> None:
    """The clock stepped back: the last good crawl was recorded 3 h ahead of now (its host's clock
    and the loader's both ahead); now the crawl fails. Before: only a crawl dated before the failed
    one could be carried, so the platform vanished from the day's plans and the latest offers."""
    now = datetime.now(UTC).replace(tzinfo=None, microsecond=0)
    _crawl(con, "ahead", now + timedelta(hours=3), "ok", [_h100("east-1", EAST)], [EAST])
    _crawl(con, "failed", now, "failed", [], [])
    _record(con, now.date(), "failed", "failed")

    assert _day_offers(con, now.date()) == {"east-1": (2.0, True)}
    [(carried, hours)] = con.execute(
        "SELECT carried, round(carry_hours)"
        " FROM plan_crawls JOIN plan_carried_crawls USING (plan_date, platform)"
    ).fetchall()
    assert (carried, hours) == (True, 3)
    latest = con.execute("SELECT offer_id, stale, round(stale_hours) FROM latest_offers").fetchall()
    assert latest == [("east-1", True, 3)]

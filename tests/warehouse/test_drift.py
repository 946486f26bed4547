"""warehouse/drift.py: a platform's crawl against its own last good crawls, on SYNTHETIC crawls
(synthetic_crawls.py) loaded into a real, migrated DuckDB."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
import pytest
import warehouse_template
from synthetic_crawls import WriteCrawl, crawl_writer, synthetic_offer

from config.settings import Settings
from warehouse import daily_plans, drift
from warehouse.engine import connect
from warehouse.loading import load_crawl

DAY = date(2026, 11, 30)


def _crawl(
    con: duckdb.DuckDBPyConnection, write_crawl: WriteCrawl, day: date, offers: list[Any], **summary: Any
) -> None:
    at = f"{day.isoformat()}T06:00:00Z"
    lines = [o if isinstance(o, str) else o | {"observed_at": at} for o in offers]
    path = write_crawl(lines, name=f"synthcloud-{day}", started_at=at, finished_at=at, **summary)
    loaded = load_crawl(con, path)
    crawls = pd.DataFrame([{"platform": "synthcloud", "crawl_id": loaded.crawl_id, "status": loaded.status}])
    daily_plans.record_plan_crawls(con, day, crawls)


def _offers(count: int, price: float = 2.0, unknown: int = 0) -> list[dict[str, Any]]:
    known = [synthetic_offer(n, price_amount=price) for n in range(count - unknown)]
    odd = [
        synthetic_offer(100 + n, gpu_name_raw="Mystery GPU 9000", gpu_model=None, price_amount=price)
        for n in range(unknown)
    ]
    return known + odd


@pytest.fixture(scope="module")
def week_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A writer file with a week of good crawls of 20 offers before DAY, one unknown name each, at
    2 USD/GPU-h: loaded once for the module (the loads are most of each test's time), copied for each."""
    folder = tmp_path_factory.mktemp("week")
    warehouse = warehouse_template.migrated(folder / "warehouse.duckdb")
    write_crawl = crawl_writer(folder / "crawls")
    with connect.writer(warehouse, publish=False) as con:
        for back in range(1, 8):
            _crawl(con, write_crawl, DAY - timedelta(days=back), _offers(20, unknown=1))
    return connect.writer_path(warehouse)


@pytest.fixture
def week(settings: Settings, week_file: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """A connection on a copy of the week's warehouse, as `writer_con` opens one."""
    with warehouse_template.opened(warehouse_template.migrated(settings.warehouse, source=week_file)) as con:
        yield con


def test_a_day_like_the_others_has_no_drift(week: duckdb.DuckDBPyConnection, write_crawl: WriteCrawl) -> None:
    _crawl(week, write_crawl, DAY, _offers(19, unknown=1))
    result = drift.crawl_drift(week, "synthcloud", DAY)
    assert result.problems == ()
    assert (result.history_crawls, result.today_offers, result.usual_offers) == (7, 19, 20.0)


def test_offers_dropping_by_more_than_half_is_drift(
    week: duckdb.DuckDBPyConnection, write_crawl: WriteCrawl
) -> None:
    _crawl(week, write_crawl, DAY, _offers(9))
    assert drift.crawl_drift(week, "synthcloud", DAY).problems == ("9 offers, under half the usual 20",)


def test_a_doubled_share_of_unknown_names_is_drift(
    week: duckdb.DuckDBPyConnection, write_crawl: WriteCrawl
) -> None:
    _crawl(week, write_crawl, DAY, _offers(20, unknown=5))
    (problem,) = drift.crawl_drift(week, "synthcloud", DAY).problems
    assert problem == "25% unknown GPU names, usually 5%"


def test_a_doubled_share_of_rejected_quotes_is_drift(
    week: duckdb.DuckDBPyConnection, write_crawl: WriteCrawl
) -> None:
    rejected = [synthetic_offer(200 + n, price_currency="XYZ") for n in range(6)]
    _crawl(week, write_crawl, DAY, [*_offers(18, unknown=1), *rejected])
    (problem,) = drift.crawl_drift(week, "synthcloud", DAY).problems
    assert problem.endswith("rejected quotes, usually 0%")


def test_a_median_price_three_times_off_is_drift(
    week: duckdb.DuckDBPyConnection, write_crawl: WriteCrawl
) -> None:
    _crawl(week, write_crawl, DAY, _offers(20, price=8.0, unknown=1))  # e.g. a per-4-GPU price per GPU
    result = drift.crawl_drift(week, "synthcloud", DAY)
    assert result.price_moves == (("H100 SXM 80GB", 8.0, 2.0),)
    assert result.problems == ("H100 SXM 80GB median 8 USD/GPU-h, usually 2 (4x)",)


def test_a_price_move_within_three_times_is_the_market(
    week: duckdb.DuckDBPyConnection, write_crawl: WriteCrawl
) -> None:
    _crawl(week, write_crawl, DAY, _offers(20, price=5.0, unknown=1))
    assert drift.crawl_drift(week, "synthcloud", DAY).problems == ()


def test_without_history_nothing_is_judged(
    writer_con: duckdb.DuckDBPyConnection, write_crawl: WriteCrawl
) -> None:
    _crawl(writer_con, write_crawl, DAY, _offers(3))
    result = drift.crawl_drift(writer_con, "synthcloud", DAY)
    assert (result.history_crawls, result.problems) == (0, ())


def test_failed_crawls_are_not_the_usual(week: duckdb.DuckDBPyConnection, write_crawl: WriteCrawl) -> None:
    # A failed day is neither compared nor part of the usual: the volume check reports it.
    _crawl(week, write_crawl, DAY - timedelta(days=8), [], status="failed", error="synthetic outage")
    _crawl(week, write_crawl, DAY, [], status="failed", error="synthetic outage")
    assert drift.crawl_drift(week, "synthcloud", DAY).problems == ()


def test_the_days_drifted_platforms_are_named_by_their_check(
    week: duckdb.DuckDBPyConnection, write_crawl: WriteCrawl
) -> None:
    _crawl(week, write_crawl, DAY, _offers(9))
    (drifted,) = drift.day_drift(week, DAY)
    assert drifted.check_name == "synthcloud_drift"
    assert drift.day_drift(week, DAY - timedelta(days=1)) == []


def test_the_digest_names_a_failing_drift_check(
    week: duckdb.DuckDBPyConnection, write_crawl: WriteCrawl
) -> None:
    from digest.content import build_digest

    _crawl(week, write_crawl, DAY, _offers(9))
    lines = [
        (f.platform, f.status, f.error) for f in build_digest(week, DAY, price_move_pct=10.0).failed_crawls
    ]
    assert ("synthcloud", "drift", "synthcloud_drift: 9 offers, under half the usual 20") in lines

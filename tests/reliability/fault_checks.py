"""What every crawl-fault case asserts besides its own outcome: the failure is visible, the run went
on for every other platform, and nothing stored before was lost."""

from __future__ import annotations

import itertools
from typing import Any

import pandas as pd

from reliability.fault_days import METHODS, MODELS, RANKINGS_PER_ASK, CrawlRun, FaultMatrix
from warehouse.engine import connect


def recorded(matrix: FaultMatrix, run: CrawlRun) -> pd.Series:
    """The crawl_runs row (via the day's plan_crawls) of `run`; it must be the crawl `run` loaded."""
    crawls = matrix.states[run.day].crawls.set_index("platform")
    assert run.platform in crawls.index, f"{run.platform} has no crawl recorded for {run.day}"
    row = crawls.loc[run.platform].astype(object)
    assert run.load is not None and row.crawl_id == run.load.crawl_id
    return row.where(row.notna(), None)


def warehouse_rows(matrix: FaultMatrix, sql: str, **params: Any) -> list[tuple[Any, ...]]:
    """Rows of `sql` on the published warehouse after the last day."""
    with connect.reader(matrix.settings.warehouse) as con:
        return con.execute(sql, params).fetchall()


def clean_offers(matrix: FaultMatrix, platform: str) -> int:
    """Offers the platform's clean crawl (day 0) loaded."""
    run = matrix.run("clean", platform)
    assert run.load is not None and run.load.status == "ok", (
        f"the clean crawl of {platform} failed: {run.load}"
    )
    return run.load.offers_loaded


def assert_failure_visible(matrix: FaultMatrix, run: CrawlRun, status: str, error_has: str) -> None:
    """The crawl is recorded with `status` and an error naming the fault; the day's digest says so;
    the platform's earlier offers stay on view (an outage never reads as "sold out")."""
    row = recorded(matrix, run)
    assert row.status == status, f"{run.platform} recorded {row.status!r}: {row.error}"
    assert error_has in (row.error or ""), f"{error_has!r} not in the recorded error {row.error!r}"
    state = matrix.states[run.day]
    lines = [line for line in state.digest_text.splitlines() if line.startswith(f"- {run.platform} ")]
    assert any(f" {status}: " in line and error_has in line for line in lines), (
        f"the digest of {run.day} has no '{status}' line for {run.platform} naming {error_has!r}: {lines}"
    )
    assert run.platform in state.latest_platforms, (
        f"{run.platform}'s earlier offers vanished from latest_offers"
    )
    if status == "failed":
        assert row.offers_loaded == 0
        # its last good crawl may stand in, marked stale (GPUPLAN_STALE_HOURS), never as new
        assert run.platform not in state.candidate_platforms


def assert_run_went_on(matrix: FaultMatrix, run: CrawlRun) -> None:
    """Every other platform of the day ended as its own fault says, the ones with offers loaded
    them, and the day's plans were built from exactly those."""
    state = matrix.states[run.day]
    crawls = state.crawls.set_index("platform")
    loaded = set()
    for other in matrix.day_runs(run.day):
        row = crawls.loc[other.platform]
        assert row.status == other.fault.outcome, (
            f"{other.platform} ({other.fault.name}) recorded {row.status!r} beside {run.platform} "
            f"({run.fault.name}): {row.error}"
        )
        if other.fault.outcome != "failed":
            assert row.offers_loaded > 0
            loaded.add(other.platform)
    assert len(state.plans) == len(MODELS) * len(METHODS) * RANKINGS_PER_ASK, "an ask got no plan row"
    assert state.candidate_platforms <= loaded, "plans drew on a platform that loaded nothing today"


def assert_nothing_lost(matrix: FaultMatrix, run: CrawlRun) -> None:
    """The day's run kept every offer and plan stored before it, and every later day kept the day's."""
    days = sorted(matrix.states)
    for earlier, later in itertools.pairwise(days):
        if later < run.day:
            continue
        before, after = matrix.states[earlier], matrix.states[later]
        lost = {
            crawl: n for crawl, n in before.offers_by_crawl.items() if after.offers_by_crawl.get(crawl) != n
        }
        assert not lost, f"the run of {later} lost offers of crawls {lost}"
        changed = [day for day, rows in before.plan_rows.items() if after.plan_rows.get(day) != rows]
        assert not changed, f"the run of {later} changed the plans of {changed}"


def assert_case(matrix: FaultMatrix, run: CrawlRun, status: str, error_has: str | None = None) -> None:
    """The three things every case asserts; `error_has` for the failures that must be visible."""
    if error_has is not None:
        assert_failure_visible(matrix, run, status, error_has)
    else:
        row = recorded(matrix, run)
        assert (row.status, row.error) == (status, None), (
            f"{run.platform} recorded {row.status!r}: {row.error}"
        )
    assert_run_went_on(matrix, run)
    assert_nothing_lost(matrix, run)

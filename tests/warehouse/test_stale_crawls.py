"""A failed crawl does not rewrite the day's plans, on a real migrated DuckDB.

Offers are SYNTHETIC (tests/warehouse/synthetic_offers.py: hand-made rows, crawls loaded at their
day's midnight, so consecutive days are 24 h apart). The rule (queries/plans/record_crawls.sql,
definitions/30_day_runs.sql, queries/plans/changes.sql): a platform whose crawl failed keeps its last
good crawl in the day's plans while that crawl is at most GPUPLAN_STALE_HOURS older, marked stale
(price as of its crawl, stock unknown); past that its offers drop out; neither is a market change.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta

import pytest
import warehouse_template
from synthetic_offers import DAY1, DAY2
from synthetic_offers import crawl as _crawl
from synthetic_offers import offer as _offer
from synthetic_offers import plan as _plan

from digest.content import build_digest
from digest.render import render
from gpuplan.plan_tables import stale_note
from sizing.jobs import Job
from warehouse import daily_plans, job_plans, queries

DAY3 = DAY2 + timedelta(days=1)
DAY4 = DAY2 + timedelta(days=2)
ASKS = {("7B", "full"): 70}


@pytest.fixture
def con():
    connection = warehouse_template.scratch()
    yield connection
    connection.close()


def _market(con, day: date, status: str = "ok", stale_hours: float = daily_plans.STALE_HOURS) -> None:
    """Two platforms selling H100s: cloud the cheaper (8 free), other dearer."""
    for platform, price in (("cloud", 1.0), ("other", 1.5)):
        offers = (
            []
            if status != "ok"
            else [_offer(platform, f"{platform}-h100", "H100 SXM 80GB", price, available_gpus=8)]
        )
        _crawl(con, day, platform, offers, status=status, stale_hours=stale_hours)


def _day(con, day: date) -> tuple:
    frame = _plan(con, day, ASKS)
    daily_plans.compute_plan_changes(con, day, 10.0)
    return frame, daily_plans.changes_for_date(con, day)


def _rent(frame) -> dict:
    row = frame[frame["ranking"] == "lowest_rent"].iloc[0]
    return {k: row[k] for k in ("status", "platform", "offer_id", "gpu_count", "rent_usd_per_month")}


def test_a_day_on_which_every_crawl_fails_prints_yesterdays_plans_stale_and_no_changes(con):
    _market(con, DAY1)
    before, _ = _day(con, DAY1)
    _market(con, DAY2, status="failed")
    after, changes = _day(con, DAY2)

    assert _rent(after) == _rent(before)  # the same plans, at yesterday's prices
    assert after["stale"].all() and not before["stale"].any()
    assert set(after["crawled_at"]) == {datetime.combine(DAY1, datetime.min.time())}
    assert not after["stock_known"].any()  # the stock of a carried crawl is unknown
    assert changes.empty
    # the failure is still a failure, and says what stands in for it
    crawls = daily_plans.day_crawls(con, DAY2)
    assert set(crawls["status"]) == {"failed"}
    failures = build_digest(con, DAY2, price_move_pct=10.0).failed_crawls
    assert [(f.platform, f.carried, f.stale_hours) for f in failures] == [
        ("cloud", True, 24),
        ("other", True, 24),
    ]
    text = render(build_digest(con, DAY2, price_move_pct=10.0)).text
    assert "carried: prices as of its last good crawl, 2026-11-29 00:00 UTC (24 h older)" in text
    assert "(stale: price as of an earlier crawl)" in text
    assert stale_note(after.to_dict("records"))[0].startswith("~ cloud: its crawl failed; prices as of")


def test_past_the_bound_offers_drop_out_with_a_digest_line_and_neither_that_nor_the_return_is_a_change(con):
    _market(con, DAY1)
    _day(con, DAY1)
    _market(con, DAY2, status="failed")  # 24 h: carried
    _day(con, DAY2)
    _market(con, DAY3, status="failed")  # 48 h: carried still (at most the bound)
    carried, changes = _day(con, DAY3)
    assert _rent(carried)["platform"] == "cloud" and changes.empty
    _market(con, DAY4, status="failed")  # 72 h: dropped out
    dropped, changes = _day(con, DAY4)
    assert _rent(dropped)["status"] == "no_offer_fits"
    assert changes.empty  # the outage is not "no offer fits any more"
    failures = build_digest(con, DAY4, price_move_pct=10.0).failed_crawls
    assert [(f.carried, f.dropped_out, f.stale_hours) for f in failures] == [(False, True, 72)] * 2
    assert "dropped out of today's plans: its last good crawl, 2026-11-29 00:00 UTC, is 72 h older" in (
        render(build_digest(con, DAY4, price_move_pct=10.0)).text
    )
    # the platforms come back: their plan returns, and that is no change either
    day5 = DAY4 + timedelta(days=1)
    _market(con, day5)
    back, changes = _day(con, day5)
    assert _rent(back)["platform"] == "cloud" and not back["stale"].any()
    assert changes.empty


def test_one_platform_dropping_out_moves_the_plan_without_a_market_change(con):
    _market(con, DAY1)
    _day(con, DAY1)
    _crawl(con, DAY2, "cloud", [], status="failed", stale_hours=0)  # never carried
    _crawl(con, DAY2, "other", [_offer("other", "other-h100", "H100 SXM 80GB", 1.5, available_gpus=8)])
    moved, changes = _day(con, DAY2)
    assert _rent(moved)["platform"] == "other"
    assert changes.empty
    _market(con, DAY3)
    back, changes = _day(con, DAY3)
    assert _rent(back)["platform"] == "cloud" and changes.empty


def test_a_real_move_beside_a_carried_platform_is_still_a_change(con):
    _market(con, DAY1)
    _day(con, DAY1)
    _crawl(con, DAY2, "cloud", [], status="failed")  # carried at 1.0
    _crawl(con, DAY2, "other", [_offer("other", "other-h100", "H100 SXM 80GB", 0.5, available_gpus=8)])
    frame, changes = _day(con, DAY2)
    assert _rent(frame)["platform"] == "other" and not frame["stale"].any()
    assert "new_platform" in set(changes["change_type"])


def test_small_moves_are_not_changes(con):
    _crawl(con, DAY1, "cloud", [_offer("cloud", "h100", "H100 SXM 80GB", 1.0)])
    _day(con, DAY1)
    _crawl(con, DAY2, "cloud", [_offer("cloud", "h100", "H100 SXM 80GB", 1.04)])
    _, changes = _day(con, DAY2)
    assert changes.empty  # +4 % is under the 10 % threshold


def test_the_days_job_plans_follow_the_same_rule(con):
    job = Job(name="tune", model="7B", method="lora", tokens=1e8)
    start = datetime(2026, 11, 30, 6)
    _market(con, DAY1)
    job_plans.compute_job_plans(con, DAY1, [job], start)
    _market(con, DAY2, status="failed")
    job_plans.compute_job_plans(con, DAY2, [job], start)
    daily_plans.compute_plan_changes(con, DAY2, 10.0, subject="job")
    day1, day2 = (job_plans.job_plans_for_date(con, day) for day in (DAY1, DAY2))
    best1, best2 = day1[day1["rank"] == 1].iloc[0], day2[day2["rank"] == 1].iloc[0]
    assert (best2["platform"], best2["total_usd"]) == (best1["platform"], best1["total_usd"])
    assert bool(best2["stale"]) and not bool(best1["stale"])
    assert daily_plans.changes_for_date(con, DAY2, subject="job").empty


def test_the_latest_crawls_mark_a_failed_platform_stale_and_drop_it_past_the_bound(con):
    # `gpuplan gpus` and ad-hoc job plans read each platform's latest usable crawl
    _market(con, DAY1)
    _crawl(con, DAY3, "cloud", [], status="failed")  # 48 h after cloud's last good crawl
    [cheapest] = queries.records(con, "gpus/cheapest_offers", max_stale_hours=48.0)
    assert (cheapest["cheapest_platform"], cheapest["cheapest_stale"]) == ("cloud", True)
    [dearer] = queries.records(con, "gpus/cheapest_offers", max_stale_hours=47.0)
    assert (dearer["cheapest_platform"], dearer["cheapest_stale"]) == ("other", False)

    job = Job(name="ad hoc", model="7B", method="lora", tokens=1e8)
    start = datetime(2026, 12, 2)
    carried = job_plans.plan_job(con, job, start_at=start, stale_hours=48.0).plans[0]
    assert (carried["platform"], carried["stale"], carried["stock_known"]) == ("cloud", True, False)
    fresh = job_plans.plan_job(con, job, start_at=start, stale_hours=24.0).plans[0]
    assert (fresh["platform"], fresh["stale"]) == ("other", False)


def test_a_job_on_a_platform_past_the_bound_says_so(con):
    """`gpuplan plans --tokens ... -p cloud` past GPUPLAN_STALE_HOURS. Before: "fits on no GPU on
    offer from cloud", as if the platform sold nothing the job fits on."""
    _market(con, DAY1)
    _crawl(con, DAY4, "cloud", [], status="failed")  # 72 h after cloud's last good crawl
    job = Job(name="ad hoc", model="7B", method="lora", tokens=1e8, platforms=("cloud",))
    answer = job_plans.plan_job(con, job, start_at=datetime(2026, 12, 3), stale_hours=48.0)
    assert answer.plans == [] and answer.reason is not None
    assert "fits on no GPU" not in answer.reason
    assert (
        "cloud's last good crawl (2026-11-29 00:00 UTC) is 72 h older than its latest crawl attempt, "
        "past GPUPLAN_STALE_HOURS (48 h)"
    ) in answer.reason

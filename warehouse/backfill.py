"""Plans of past days: each day with data gets its crawls recorded, then the one plan sequence.

`backfill_plans` computes the plans of every past day with data, with the one plan sequence the
Dagster plan assets call (`plan_sequence.plan_days`), from the runs that stand for each platform
on each day (`daily_runs`: our own crawl first, else imported history).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import duckdb
import pandas as pd

from scrapers.history.paths import latest_real_day
from warehouse import daily_plans, plan_sequence, queries
from warehouse.plan_sequence import PlanOptions


@dataclass(frozen=True)
class BackfilledDay:
    """One day's outcome: platforms that fed it, plan rows that fit, plan rows, changes, offers left out."""

    day: dt.date
    platforms: int
    plans_ok: int
    plans: int
    changes: int
    offers_excluded: int


def backfill_crawls(
    con: duckdb.DuckDBPyConnection, first: dt.date | None, last: dt.date | None
) -> pd.DataFrame:
    """Per day with data in [first, last] (None = open): the crawl of each platform its plans read.

    Columns: day (datetime.date), platform, crawl_id, status, already_recorded (TRUE where
    plan_crawls has it).
    """
    frame = queries.frame(con, "history/backfill_crawls", first=first, last=last)
    frame["day"] = pd.to_datetime(frame["day"]).dt.date
    return frame


def record_history_crawls(
    con: duckdb.DuckDBPyConnection, first: dt.date | None, last: dt.date | None
) -> pd.DataFrame:
    """Record, for each day with data in [first, last], the run of each platform the day's crawls lack.

    `con` is the writer. A (day, platform) already in plan_crawls keeps its crawl; the others get
    the run that stands for the platform that day (`daily_runs`). Returns `backfill_crawls`' frame
    (every crawl of those days, `already_recorded` FALSE for the ones recorded now).
    """
    crawls = backfill_crawls(con, first, last)
    new = crawls[~crawls["already_recorded"]]
    for day in sorted(set(new["day"])):
        daily_plans.record_plan_crawls(con, day, new[new["day"] == day])
    return crawls


def planned_days(con: duckdb.DuckDBPyConnection, first: dt.date, last: dt.date) -> pd.DataFrame:
    """Per plan day in [first, last]: plan_date (datetime.date), plans, plans_ok, changes, offers_excluded."""
    frame = queries.frame(con, "history/planned_days", first=first, last=last)
    frame["plan_date"] = pd.to_datetime(frame["plan_date"]).dt.date
    return frame


def backfill_plans(
    con: duckdb.DuckDBPyConnection,
    options: PlanOptions,
    first: dt.date | None,
    last: dt.date | None,
    progress: Callable[[Sequence[dt.date], int], Iterable[dt.date]] | None = None,
) -> list[BackfilledDay]:
    """Plans and changes for each day with data in [first, last] (None = open), oldest first.

    `con` is the writer. The day's crawls are recorded first (`record_history_crawls`), then the
    days are planned by the one plan sequence the Dagster plan assets run (`plan_sequence.plan_days`,
    with the same `options`). Each day's rows are replaced (re-running a day changes nothing
    else). `progress(days, total)` may wrap the day sequence (a progress bar). No day after
    `latest_real_day()` is planned, whatever `last` says or the warehouse holds: an observation
    dated 2099 (loaded before imports refused such rows) must not give plans for 2099.
    """
    latest = latest_real_day()
    last = latest if last is None else min(last, latest)
    if first is not None and first > last:
        return []
    crawls = record_history_crawls(con, first, last)
    if crawls.empty:
        return []
    platforms_per_day = crawls.groupby("day").size()
    days = sorted(platforms_per_day.index)
    plan_sequence.plan_days(con, days, options, progress)
    outcome = {row["plan_date"]: row for row in planned_days(con, days[0], days[-1]).to_dict("records")}
    return [
        BackfilledDay(
            day=day,
            platforms=int(platforms_per_day[day]),
            plans_ok=int(outcome[day]["plans_ok"]),
            plans=int(outcome[day]["plans"]),
            changes=int(outcome[day]["changes"]),
            offers_excluded=int(outcome[day]["offers_excluded"]),
        )
        for day in days
    ]

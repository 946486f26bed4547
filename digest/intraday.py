"""Intraday watches checked against the latest crawls, as edges: what `pipelines.intraday.run_cycle`
(behind `gpuplan watch` and the Dagster `watch_cycle` job) does after loading a cycle's crawls.

Every watch is read from each platform's latest usable crawl by the digest's own queries and rule
(`digest.watches`: `readings_now`, `watch_holds`); a job watch by the job planner, as `gpuplan plans
--tokens --within` plans (`warehouse.job_plans.plan_job`: the best plan that finishes by the job's
deadline). Edges, not states: a watch fires when it starts to hold; it fires again only after a
cycle read it not holding (state in `watch_states`). A cycle that could not read a price or stock
watch (no crawl of its platforms worked) leaves its state as it was: an outage neither fires nor
re-arms it. Each edge is one push event, `watch:<watch_key>:<N>`.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import duckdb

from config.watches_file import JobWatch, StockWatch, Watch
from digest.export import watch_entry
from digest.push.messages import Event
from digest.watches import WatchReading, WatchResult, readings_now, watch_holds
from digest.wording import Wording
from warehouse import queries
from warehouse.job_plans import plan_job


@dataclass(frozen=True)
class WatchCheck:
    """One watch in one cycle: what it read, whether it holds, whether this cycle is its edge.
    `known` False: nothing fresh to read it by (`problem` says why); its state is unchanged."""

    watch: Watch
    key: str
    reading: WatchReading | None
    known: bool
    holding: bool
    fired: bool
    fires: int  # its edges so far, this one included
    problem: str | None = None


def watch_key(watch: Watch) -> str:
    """A watch's lasting name (its line moves when the file is edited; what it asks does not)."""
    if isinstance(watch, JobWatch):
        return f"job:{watch.job}<{watch.below_total_usd:g}USD"
    where = "@" + ",".join(sorted(watch.platforms)) if watch.platforms else ""
    if isinstance(watch, StockWatch):
        return f"stock:{watch.gpu_model}>={watch.min_available_gpus}{where}"
    return f"price:{watch.gpu_model}<{watch.below:g}{watch.currency}{where}"


def check_watches(
    con: duckdb.DuckDBPyConnection,
    watches: Sequence[Watch],
    jobs: Mapping[str, Any],
    worked: Collection[str],
    crawled: Sequence[str],
    checked_at: datetime,
    *,
    stale_hours: float | None = None,
    max_nodes: int = 1,
) -> tuple[WatchCheck, ...]:
    """Each watch checked now and its state recorded, on the writer connection that loaded the
    cycle's crawls (`crawled`, of which `worked` worked). `jobs`: GPUPLAN_JOBS's `Job`s by name."""
    keys = [watch_key(watch) for watch in watches]
    states = {row["watch_key"]: row for row in queries.records(con, "watch/states", watch_keys=keys)}
    offers = readings_now(con, watches)  # the price and stock watches, in one query per kind
    checks = []
    for watch, key, offer_reading in zip(watches, keys, offers, strict=True):
        state = states.get(key)
        was_holding = bool(state and state["holding"])
        fires = int(state["fires"]) if state else 0
        if isinstance(watch, JobWatch):
            reading, problem = _job_reading(con, watch, jobs, checked_at, stale_hours, max_nodes)
        else:
            mine = set(watch.platforms or crawled)
            reading = offer_reading
            problem = (
                None
                if mine & set(worked)
                else f"no crawl of {', '.join(sorted(mine)) or 'any platform'} worked this cycle"
            )
        if problem is not None:
            checks.append(WatchCheck(watch, key, None, False, was_holding, False, fires, problem))
            continue
        holding = watch_holds(watch, reading)
        fired = holding and not was_holding
        checks.append(WatchCheck(watch, key, reading, True, holding, fired, fires + fired))
    _record(con, checks, checked_at)
    return tuple(checks)


def _job_reading(
    con: duckdb.DuckDBPyConnection,
    watch: JobWatch,
    jobs: Mapping[str, Any],
    checked_at: datetime,
    stale_hours: float | None,
    max_nodes: int,
) -> tuple[WatchReading | None, str | None]:
    """The job's best plan that finishes by its deadline, from the latest crawls of every platform
    (as `gpuplan plans --tokens --within` plans it); (None, None): read, and no plan meets it."""
    job = jobs.get(watch.job)
    if job is None:
        return None, f"no job named {watch.job!r} in GPUPLAN_JOBS"
    answer = plan_job(con, job, start_at=checked_at, stale_hours=stale_hours, max_nodes=max_nodes)
    if not answer.plans:
        return None, None
    best = answer.plans[0]
    reading = WatchReading(
        float(best["total_usd"]), best["platform"], best["gpu_model"], best["gpu_count"], best["finish"]
    )
    return reading, None


def _record(con: duckdb.DuckDBPyConnection, checks: Sequence[WatchCheck], checked_at: datetime) -> None:
    for check in checks:
        if not check.known:
            continue
        queries.execute(
            con,
            "watch/state_record",
            watch_key=check.key,
            holding=check.holding,
            fires=check.fires,
            checked_at=checked_at,
            fired_at=checked_at if check.fired else None,
        )


def edge_events(checks: Sequence[WatchCheck], checked_at: datetime) -> Callable[[str], list[Event]]:
    """Each edge of the cycle as one event in a channel's language: its key names the watch and the
    edge's number, so a retried or repeated push never sends one edge twice."""
    fired = [check for check in checks if check.fired]

    def in_lang(lang: str) -> list[Event]:
        wording = Wording.of(lang)
        when = checked_at.strftime("%Y-%m-%d %H:%M UTC")
        found = []
        for check in fired:
            result = WatchResult(check.watch, check.reading, None)
            text = "\n".join([wording.t("push.title.watches", day=when), fired_line(wording, check)])
            entry = {**watch_entry(result, wording), "checked_at": checked_at}
            found.append(
                Event("watches", f"watch:{check.key}:{check.fires}", checked_at.date(), text, (entry,))
            )
        return found

    return in_lang


def fired_line(wording: Wording, check: WatchCheck) -> str:
    """A watch as it fired: what it asks, what it saw; a job's plan with its finish."""
    line = wording.watch_line(WatchResult(check.watch, check.reading, None))
    if check.reading is not None and check.reading.finish is not None:
        finish = check.reading.finish.strftime("%Y-%m-%d %H:%M UTC")
        line += ", " + wording.t("watch.finish", finish=finish)
    return line

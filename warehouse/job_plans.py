"""Plans for the user's own jobs: priced in full by each platform's billing, with a deadline.

`plan_job` answers one job, ad hoc from each platform's latest usable crawl (`gpuplan plans
--tokens`, nothing written) or from one day's offers (the daily run). The offers a plan may use
and how they can be rented are the daily plans' rules (`judged_offers`, `plan_shapes`); what a
run costs is `billed_hours`. `compute_job_plans` stores every job's plans for a
day in `job_plans`; what changed in each job's best plan since the previous day with job plans is
the daily plans' one change detector (`daily_plans.compute_plan_changes(..., subject="job")`, table
`plan_changes`, which the digest reports jobs first from). Every compute function replaces exactly
its day's rows. Planning a job needs no pandas (plain rows in and out):
the ad-hoc job plan's process would spend half its start importing it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING, Any, cast

import duckdb

from sizing import fabric
from sizing.catalog import load_gpus
from sizing.jobs import Job
from warehouse import daily_plans, queries
from warehouse.requirements import (
    cluster_counts,
    cluster_requirement_rows,
    fabric_rows,
    job_requirement_rows,
)

if TYPE_CHECKING:  # planning a job builds no frame; storing a day's job plans does
    import pandas as pd

# A plan that trains for more than a century is no plan: it is said as the job's reason instead
# (`tokens: 1e30` made a finish past what DuckDB's timestamps hold, "Interval out of
# range", and failed every job's plans). Bounded amounts (sizing.jobs) keep most such jobs out
# when they are read; a huge model on a slow card can still be this slow.
MAX_TRAIN_DAYS = 36_525.0
# Jobs planned in one query by compute_job_plans: the query's memory grows with the jobs' sizings
# and options, so the daily run plans them this many at a time (bench/bench_many_jobs.py measures
# 20,000 jobs, config.jobs_file.MAX_JOBS, in chunks of this size). Each chunk's query costs ~1 s
# before it reads a row (binding its sizings); measured on the bench's 20,000 jobs at load ~8:
# chunks of 1,000 57 s and 957 MB peak RSS, of 2,500 39 s and 1,037 MB, of 5,000 31 s and 1,099 MB.
JOB_CHUNK = 2_500
DAYS_PER_YEAR = 365.25

# A job's requirement rows as the options query reads them: the daily rows' columns, the fabric a
# cluster count was sized at and the goodput of its GPU count.
REQUIREMENT_FIELDS = (*daily_plans.REQUIREMENT_COLUMNS, *daily_plans.CLUSTER_REQUIREMENT_DEFAULTS)

# Columns of a stored job plan (table job_plans, migrations 050, 051 and 120).
JOB_PLAN_COLUMNS = (
    "plan_date",
    "job",
    "rank",
    "status",
    "reason",
    "model",
    "method",
    "tokens",
    "epochs",
    "within_days",
    "platform",
    "offer_id",
    "region",
    "gpu_model",
    "gpu_count",
    "units_rented",
    "nodes",
    "fabric",
    "internode_gbps_per_gpu",
    "nodes_stock",
    "goodput",
    "billing_period",
    "pricing_type",
    "stock_known",
    "available_gpus",
    "crawled_at",
    "stale",
    "price_usd_per_gpu_hour",
    "price_cny_per_gpu_hour",
    "mfu",
    "tokens_per_second",
    "train_days",
    "billed_hours",
    "finish",
    "total_usd",
    "total_cny",
    "computed_at",
)


@dataclass(frozen=True)
class JobPlans:
    """One job's answer. `plans`: the best plan of each GPU model that meets the deadline, in rank
    order, `rank` 1 the best (rows with the columns of jobs/options.sql, plain Python values:
    `finish` a naive UTC datetime); `fastest`: the plan that finishes first whatever the deadline
    (None: no offer fits at all); `reason`: why `plans` is empty (None when it is not)."""

    job: Job
    plans: list[dict[str, Any]]
    fastest: dict[str, Any] | None
    reason: str | None


def _now_utc() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


def duration_text(days: float) -> str:
    """A training time as a reader takes it in: hours under two days, else days."""
    return f"{days * 24:.0f} h" if days < 2 else f"{days:.1f} days"


def plan_text(plan: Mapping[str, Any]) -> str:
    """One plan in a line's worth: `vastai H100 SXM 80GB x8 (offer 123)`; a cluster says so:
    `aws H100 SXM 80GB x64, a cluster of 8 nodes over EFA 400 (offer p5.48xlarge/us-east-1)`."""
    cluster = f", a cluster of {plan['nodes']} nodes over {plan['fabric']}" if plan.get("fabric") else ""
    return f"{plan['platform']} {plan['gpu_model']} x{plan['gpu_count']}{cluster} (offer {plan['offer_id']})"


def cluster_assumptions(found: Sequence[Mapping[str, Any]]) -> list[str]:
    """What a job's cluster plans (rows with a `fabric`) assume, as lines of the plan's assumptions:
    where nodes are joined, at what speed, what their stock is known to be, and the goodput of the
    largest (none without a cluster plan)."""
    clusters = [plan for plan in found if plan.get("fabric")]
    if not clusters:
        return []
    unknown = sorted({plan["platform"] for plan in clusters if plan.get("nodes_stock") != "shown"})
    largest = max(int(plan["gpu_count"]) for plan in clusters)
    lines = [
        "clusters: whole nodes of one offer, joined only where its platform sells a training fabric "
        "(sizing/data/clusters.csv, README 'Clusters'), each sized at that fabric's Gb/s per GPU; "
        "TP inside a node, PP and data parallelism across nodes, the fastest layout that fits",
        fabric.goodput_line(largest) + "; a cluster plan's days include it",
    ]
    if unknown:
        lines.append(
            f"stock of the nodes unknown on {', '.join(unknown)} (*): no public API of theirs says how many "
            "nodes are free; a plan never counts more nodes than a platform shows where one does"
        )
    return lines


def _scope(job: Job, plan_date: date | None) -> str:
    where = ""
    if job.platforms:
        where += f" from {', '.join(job.platforms)}"
    if job.gpus:
        where += f" of {', '.join(job.gpus)}"
    crawls = "the latest crawls" if plan_date is None else f"the crawls of {plan_date}"
    return f"{where} in {crawls}"


def plan_job(
    con: duckdb.DuckDBPyConnection,
    job: Job,
    *,
    start_at: datetime,
    plan_date: date | None = None,
    fastest: bool = False,
    stale_hours: float | None = None,
    max_nodes: int = fabric.DEFAULT_MAX_NODES,
) -> JobPlans:
    """Plan `job` from `plan_date`'s offers (None: each platform's latest usable crawl).

    `start_at` (UTC, naive) is when the job would start: finish = start_at + train time; the
    deadline is `job.within_days` after it. `fastest` ranks by train time instead of total. From the
    latest crawls, a platform's crawl carried past a later failed attempt stands (stale: its stock
    unknown) while at most `stale_hours` older than that attempt (GPUPLAN_STALE_HOURS; None: always);
    a day's carried crawls were bounded when recorded (`daily_plans.record_plan_crawls`). Reads
    only (the job's requirement rows are a bound parameter): works on the published read-only snapshot.
    A plan may join up to `max_nodes` whole nodes of an offer the cluster table lists
    (`sizing/data/clusters.csv`; GPUPLAN_MAX_NODES, 1: never).
    """
    (answer,) = plan_jobs(
        con,
        [job],
        start_at=start_at,
        plan_date=plan_date,
        fastest=fastest,
        stale_hours=stale_hours,
        max_nodes=max_nodes,
    )
    return answer


def plan_jobs(
    con: duckdb.DuckDBPyConnection,
    jobs: Sequence[Job],
    *,
    start_at: datetime,
    plan_date: date | None = None,
    fastest: bool = False,
    stale_hours: float | None = None,
    max_nodes: int = fabric.DEFAULT_MAX_NODES,
) -> list[JobPlans]:
    """`plan_job` for each of `jobs`, in one query over the offers: the offers' shapes are made
    once, and jobs sized alike (model, method, framework, sequence, batch, GPU limit) are sized
    once. Answers in the order of `jobs`; `stale_hours` and `max_nodes` as for `plan_job`."""
    offers = _offers(con, plan_date, stale_hours, max_nodes)
    _make_shapes(con, offers, jobs)
    return _plan_chunk(con, offers, jobs, start_at, fastest, {})


@dataclass(frozen=True)
class _Offers:
    """What jobs are planned over: the day's offers (`plan_date`; None: the latest crawls), the unit
    sizes they come in per platform (jobs/unit_sizes.sql rows, those left out as stale removed),
    the platforms left out as stale (name -> why, in words) and the cluster table's rows."""

    plan_date: date | None
    stale_hours: float | None
    offered: list[tuple[Any, ...]]
    too_stale: dict[str, str]
    fabrics: list[dict[str, Any]] | None
    max_nodes: int


def _offers(
    con: duckdb.DuckDBPyConnection, plan_date: date | None, stale_hours: float | None, max_nodes: int
) -> _Offers:
    too_stale: dict[str, str] = {}
    if plan_date is None and stale_hours is not None:
        too_stale = {
            row["platform"]: _stale_text(row, stale_hours)
            for row in queries.records(con, "jobs/stale_platforms", max_stale_hours=float(stale_hours))
        }
    fabrics = fabric_rows(max_nodes) or None  # an empty list has no STRUCT type to bind
    scope = {"plan_date": plan_date, "latest": plan_date is None, "fabrics": fabrics}
    offered = [
        row
        for row in con.execute(queries.sql("jobs/unit_sizes"), scope).fetchall()
        if row[0] not in too_stale
    ]
    return _Offers(plan_date, stale_hours, offered, too_stale, fabrics, max_nodes)


def _make_shapes(con: duckdb.DuckDBPyConnection, offers: _Offers, jobs: Sequence[Job]) -> None:
    """The shapes every one of `jobs` may rent, into the session's `job_shapes` (jobs/shapes.sql):
    made once, whatever the number of chunks the jobs are then priced in."""
    per_node = {gpu.gpu_model: gpu.gpus_per_node for gpu in load_gpus()}
    node_sizes = [
        {"gpu_model": gpu_model, "gpus_per_node": per_node[gpu_model]}
        for gpu_model in sorted({row[1] for row in offers.offered})
        if gpu_model in per_node
    ]
    queries.execute(
        con,
        "jobs/shapes",
        plan_date=offers.plan_date,
        latest=offers.plan_date is None,
        node_sizes=node_sizes or None,
        max_gpu_count=max([daily_plans.MAX_PLAN_GPU_COUNT, *(job.max_gpus or 0 for job in jobs)]),
        max_stale_hours=None if offers.plan_date is not None else offers.stale_hours,
        fabrics=offers.fabrics,
        per_platform=any(job.platforms for job in jobs),
    )


def _plan_chunk(
    con: duckdb.DuckDBPyConnection,
    offers: _Offers,
    jobs: Sequence[Job],
    start_at: datetime,
    fastest: bool,
    sized: dict[tuple[object, ...], list[dict[str, Any]]],
) -> list[JobPlans]:
    """`jobs`' answers over `offers`' shapes (`_make_shapes` made them for these jobs, or for more);
    `sized` keeps the sizings across calls."""
    params = _options_params(offers, jobs, start_at, fastest, sized)
    options = [] if params is None else queries.records(con, "jobs/options", **params)
    by_job: dict[int, list[dict[str, Any]]] = {}
    for option in options:
        by_job.setdefault(option.pop("job_index"), []).append(option)
    on_offer = set() if params is None else {job["job_index"] for job in params["jobs"]}
    return [
        _answer(
            job,
            by_job.get(index, []),
            offers.plan_date,
            index in on_offer,
            offers.max_nodes,
            offers.too_stale,
        )
        for index, job in enumerate(jobs)
    ]


def _options_params(
    offers: _Offers,
    jobs: Sequence[Job],
    start_at: datetime,
    fastest: bool,
    sized: dict[tuple[object, ...], list[dict[str, Any]]],
) -> dict[str, Any] | None:
    """jobs/options.sql's parameters for `jobs` (`jobs`: those with anything on offer in their scope,
    by their place in `jobs`); None when no job has a requirement row (no plan; an empty list has
    no STRUCT type to bind)."""
    offered = offers.offered
    units = sorted({(gpu_model, count) for _, gpu_model, count, _, _ in offered})
    sizings: dict[tuple[object, ...], int] = {}
    requirements: list[dict[str, Any]] = []
    described: list[dict[str, Any]] = []
    for index, job in enumerate(jobs):
        if not any(_in_scope(job, platform, gpu_model) for platform, gpu_model, *_ in offered):
            continue
        limit = job.max_gpus or daily_plans.MAX_PLAN_GPU_COUNT
        key = (job.shape or job.model, job.method, job.framework, job.seq_len, job.batch, limit)
        if key not in sizings:
            sizings[key] = len(sizings)
            if key not in sized:
                sized[key] = job_requirement_rows(job, units) + cluster_requirement_rows(
                    job, cluster_counts((row[1:] for row in offered), job.max_gpus)
                )
            requirements += [
                {**{column: row[column] for column in REQUIREMENT_FIELDS}, "sizing": sizings[key]}
                for row in sized[key]
            ]
        described.append(
            {
                "job_index": index,
                "sizing": sizings[key],
                "train_tokens": job.train_tokens,
                "deadline_hours": None if job.within_days is None else job.within_days * 24,
                "max_gpu_count": limit,
                "max_gpus": job.max_gpus,
                "platforms": list(job.platforms) or None,
                "gpus": list(job.gpus) or None,
            }
        )
    if not requirements:
        return None
    return {
        "jobs": described,
        "requirements": requirements,
        "max_train_hours": MAX_TRAIN_DAYS * 24,
        "fastest": fastest,
        "start_at": start_at,
    }


def _stale_text(row: Mapping[str, Any], bound: float) -> str:
    """Why a platform's offers are left out as stale (a row of jobs/stale_platforms.sql)."""
    platform, crawled_at, hours = row["platform"], row["crawled_at"], row["stale_hours"]
    if row["catalog_date"] is not None:
        return (
            f"{platform}'s catalog is dated {row['catalog_date']:%Y-%m-%d}, {hours:.0f} h older than its "
            f"latest crawl ({crawled_at:%Y-%m-%d %H:%M} UTC), past GPUPLAN_STALE_HOURS ({bound:g} h): "
            "its offers are left out"
        )
    return (
        f"{platform}'s last good crawl ({crawled_at:%Y-%m-%d %H:%M} UTC) is {hours:.0f} h older than its "
        f"latest crawl attempt, past GPUPLAN_STALE_HOURS ({bound:g} h): its offers are left out"
    )


def _in_scope(job: Job, platform: str, gpu_model: str) -> bool:
    return (not job.platforms or platform in job.platforms) and (not job.gpus or gpu_model in job.gpus)


def _answer(
    job: Job,
    options: list[dict[str, Any]],
    plan_date: date | None,
    on_offer: bool,
    max_nodes: int,
    too_stale: Mapping[str, str],
) -> JobPlans:
    """One job's answer from its rows of jobs/options.sql, with the reason when it has no plan
    (`too_stale`: why each platform left out as stale is, in words)."""
    stale = [text for platform, text in too_stale.items() if not job.platforms or platform in job.platforms]
    because = f"; {'; '.join(stale)}" if stale else ""
    if not on_offer:
        return JobPlans(job, [], None, f"no offers{_scope(job, plan_date)}{because}")
    found = [_without_kind(option) for option in options if option["kind"] == "plan"]
    best = next((_without_kind(option) for option in options if option["kind"] == "fastest"), None)
    limit = job.max_gpus or daily_plans.MAX_PLAN_GPU_COUNT
    if best is None:
        reason = (
            f"no offer fits: {job.model} {job.method} fits on no GPU on offer{_scope(job, plan_date)} "
            f"with up to {limit} GPUs"
            + (
                f" on one machine or {max_nodes} nodes where a platform sells a fabric"
                if max_nodes > 1
                else ""
            )
            + because
        )
    elif best["train_days"] > MAX_TRAIN_DAYS:
        reason = (
            f"no plan finishes within {MAX_TRAIN_DAYS / DAYS_PER_YEAR:.0f} years: the fastest, "
            f"{plan_text(best)}, takes {best['train_days'] / DAYS_PER_YEAR:,.0f} years"
        )
    elif not found:
        reason = (
            f"nothing finishes within {duration_text(job.within_days or 0)}: the fastest plan, "
            f"{plan_text(best)}, takes {duration_text(best['train_days'])}"
        )
    else:
        reason = None
    return JobPlans(job, found, best, reason)


def _without_kind(option: dict[str, Any]) -> dict[str, Any]:
    return {column: value for column, value in option.items() if column != "kind"}


def _job_columns(job: Job, plan_date: date, computed_at: datetime) -> dict[str, Any]:
    return {
        "plan_date": plan_date,
        "job": job.name,
        "model": job.model,
        "method": job.method,
        "tokens": job.tokens,
        "epochs": job.epochs,
        "within_days": job.within_days,
        "computed_at": computed_at,
    }


def compute_job_plans(
    con: duckdb.DuckDBPyConnection,
    plan_date: date,
    jobs: Sequence[Job],
    start_at: datetime,
    max_nodes: int = fabric.DEFAULT_MAX_NODES,
) -> int:
    """Replace `plan_date`'s job plans: for every job, its best plan per GPU model from the day's
    offers (rank 1 = the cheapest that meets its deadline), or one 'no_plan' row saying why.

    The jobs are planned JOB_CHUNK at a time, each chunk's rows stored before the next is planned,
    so memory stays flat however many jobs there are (config.jobs_file.MAX_JOBS bounds them).
    `start_at` (UTC) is when the jobs would start; `max_nodes` as for `plan_job`. Returns the number
    of rows stored.
    """
    import pandas as pd  # the daily run's path: binding 40,000 rows as one parameter took 15 s

    computed_at = _now_utc()
    sized: dict[tuple[object, ...], list[dict[str, Any]]] = {}  # the chunks share the day's offers
    offers = _offers(con, plan_date, None, max_nodes)
    _make_shapes(con, offers, jobs)  # once: the chunks price the same shapes
    with daily_plans.transaction(con):
        con.execute("DELETE FROM job_plans WHERE plan_date = $d", {"d": plan_date})
        for first in range(0, len(jobs), JOB_CHUNK):
            chunk = jobs[first : first + JOB_CHUNK]
            params = _options_params(offers, chunk, start_at, False, sized)
            options = pd.DataFrame() if params is None else queries.frame(con, "jobs/options", **params)
            on_offer = set() if params is None else {job["job_index"] for job in params["jobs"]}
            # a job with a plan stores its plans as the query gave them, with the job's columns: no
            # row passes through Python; the others (few) are answered one by one, with the reason
            planned = options[options["kind"] == "plan"] if len(options) else options
            with_plans = set(planned["job_index"]) if len(planned) else set()
            described = pd.DataFrame.from_records(
                [
                    {"job_index": index, **_job_columns(job, plan_date, computed_at)}
                    for index, job in enumerate(chunk)
                    if index in with_plans
                ]
            )
            stored = (
                [planned.merge(described, on="job_index").assign(status="ok", reason=None)]
                if with_plans
                else []
            )
            rest = options[~options["job_index"].isin(with_plans)] if len(options) else options
            by_job = {
                int(cast(Any, index)): _plain_records(group.drop(columns=["job_index"]))
                for index, group in (rest.groupby("job_index") if len(rest) else [])
            }
            unplanned = [
                {
                    **_job_columns(job, plan_date, computed_at),
                    "rank": 1,
                    "status": "no_plan",
                    "reason": _answer(
                        job, by_job.get(index, []), plan_date, index in on_offer, max_nodes, offers.too_stale
                    ).reason,
                }
                for index, job in enumerate(chunk)
                if index not in with_plans
            ]
            if unplanned:
                stored.append(pd.DataFrame.from_records(unplanned))
            for frame in stored:
                _insert_job_plans(con, frame.reindex(columns=list(JOB_PLAN_COLUMNS)))
    return _count(con, "SELECT count(*) FROM job_plans WHERE plan_date = $d", plan_date)


def _plain_records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """A frame's rows as queries.records gives them: NULL as None."""
    return cast(list[dict[str, Any]], frame.astype(object).where(frame.notna(), None).to_dict("records"))


def _insert_job_plans(con: duckdb.DuckDBPyConnection, frame: pd.DataFrame) -> None:
    con.register("job_plan_rows", frame)
    try:
        con.execute("INSERT INTO job_plans BY NAME SELECT * FROM job_plan_rows")
    finally:
        con.unregister("job_plan_rows")


def _count(con: duckdb.DuckDBPyConnection, sql: str, day: date) -> int:
    return int(con.execute(sql, {"d": day}).fetchall()[0][0])


def job_plans_for_date(con: duckdb.DuckDBPyConnection, plan_date: date | None = None) -> pd.DataFrame:
    """The job plans of `plan_date` (None: the latest day with job plans), by job and rank."""
    return queries.frame(con, "jobs/for_date", plan_date=plan_date)


def jobs_without_plan(con: duckdb.DuckDBPyConnection, plan_date: date, jobs: Sequence[str]) -> list[str]:
    """Of `jobs`, those with neither a plan nor a stated reason on `plan_date`."""
    return list(queries.frame(con, "jobs/missing", plan_date=plan_date, jobs=list(jobs))["job"])

"""The daily plans, computed in SQL inside the warehouse: requirements, candidates, cheapest plans, changes.

Every function takes an open connection and one `plan_date`, and replaces exactly that day's rows
(delete, then insert, in one transaction): re-running a day changes nothing else. The Dagster assets
and the `gpuplan` CLI call these same functions; nothing here needs Dagster.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING

import duckdb

from config.settings import Settings
from sizing.planner import DEFAULT_GPU_COUNTS
from warehouse import queries

if TYPE_CHECKING:  # frames come from DuckDB (`.df()`); the job plans import this module without pandas
    import pandas as pd

# The largest job considered: the sizing planner's largest default GPU count. Bigger jobs are clusters
# bought by contract, not rented from the platforms we crawl, and each extra count multiplies the
# candidates to rank.
MAX_PLAN_GPU_COUNT = max(DEFAULT_GPU_COUNTS)

# The daily rankings (definitions/00_ranked_plans.sql says what each ranks by). Days planned before
# 'lowest_run_total' keep the 'lowest_cost_per_btoken' rows they were planned with (migration 095).
RANKINGS = ("lowest_rent", "lowest_run_total")
# Whose best plans the change detector compares (plan_changes.subject): the daily plans', the jobs'.
SUBJECTS = ("plan", "job")

# Tokens of one training run for the daily tables' train_days and total (the article's 训练周期 beside
# the month's rent): GPUPLAN_DEFAULT_TOKENS, whose default this is, for callers without settings.
# One billion tokens is a typical fine-tuning run (a few epochs over 100-300M tokens of instructions).
DEFAULT_JOB_TOKENS = 1e9

# Columns a requirements frame must carry (one row per model, method, GPU model and GPU count).
REQUIREMENT_COLUMNS = (
    "model",
    "model_preset",
    "params",
    "method",
    "gpu_model",
    "gpu_count",
    "gpus_per_node",
    "fits",
    "zero_stage",
    "per_gpu_memory_gb",
    "tokens_per_second",
    "mfu",
    "multi_node",
)

# A cluster's requirement rows say the fabric they were sized at and the goodput of their GPU count
# (migration 121); a frame without them is one machine's: NULL and 1.
CLUSTER_REQUIREMENT_DEFAULTS = {"internode_gbps_per_gpu": None, "goodput": 1.0}

# What makes a requirement row unique within a day.
REQUIREMENT_KEY = ("model", "method", "gpu_model", "gpu_count", "internode_gbps_per_gpu")

# How long a failed platform's last good crawl stands in the plans, for callers without settings:
# GPUPLAN_STALE_HOURS's default (two daily runs).
STALE_HOURS: float = Settings.stale_hours

# Columns of a crawls frame for `record_plan_crawls`.
PLAN_CRAWL_COLUMNS = ("platform", "crawl_id", "status")


def _now_utc() -> datetime:
    """UTC wall time without zone, as the warehouse stores timestamps."""
    return datetime.now(UTC).replace(tzinfo=None)


@contextmanager
def transaction(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """One transaction on `con`: committed when the block ends, rolled back when it raises."""
    con.begin()
    try:
        yield
    except BaseException:
        con.rollback()
        raise
    con.commit()


def _scalar(con: duckdb.DuckDBPyConnection, sql: str, plan_date: date, **params: object) -> int:
    # fetchall, not fetchone: DuckDB 2.0 keeps an unfinished result and blocks the connection
    return int(con.execute(sql, {"d": plan_date, **params}).fetchall()[0][0])


def _require_columns(frame: pd.DataFrame, columns: Sequence[str], what: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"{what} frame lacks columns: {', '.join(missing)}")


def record_plan_crawls(
    con: duckdb.DuckDBPyConnection,
    plan_date: date,
    crawls: pd.DataFrame,
    stale_hours: float = STALE_HOURS,
    carry_uncrawled: bool = False,
) -> int:
    """Say which crawl of each platform feeds `plan_date`'s plans (columns: PLAN_CRAWL_COLUMNS).

    A platform already recorded for the day is replaced (a re-crawl wins); other platforms stay. A
    crawl that does not stand for all (failed, skipped, empty, partial) stays recorded as it is, and
    the platform's last good crawl stands in the day's plans for what it did not read (carried,
    marked stale) while the two are at most `stale_hours` apart (GPUPLAN_STALE_HOURS; 0: never): the
    carry rule, warehouse/definitions/15_crawl_carries.sql. With `carry_uncrawled` (the daily run:
    the crawls it made are all of the day's), every other platform with a good crawl is recorded as
    'not_crawled' and its last good crawl carried by the same rule. Returns the number of platforms
    recorded for the day.
    """
    _require_columns(crawls, PLAN_CRAWL_COLUMNS, "crawls")
    if not (stale_hours >= 0 and math.isfinite(stale_hours)):
        raise ValueError(f"stale_hours must be a number of hours >= 0, got {stale_hours!r}")
    frame = crawls.loc[:, list(PLAN_CRAWL_COLUMNS)].drop_duplicates("platform", keep="last")
    con.register("recorded_crawls", frame)
    try:
        with transaction(con):
            queries.execute(
                con,
                "plans/record_crawls",
                plan_date=plan_date,
                recorded_at=_now_utc(),
                stale_hours=float(stale_hours),
                carry_uncrawled=carry_uncrawled,
            )
            con.execute("DELETE FROM plan_carried_crawls WHERE plan_date = $d", {"d": plan_date})
            queries.execute(
                con, "plans/record_carried_crawls", plan_date=plan_date, stale_hours=float(stale_hours)
            )
    finally:
        con.unregister("recorded_crawls")
    return _scalar(con, "SELECT count(*) FROM plan_crawls WHERE plan_date = $d", plan_date)


def store_requirements(con: duckdb.DuckDBPyConnection, plan_date: date, requirements: pd.DataFrame) -> int:
    """Replace `plan_date`'s sizing requirements with `requirements` (columns: REQUIREMENT_COLUMNS).

    Returns the number of rows stored.
    """
    _require_columns(requirements, REQUIREMENT_COLUMNS, "requirements")
    missing = {
        name: value for name, value in CLUSTER_REQUIREMENT_DEFAULTS.items() if name not in requirements
    }
    frame = requirements.assign(**missing).loc[:, [*REQUIREMENT_COLUMNS, *CLUSTER_REQUIREMENT_DEFAULTS]]
    frame["goodput"] = frame["goodput"].fillna(1.0)  # one machine's rows beside a cluster's
    twice = frame[frame.duplicated(list(REQUIREMENT_KEY), keep=False)]
    if not twice.empty:
        first = twice.iloc[0]
        raise ValueError(
            f"requirements name the same ({', '.join(REQUIREMENT_KEY)}) twice, e.g. "
            + ", ".join(str(first[key]) for key in REQUIREMENT_KEY)
        )
    with transaction(con):
        con.register("requirements_frame", frame)
        try:
            con.execute("DELETE FROM plan_requirements WHERE plan_date = $d", {"d": plan_date})
            con.execute(
                "INSERT INTO plan_requirements BY NAME SELECT $d AS plan_date, * FROM requirements_frame",
                {"d": plan_date},
            )
        finally:
            con.unregister("requirements_frame")
    return _scalar(con, "SELECT count(*) FROM plan_requirements WHERE plan_date = $d", plan_date)


def compute_candidates(
    con: duckdb.DuckDBPyConnection,
    plan_date: date,
    job_tokens: float = DEFAULT_JOB_TOKENS,
    fabrics: list[dict[str, object]] | None = None,
) -> int:
    """Replace `plan_date`'s candidates: every fitting configuration of the day's offers, cheapest offer each.

    Reads plan_crawls, offers and plan_requirements of the day. Offers under the price floor
    (`judged_offers`) are left out and recorded in `plan_excluded_offers` for the day.
    Each candidate also gets `train_days` and `total_usd`/`total_cny` for a run of `job_tokens`
    tokens (by the offer's billing). `fabrics`: the cluster table's rows a candidate may join whole
    nodes over (`requirements.fabric_rows`; None: one machine), sized by `size_days` with the
    same rows. Returns the number of candidates.
    """
    if not (job_tokens > 0 and math.isfinite(job_tokens)):
        raise ValueError(f"job_tokens must be a positive number of tokens, got {job_tokens!r}")
    computed_at = _now_utc()
    with transaction(con):
        con.execute("DELETE FROM plan_excluded_offers WHERE plan_date = $d", {"d": plan_date})
        queries.execute(
            con,
            "plans/record_excluded_offers",
            plan_date=plan_date,
            computed_at=computed_at,
        )
        con.execute("DELETE FROM plan_candidates WHERE plan_date = $d", {"d": plan_date})
        queries.execute(
            con,
            "plans/candidates",
            plan_date=plan_date,
            max_gpu_count=MAX_PLAN_GPU_COUNT,
            job_tokens=float(job_tokens),
            computed_at=computed_at,
            fabrics=fabrics or None,
        )
    return _scalar(con, "SELECT count(*) FROM plan_candidates WHERE plan_date = $d", plan_date)


def compute_cheapest_plans(con: duckdb.DuckDBPyConnection, plan_date: date) -> int:
    """Replace `plan_date`'s cheapest plans from its candidates; one row per (model, method, ranking).

    Returns the number of rows (models x methods x 2 when requirements exist for the day).
    """
    with transaction(con):
        con.execute("DELETE FROM cheapest_plans WHERE plan_date = $d", {"d": plan_date})
        queries.execute(con, "plans/cheapest", plan_date=plan_date, computed_at=_now_utc())
    return _scalar(con, "SELECT count(*) FROM cheapest_plans WHERE plan_date = $d", plan_date)


def compute_plan_changes(
    con: duckdb.DuckDBPyConnection, plan_date: date, price_move_pct: float, subject: str = "plan"
) -> int:
    """Replace `plan_date`'s changes of `subject`'s best plans against the previous day with such
    plans: the one change detector (queries/plans/changes.sql) for both subjects, 'plan' (each daily
    (model, method, ranking)) and 'job' (each job's rank-1 plan).

    A price change counts when the measure (best_plans.measure: what the plan's ranking ranks by, a
    month's rent or a run's total; a job's total) moved by at least `price_move_pct` percent.
    Returns the number of changed plans (`count_changed_plans`; 0 on the first day planned).
    """
    if subject not in SUBJECTS:
        raise ValueError(f"subject must be one of {', '.join(SUBJECTS)}, got {subject!r}")
    with transaction(con):
        con.execute(
            "DELETE FROM plan_changes WHERE change_date = $d AND subject = $subject",
            {"d": plan_date, "subject": subject},
        )
        queries.execute(
            con,
            "plans/changes",
            subject=subject,
            plan_date=plan_date,
            price_move_pct=float(price_move_pct),
            computed_at=_now_utc(),
        )
    return count_changed_plans(con, plan_date, subject)


def compute_plan_changes_for_days(
    con: duckdb.DuckDBPyConnection, days: Sequence[date], price_move_pct: float, subject: str = "plan"
) -> int:
    """Replace the changes of `subject` on `days` (any order), oldest first, then on the first day
    planned after them.

    Each day compares with the previous day with such plans, which may be one of `days` or new since
    the next day's changes were computed: so that day's changes are recomputed too. Returns the
    number of changed plans of `days`.
    """
    if not days:
        return 0
    ordered = sorted(set(days))
    changes = sum(compute_plan_changes(con, day, price_move_pct, subject) for day in ordered)
    ((following,),) = con.execute(
        queries.sql("plans/next_day"), {"day": ordered[-1], "subject": subject}
    ).fetchall()
    if following is not None:
        compute_plan_changes(con, following, price_move_pct, subject)
    return changes


def has_history_before(con: duckdb.DuckDBPyConnection, day: date) -> bool:
    """True when the warehouse holds a day before `day`: one planned, or a usable run (crawled or
    imported) of an earlier day that was never planned."""
    row = con.execute(queries.sql("history/before"), {"day": day}).fetchone()
    return bool(row and row[0])


def first_day(con: duckdb.DuckDBPyConnection) -> date | None:
    """The first day the warehouse holds (planned, or a usable crawled or imported run); None when empty."""
    row = con.execute(queries.sql("history/first_day")).fetchone()
    return row[0] if row else None


def recorded_days(con: duckdb.DuckDBPyConnection, first: date, last: date) -> list[date]:
    """Days in [first, last] with a crawl recorded in plan_crawls (days that can have plans), oldest first.

    A day without any is a day without data: it gets no plans rather than 'no_offer_fits'.
    """
    rows = con.execute(queries.sql("plans/recorded_days"), {"first": first, "last": last}).fetchall()
    return [row[0] for row in rows]


def offers_below_price_floor(con: duckdb.DuckDBPyConnection, plan_date: date) -> pd.DataFrame:
    """The day's offers under the price floor (`judged_offers`), against which median.

    Computed from the day's offers, so it can be asked before the day's candidates exist.
    """
    return queries.frame(con, "plans/offers_below_price_floor", plan_date=plan_date)


def excluded_offers(con: duckdb.DuckDBPyConnection, plan_date: date) -> pd.DataFrame:
    """The offers `compute_candidates` left out of `plan_date`'s plans (table plan_excluded_offers)."""
    return con.execute(
        "SELECT * FROM plan_excluded_offers WHERE plan_date = $d ORDER BY gpu_model, platform, offer_id",
        {"d": plan_date},
    ).df()


def plans_for_date(
    con: duckdb.DuckDBPyConnection,
    plan_date: date | None = None,
    model: str | None = None,
    method: str | None = None,
) -> pd.DataFrame:
    """The cheapest plans of `plan_date` (None: the latest day with plans), smallest model first."""
    return queries.frame(con, "plans/for_date", plan_date=plan_date, model=model, method=method)


def plans_for_gpu(
    con: duckdb.DuckDBPyConnection,
    gpu_model: str,
    plan_date: date | None = None,
    model: str | None = None,
    method: str | None = None,
) -> pd.DataFrame:
    """The best plans of `plan_date` (None: the latest day with plans) on one canonical GPU model:
    the daily rankings among that GPU's candidates, 'no_offer_fits' where none of it fits."""
    return queries.frame(con, "plans/for_gpu", gpu=gpu_model, plan_date=plan_date, model=model, method=method)


def day_crawls(con: duckdb.DuckDBPyConnection, plan_date: date) -> pd.DataFrame:
    """The crawl behind each platform's offers on `plan_date`: status, error, items and offers loaded."""
    return queries.frame(con, "plans/day_crawls", plan_date=plan_date)


def changes_for_date(con: duckdb.DuckDBPyConnection, plan_date: date, subject: str = "plan") -> pd.DataFrame:
    """The changes of `subject` ('plan' | 'job') recorded for `plan_date`: a row per kind of change."""
    return queries.frame(con, "plans/changes_for_date", change_date=plan_date, subject=subject)


def changed_plans_for_date(
    con: duckdb.DuckDBPyConnection, plan_date: date, subject: str | None = None
) -> pd.DataFrame:
    """The changed plans of `plan_date`, one row per plan change as the digest counts them (view
    `changed_plans`): subject, job, model, method, ranking, changes (its kinds joined), detail.
    `subject` None: jobs' and daily plans' alike, jobs first."""
    return queries.frame(con, "plans/changed_plans_for_date", change_date=plan_date, subject=subject)


def count_changed_plans(con: duckdb.DuckDBPyConnection, plan_date: date, subject: str | None = None) -> int:
    """How many plans changed on `plan_date` (of `subject`; None: jobs' and daily plans'), one per
    plan change whatever its kinds: the count the digest, `gpuplan refresh` and the Dagster assets say."""
    return _scalar(
        con,
        "SELECT count(*) FROM changed_plans WHERE change_date = $d "
        "AND ($subject IS NULL OR subject = $subject)",
        plan_date,
        subject=subject,
    )


def missing_plans(
    con: duckdb.DuckDBPyConnection, plan_date: date, models: Sequence[str], methods: Sequence[str]
) -> pd.DataFrame:
    """(model, method, ranking) triples asked for but without a row in `plan_date`'s cheapest plans."""
    return queries.frame(
        con,
        "plans/missing",
        plan_date=plan_date,
        models=list(models),
        methods=list(methods),
        rankings=list(RANKINGS),
    )

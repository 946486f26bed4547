"""The digest's plan changes: one entry per changed plan, old plan -> new plan, and why it changed.

`plan_changes` keeps one row per kind of change (a move from one offer to another is a new
platform, a new GPU and a price change at once), for jobs and daily plans alike (`subject`); the
digest reports each changed plan once: per job, and per (model, method, ranking), jobs first. Each
entry carries the ranking's own measure on both days, as the best plan stores it (`best_plans`:
`commitment_usd` for `lowest_rent`, `total_usd` for `lowest_run_total` and for a job), its change
in percent, and the facts behind the change as `Reason`s, which the renderer puts in words in the
reader's language.

Money is USD and CNY as the plans carry them; percentages are percent (12.5 = +12.5 %).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from typing import Any

import duckdb

from warehouse import queries

# A price per GPU-hour that moved less than this, in percent, is "unchanged" in the words of a
# change: offers quoted in CNY are converted at each day's exchange rate, and a rate's wiggle in the
# third decimal is not why a plan changed.
UNCHANGED_PCT = 0.1

# Every Reason.kind (see Reason); each names a sentence `reason.<kind>` in the catalogues.
REASON_KINDS = (
    "new_offer",
    "new_fell",
    "new_at",
    "price_rose",
    "price_fell",
    "gpu_count",
    "old_missing",
    "old_gone",
    "old_short",
    "old_rose",
    "old_fell",
    "old_same",
    "none_fits",
    "none_fitted",
)


@dataclass(frozen=True)
class PlanSide:
    """A plan on one of the two days. `ok` False: no plan (no offer fits, or the job has none)."""

    ok: bool
    platform: str | None
    offer_id: str | None
    pricing_type: str | None
    billing_period: str | None  # hour | day | week | month
    gpu_model: str | None
    gpu_count: int | None
    usd_per_gpu_hour: float | None
    cny_per_gpu_hour: float | None
    measure_usd: float | None  # the ranking's measure (ChangedPlan.measure)
    measure_cny: float | None
    nodes: int | None = None  # machines the plan takes
    fabric: str | None = None  # what joins them: a cluster plan (`EFA 400`); None: one machine
    region: str | None = None  # its offer's region that day, as the platform names it (None: none)


@dataclass(frozen=True)
class Reason:
    """One fact behind a change, for the reader's "why". `kind` names the catalogue sentence:

    new_offer      the new plan's offer was not offered on the previous day
    new_fell       the new plan's offer got cheaper (pct_change < 0)
    new_at         the new plan's offer, at its price (not new, not cheaper)
    price_rose / price_fell   the plan kept its offer, whose price moved
    gpu_count      the plan kept its offer with another GPU count (gpus: the new count)
    old_missing    the old plan's platform has no offers today (its crawl failed or was skipped)
    old_gone       the old plan's offer is not among today's offers
    old_short      the old plan's offer has fewer GPUs free than the plan needs (gpus: free now)
    old_rose / old_fell       the old plan's offer moved (by less than the new one undercuts it)
    old_same       the old plan's offer is unchanged
    none_fits      no offer fits any more
    none_fitted    no offer fitted on the previous day
    """

    kind: str
    platform: str | None = None
    gpu_model: str | None = None
    usd_per_gpu_hour: float | None = None
    cny_per_gpu_hour: float | None = None
    pct_change: float | None = None
    gpus: int | None = None


@dataclass(frozen=True)
class ChangedPlan:
    """One changed plan of the day: a job's, or a (model, method, ranking)'s."""

    subject: str  # 'job' | 'plan'
    job: str | None  # the job's name (subject 'job')
    model: str
    method: str
    ranking: str  # 'lowest_rent' | 'lowest_run_total' | 'lowest_total' (a job)
    measure: str  # what the ranking ranks by, a column of the best plan: 'commitment_usd' | 'total_usd'
    change_types: tuple[str, ...]  # the detail rows' kinds (plan_changes.change_type)
    previous_date: date | None
    old: PlanSide
    new: PlanSide
    pct_change: float | None  # of the measure in USD
    reasons: tuple[Reason, ...]


# The reasons about the new plan's offer: what it is or did. Plans whose new offer did the same thing
# share one cause ("vastai's RTX A4000 16GB, new at $0.083/GPU-h, now wins 6 plans").
NEW_SIDE_KINDS = ("new_offer", "new_fell", "new_at", "price_rose", "price_fell")
# A cause the digest says once above its plans: one that changed at least this many.
SHARED_CAUSE_PLANS = 2


@dataclass(frozen=True)
class Cause:
    """What the new offer of several changed plans did: `reason` (a NEW_SIDE_KINDS one, the same for
    each), the offer (`platform`, `offer_id`, `pricing_type`), and the plans, in the changes' order."""

    reason: Reason
    offer_id: str | None
    pricing_type: str | None
    changes: tuple[ChangedPlan, ...]


def cause_of(change: ChangedPlan) -> tuple[str, str | None, str | None, str | None] | None:
    """The key of `change`'s cause, (reason kind, platform, offer id, pricing type) of its new offer;
    None when it has no plan now or no reason about its new offer."""
    reason = new_side(change)
    if reason is None or not change.new.ok:
        return None
    return (reason.kind, change.new.platform, change.new.offer_id, change.new.pricing_type)


def new_side(change: ChangedPlan) -> Reason | None:
    """The reason about `change`'s new offer (NEW_SIDE_KINDS), if it has one."""
    return next((reason for reason in change.reasons if reason.kind in NEW_SIDE_KINDS), None)


def shared_causes(changes: Iterable[ChangedPlan], least: int = SHARED_CAUSE_PLANS) -> tuple[Cause, ...]:
    """The causes that at least `least` of `changes` share, in the order their first plan comes."""
    grouped: dict[tuple[str, str | None, str | None, str | None], list[ChangedPlan]] = {}
    for change in changes:
        key = cause_of(change)
        if key is not None:
            grouped.setdefault(key, []).append(change)
    causes = []
    for (_, _, offer_id, pricing_type), members in grouped.items():
        reason = new_side(members[0])
        if len(members) >= least and reason is not None:
            causes.append(Cause(reason, offer_id, pricing_type, tuple(members)))
    return tuple(causes)


def changed_plans(con: duckdb.DuckDBPyConnection, change_date: date) -> tuple[ChangedPlan, ...]:
    """Every changed plan of `change_date` (jobs first, then smallest model first), with its reasons."""
    return tuple(_entry(row) for row in queries.records(con, "digest/plan_changes", change_date=change_date))


def _side(row: dict[str, Any], prefix: str) -> PlanSide:
    return PlanSide(
        ok=bool(row[f"{prefix}_ok"]),
        **{
            name: row[f"{prefix}_{name}"]
            for name in (
                "platform",
                "offer_id",
                "pricing_type",
                "billing_period",
                "gpu_model",
                "gpu_count",
                "usd_per_gpu_hour",
                "cny_per_gpu_hour",
                "measure_usd",
                "measure_cny",
                "nodes",
                "fabric",
                "region",
            )
        },
    )


def _entry(row: dict[str, Any]) -> ChangedPlan:
    old, new = _side(row, "old"), _side(row, "new")
    return ChangedPlan(
        subject=row["subject"],
        job=row["job"],
        model=row["model"],
        method=row["method"],
        ranking=row["ranking"],
        measure=row["measure"],
        change_types=tuple(row["change_types"]),
        previous_date=row["previous_date"],
        old=old,
        new=new,
        pct_change=row["pct_change"],
        reasons=reasons(row, old, new),
    )


def _move(new: float | None, old: float | None) -> float | None:
    """The move from `old` to `new` in percent; None when unknown or under UNCHANGED_PCT."""
    if new is None or old is None or old == 0:
        return None
    pct = 100 * (new - old) / old
    # compared rounded: $1.000 -> $1.001 is 0.0999999... in binary floating point, and a move of
    # exactly UNCHANGED_PCT is a move
    return pct if abs(round(pct, 9)) >= UNCHANGED_PCT else None


def reasons(row: dict[str, Any], old: PlanSide, new: PlanSide) -> tuple[Reason, ...]:
    """Why the plan changed, from the query's facts: what the new plan's offer did, then the old's."""
    if old.ok and new.ok and row["same_offer"]:
        return _same_offer(old, new)
    said: list[Reason] = []
    if not old.ok:
        said.append(Reason("none_fitted"))
    if new.ok:
        said.append(_new_offer(row, new))
    else:
        said.append(Reason("none_fits"))
    if old.ok:
        said.append(_old_offer(row, old))
    return tuple(said)


def _same_offer(old: PlanSide, new: PlanSide) -> tuple[Reason, ...]:
    said = []
    pct = _move(new.usd_per_gpu_hour, old.usd_per_gpu_hour)
    if pct is not None:
        said.append(
            Reason(
                "price_rose" if pct > 0 else "price_fell",
                new.platform,
                new.gpu_model,
                new.usd_per_gpu_hour,
                new.cny_per_gpu_hour,
                pct,
            )
        )
    if new.gpu_count != old.gpu_count:
        said.append(Reason("gpu_count", new.platform, new.gpu_model, gpus=new.gpu_count))
    return tuple(said)


def _new_offer(row: dict[str, Any], new: PlanSide) -> Reason:
    before = row["new_offer_before_usd_per_gpu_hour"]
    pct = _move(new.usd_per_gpu_hour, before)
    kind = "new_offer" if before is None else "new_fell" if pct is not None and pct < 0 else "new_at"
    return Reason(
        kind,
        new.platform,
        new.gpu_model,
        new.usd_per_gpu_hour,
        new.cny_per_gpu_hour,
        pct_change=pct if kind == "new_fell" else None,
    )


def _old_offer(row: dict[str, Any], old: PlanSide) -> Reason:
    if not row["old_platform_listed_now"]:
        return Reason("old_missing", old.platform, old.gpu_model)
    now = row["old_offer_now_usd_per_gpu_hour"]
    if now is None:
        return Reason("old_gone", old.platform, old.gpu_model)
    free = row["old_offer_now_available_gpus"]
    if free is not None and old.gpu_count is not None and free < old.gpu_count:
        return Reason("old_short", old.platform, old.gpu_model, gpus=free)
    pct = _move(now, old.usd_per_gpu_hour)
    kind = "old_same" if pct is None else "old_rose" if pct > 0 else "old_fell"
    return Reason(kind, old.platform, old.gpu_model, now, row["old_offer_now_cny_per_gpu_hour"], pct)

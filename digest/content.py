"""What a day's digest says, read from the warehouse through named queries (no formatting here).

Money is USD (and CNY where the plans carry it); percentages are percent (12.5 = +12.5 %).
Every string from a platform (names, offer text, crawl errors) is kept as received: escaping is
the renderer's job, so the plain-text mail shows it verbatim and the HTML escapes it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any, TypeVar

import duckdb

from config.watches_file import NO_WATCHES, WatchList
from digest.changes import Cause, ChangedPlan, cause_of, changed_plans, shared_causes
from digest.watches import WatchResult, evaluate_watches
from warehouse import drift, queries

# The chart covers the "last 30 days", the digest day included.
CHART_DAYS = 30
# More lines than this make the small inline chart unreadable (legend and colours run out).
CHART_MAX_MODELS = 6
# The Dagster asset check that reports the offers the plans left out as implausible (pipelines/checks.py)
EXCLUDED_OFFERS_CHECK = "prices_believable"


@dataclass(frozen=True)
class PlanLine:
    """One row of `cheapest_plans`: the cheapest way to train `model` with `method` by `ranking`."""

    model: str
    method: str
    ranking: str  # 'lowest_rent' | 'lowest_run_total'
    status: str  # 'ok' | 'no_offer_fits'
    platform: str | None
    gpu_model: str | None
    gpu_count: int | None
    pricing_type: str | None
    stock_known: bool | None  # False: the platform does not say (flagged, not excluded)
    rent_usd_per_month: float | None  # 730 hours
    rent_cny_per_month: float | None
    commitment_hours: int | None  # the least one pays for: a month (730 h) or a longer minimum term
    commitment_months: float | None  # the minimum term in months when longer than one month, else None
    commitment_usd: float | None  # rent over commitment_hours; what 'lowest_rent' ranks by
    commitment_cny: float | None
    cost_usd_per_billion_tokens: float | None  # a rate: the hourly rent over tokens per hour
    cost_cny_per_billion_tokens: float | None
    job_tokens: float | None  # one run of GPUPLAN_DEFAULT_TOKENS
    total_usd: float | None  # that run as billed: what 'lowest_run_total' ranks by
    total_cny: float | None
    stale: bool | None = None  # True: carried from an earlier crawl because the day's failed (failed_crawls)


@dataclass(frozen=True)
class StockChange:
    """A GPU model that sold out (new 0) or came back (old 0) on a platform, in GPUs available."""

    platform: str
    gpu_model: str
    old_available_gpus: int
    new_available_gpus: int

    @property
    def sold_out(self) -> bool:
        return self.new_available_gpus == 0


@dataclass(frozen=True)
class PriceMove:
    """Day-over-day move of a GPU model's lowest USD per GPU-hour, and who offers it."""

    gpu_model: str
    old_usd_per_gpu_hour: float
    new_usd_per_gpu_hour: float
    pct_change: float  # of the USD price
    old_platform: str
    new_platform: str
    old_cny_per_gpu_hour: float | None  # the same offers' prices in CNY
    new_cny_per_gpu_hour: float | None


@dataclass(frozen=True)
class CrawlFailure:
    """A platform whose last crawl of the day failed, was partial or was skipped, or read a catalog
    dated past GPUPLAN_STALE_HOURS (status 'dated_out')."""

    platform: str
    status: str  # 'failed' | 'partial' | 'skipped' | 'not_crawled' | 'dated_out'
    error: str | None
    started_at: datetime | None  # UTC
    # What it did to the day's plans (GPUPLAN_STALE_HOURS): carried, its last good crawl stands in
    # them (stale: prices as of last_good_at, stock unknown); else, with a last good crawl, its
    # offers dropped out. stale_hours: how much older that crawl is than the failed one.
    carried: bool = False
    last_good_at: datetime | None = None  # UTC; None: no good crawl before it
    stale_hours: float | None = None
    catalog_date: date | None = None  # status 'dated_out': the date of the catalog it read

    @property
    def dropped_out(self) -> bool:
        """Its offers left the day's plans: a failure (not a partial crawl) with nothing carried, or
        a crawl of a catalog dated past the bound."""
        return self.status == "dated_out" or (self.status in ("failed", "skipped") and not self.carried)


@dataclass(frozen=True)
class PricePoint:
    """The lowest USD per GPU-hour of one GPU model on one day (spot excluded)."""

    gpu_model: str
    day: date
    min_usd_per_gpu_hour: float
    min_cny_per_gpu_hour: float | None


@dataclass(frozen=True)
class ExcludedOffer:
    """Offers of a GPU model the day's plans left out as implausible (under the price floor), per
    platform: the prices_believable check's warning. Never a price move or a chart point."""

    platform: str
    gpu_model: str
    offers: int
    min_usd_per_gpu_hour: float
    min_cny_per_gpu_hour: float | None
    reference_usd_per_gpu_hour: float  # the market price they were judged against (a median)
    reference_cny_per_gpu_hour: float | None


@dataclass(frozen=True)
class CheckWarning:
    """A Dagster asset check that warns about the day, as the digest names it: the check's name as
    the UI shows it, the platform it is about (None: all), and what it says (its own words, kept as
    written, like crawl errors). The digest lists them under "Checks that warn"; the offers left out
    as implausible (`ExcludedOffer`, check prices_believable) have their own, translated, lines."""

    check: str
    platform: str | None
    detail: str


@dataclass(frozen=True)
class ChangeGroup:
    """Plan changes the digest shows together: those of one shared `cause`, or (cause None) of one
    job or model."""

    changes: tuple[ChangedPlan, ...]
    cause: Cause | None = None


@dataclass(frozen=True)
class Digest:
    """Everything one day's mail reports. `plans` empty means the day has no plans yet.

    Changes are against `previous_date`, the previous day with plans (None: the first day).
    """

    digest_date: date
    previous_date: date | None
    price_move_pct: float  # the threshold `price_moves` was cut at, in percent
    plans: tuple[PlanLine, ...]
    plan_changes: tuple[ChangedPlan, ...]  # one per changed plan, jobs first (digest.changes)
    stock_changes: tuple[StockChange, ...]
    price_moves: tuple[PriceMove, ...]
    failed_crawls: tuple[CrawlFailure, ...]
    price_history: tuple[PricePoint, ...] = field(repr=False)
    excluded_offers: tuple[ExcludedOffer, ...] = ()
    # Checks that warn, beyond the excluded offers: the place for the crawl-drift check
    check_warnings: tuple[CheckWarning, ...] = ()
    watches: tuple[WatchResult, ...] = ()  # every watch of GPUPLAN_WATCHES, fired or not
    watch_error: str | None = None  # GPUPLAN_WATCHES could not be used: why, in one line

    @property
    def fired_watches(self) -> tuple[WatchResult, ...]:
        return tuple(result for result in self.watches if result.fired)

    @property
    def is_quiet(self) -> bool:
        """Nothing to report: no watch fired, no plan, stock or price change, every platform crawled."""
        return not (
            self.fired_watches
            or self.plan_changes
            or self.stock_changes
            or self.price_moves
            or self.failed_crawls
        )

    def changes_by_group(self, limit: int | None = None) -> tuple[ChangeGroup, ...]:
        """The plan changes in groups, in the changes' order (jobs first): the plans that share one
        cause (`digest.changes.shared_causes`) together under it, the others by job (its name) or
        model; the first `limit` changes in that order (None: all)."""
        causes: dict[object, Cause] = {cause_of(cause.changes[0]): cause for cause in self.change_causes}
        groups: dict[object, list[ChangedPlan]] = {}
        key: object
        for change in self.plan_changes:
            key = cause_of(change)
            if key not in causes:
                key = change.job if change.job is not None else change.model
            groups.setdefault(key, []).append(change)
        shown: list[ChangeGroup] = []
        left = len(self.plan_changes) if limit is None else limit
        for key, changes in groups.items():
            if left <= 0:
                break
            shown.append(ChangeGroup(tuple(changes[:left]), causes.get(key)))
            left -= len(changes)
        return tuple(shown)

    @property
    def change_causes(self) -> tuple[Cause, ...]:
        """The causes several plan changes share, in the order of their first plan."""
        return shared_causes(self.plan_changes)

    def plans_by_ranking(self) -> dict[str, tuple[PlanLine, ...]]:
        """The plans grouped by ranking, in the plans' order (the query puts 'lowest_rent' first)."""
        groups: dict[str, list[PlanLine]] = {}
        for plan in self.plans:
            groups.setdefault(plan.ranking, []).append(plan)
        return {ranking: tuple(plans) for ranking, plans in groups.items()}


def build_digest(
    con: duckdb.DuckDBPyConnection,
    digest_date: date,
    *,
    price_move_pct: float,
    watches: WatchList = NO_WATCHES,
) -> Digest:
    """Read the digest of `digest_date` from a migrated warehouse connection (read-only use).

    Price moves smaller than `price_move_pct` percent are left out (the plan pipeline's
    threshold for price changes, `GPUPLAN_PRICE_MOVE_PCT`). `watches` are read on the day and
    on the previous day with plans.
    """
    previous_date = previous_plan_day(con, digest_date)
    days = {"day": digest_date, "previous_day": previous_date}
    return Digest(
        digest_date=digest_date,
        previous_date=previous_date,
        price_move_pct=price_move_pct,
        plans=_rows(con, "digest/plans", PlanLine, plan_date=digest_date),
        plan_changes=changed_plans(con, digest_date),
        stock_changes=_rows(con, "digest/stock_changes", StockChange, **days),
        price_moves=_rows(con, "digest/price_moves", PriceMove, **days, min_abs_pct=price_move_pct),
        failed_crawls=_rows(con, "digest/failed_crawls", CrawlFailure, day=digest_date)
        + tuple(
            CrawlFailure(d.platform, "drift", f"{d.check_name}: {'; '.join(d.problems)}", None)
            for d in drift.day_drift(con, digest_date)
        ),
        price_history=_rows(
            con,
            "digest/price_history",
            PricePoint,
            first_day=digest_date - timedelta(days=CHART_DAYS - 1),
            last_day=digest_date,
            max_models=CHART_MAX_MODELS,
        ),
        excluded_offers=_rows(con, "digest/excluded_offers", ExcludedOffer, day=digest_date),
        watches=evaluate_watches(con, watches.watches, digest_date, previous_date),
        watch_error=watches.error,
    )


def previous_plan_day(con: duckdb.DuckDBPyConnection, day: date) -> date | None:
    """The day `day`'s digest compares with: the previous day with plans, as plan_changes does."""
    # fetchall, never fetchone: DuckDB 2.0 keeps a half-read result open and the caller's next
    # register() on this connection fails with ResourceInUseException.
    [(previous,)] = con.execute(queries.sql("digest/previous_day"), {"day": day}).fetchall()
    return previous  # type: ignore[no-any-return]


Row = TypeVar("Row")


def _rows(
    con: duckdb.DuckDBPyConnection, name: str, row_type: Callable[..., Row], **params: Any
) -> tuple[Row, ...]:
    # records, not queries.frame: DataFrames turn DATE into Timestamp and NULL INTEGER into NA,
    # and the dataclasses want plain Python values.
    return tuple(row_type(**row) for row in queries.records(con, name, **params))

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

from warehouse import queries

# The chart covers the "last 30 days", the digest day included.
CHART_DAYS = 30
# More lines than this make the small inline chart unreadable (legend and colours run out).
CHART_MAX_MODELS = 6


@dataclass(frozen=True)
class PlanLine:
    """One row of `cheapest_plans`: the cheapest way to train `model` with `method` by `ranking`."""

    model: str
    method: str
    ranking: str  # 'lowest_rent' | 'lowest_cost_per_btoken'
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
    cost_usd_per_billion_tokens: float | None
    cost_cny_per_billion_tokens: float | None


@dataclass(frozen=True)
class PlanChange:
    """One row of `plan_changes` for the day: old and new as the plans pipeline wrote them."""

    model: str
    method: str
    ranking: str
    change_type: str
    old_value: str | None
    new_value: str | None
    old_rent_usd_per_month: float | None
    new_rent_usd_per_month: float | None
    pct_change: float | None
    detail: str | None


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
    pct_change: float
    old_platform: str
    new_platform: str


@dataclass(frozen=True)
class CrawlFailure:
    """A platform whose last crawl of the day failed, was partial or was skipped."""

    platform: str
    status: str  # 'failed' | 'partial' | 'skipped'
    error: str | None
    started_at: datetime | None  # UTC


@dataclass(frozen=True)
class PricePoint:
    """The lowest USD per GPU-hour of one GPU model on one day (spot excluded)."""

    gpu_model: str
    day: date
    min_usd_per_gpu_hour: float


@dataclass(frozen=True)
class Digest:
    """Everything one day's mail reports. `plans` empty means the day has no plans yet.

    Changes are against `previous_date`, the previous day with plans (None: the first day).
    """

    digest_date: date
    previous_date: date | None
    price_move_pct: float  # the threshold `price_moves` was cut at, in percent
    plans: tuple[PlanLine, ...]
    plan_changes: tuple[PlanChange, ...]
    stock_changes: tuple[StockChange, ...]
    price_moves: tuple[PriceMove, ...]
    failed_crawls: tuple[CrawlFailure, ...]
    price_history: tuple[PricePoint, ...] = field(repr=False)

    @property
    def is_quiet(self) -> bool:
        """Nothing to report: no plan, stock or price change and every platform crawled."""
        return not (self.plan_changes or self.stock_changes or self.price_moves or self.failed_crawls)

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
) -> Digest:
    """Read the digest of `digest_date` from a migrated warehouse connection (read-only use).

    Price moves smaller than `price_move_pct` percent are left out (the plan pipeline's
    threshold for price changes, `GPUPLAN_PRICE_MOVE_PCT`).
    """
    # fetchall, never fetchone: DuckDB 2.0 keeps a half-read result open and the caller's next
    # register() on this connection fails with ResourceInUseException.
    [(previous_date,)] = con.execute(queries.sql("digest_previous_day"), {"day": digest_date}).fetchall()
    days = {"day": digest_date, "previous_day": previous_date}
    return Digest(
        digest_date=digest_date,
        previous_date=previous_date,
        price_move_pct=price_move_pct,
        plans=_rows(con, "digest_plans", PlanLine, plan_date=digest_date),
        plan_changes=_rows(con, "digest_plan_changes", PlanChange, change_date=digest_date),
        stock_changes=_rows(con, "digest_stock_changes", StockChange, **days),
        price_moves=_rows(con, "digest_price_moves", PriceMove, **days, min_abs_pct=price_move_pct),
        failed_crawls=_rows(con, "digest_failed_crawls", CrawlFailure, day=digest_date),
        price_history=_rows(
            con,
            "digest_price_history",
            PricePoint,
            first_day=digest_date - timedelta(days=CHART_DAYS - 1),
            last_day=digest_date,
            max_models=CHART_MAX_MODELS,
        ),
    )


Row = TypeVar("Row")


def _rows(
    con: duckdb.DuckDBPyConnection, name: str, row_type: Callable[..., Row], **params: Any
) -> tuple[Row, ...]:
    # fetchall, not queries.frame: DataFrames turn DATE into Timestamp and NULL INTEGER into NA,
    # and the dataclasses want plain Python values.
    cursor = con.execute(queries.sql(name), params)
    columns = [column[0] for column in cursor.description]
    return tuple(row_type(**dict(zip(columns, values, strict=True))) for values in cursor.fetchall())

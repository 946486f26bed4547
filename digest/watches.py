"""Watches (GPUPLAN_WATCHES) evaluated on a day: a watch that holds on the digest day and did not
hold on the previous day with plans fires: the digest lists it first, `--json` carries it, and a
Dagster asset check shows it.

The file and its `Watch` values are `config.watches_file`'s (read at the edge, which knows the
platforms); this module reads what each watch looks at from the warehouse.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

import duckdb

from config.watches_file import JobWatch, PriceWatch, StockWatch, Watch
from warehouse import queries


@dataclass(frozen=True)
class WatchReading:
    """What a watch looked at on one day: a price per GPU-hour in the watch's currency, the GPUs free,
    or a job's total in USD; where; and for a job, its plan's GPUs."""

    value: float
    platform: str | None
    gpu_model: str | None = None
    gpu_count: int | None = None
    finish: datetime | None = None  # a job's plan: when it would finish (naive UTC)


@dataclass(frozen=True)
class WatchResult:
    """A watch on the digest day (`now`) and on the previous day with plans (`before`; None when
    there is none or nothing to read). `fired`: holds now, did not before."""

    watch: Watch
    now: WatchReading | None
    before: WatchReading | None

    @property
    def holds(self) -> bool:
        return watch_holds(self.watch, self.now)

    @property
    def held_before(self) -> bool:
        return watch_holds(self.watch, self.before)

    @property
    def fired(self) -> bool:
        return self.holds and not self.held_before


def watch_holds(watch: Watch, reading: WatchReading | None) -> bool:
    """The one rule: does `watch` hold for what it read (None: nothing to read, it does not)."""
    if reading is None:
        return False
    if isinstance(watch, StockWatch):
        return reading.value >= watch.min_available_gpus
    if isinstance(watch, PriceWatch):
        return reading.value < watch.below
    return reading.value < watch.below_total_usd


def evaluate_watches(
    con: duckdb.DuckDBPyConnection, watches: tuple[Watch, ...], day: date, previous_day: date | None
) -> tuple[WatchResult, ...]:
    """Each watch read on `day` and on `previous_day` (the digest's previous day with plans): one
    query per kind of watch, whatever their number (the offers are read once for all of them)."""
    days = [d for d in (previous_day, day) if d is not None]
    readings: dict[tuple[int, date | None], WatchReading] = {}
    numbered = list(enumerate(watches))
    jobs = [(no, w) for no, w in numbered if isinstance(w, JobWatch)]
    if jobs:
        for r in queries.records(
            con,
            "digest/watch_jobs",
            days=days,
            watch_nos=[no for no, _ in jobs],
            jobs=[w.job for _, w in jobs],
        ):
            readings[r["watch_no"], r["day"]] = WatchReading(
                r["total_usd"], r["platform"], r["gpu_model"], r["gpu_count"]
            )
    readings.update(_offer_readings(con, watches, days, latest=False))
    return tuple(
        WatchResult(
            watch, readings.get((no, day)), readings.get((no, previous_day)) if previous_day else None
        )
        for no, watch in numbered
    )


def readings_now(con: duckdb.DuckDBPyConnection, watches: Sequence[Watch]) -> list[WatchReading | None]:
    """What each price and stock watch reads now, from each platform's latest usable crawl, by the
    same queries as a day's reading (the intraday watches, `digest.intraday`); None for a job watch
    (the job planner reads those) and for a watch with nothing to read."""
    found = _offer_readings(con, tuple(watches), [], latest=True)
    return [found.get((no, None)) for no in range(len(watches))]


def _offer_readings(
    con: duckdb.DuckDBPyConnection, watches: Sequence[Watch], days: list[date], *, latest: bool
) -> dict[tuple[int, date | None], WatchReading]:
    """The price and stock watches' readings by (watch number, day); `latest`: day None."""
    readings: dict[tuple[int, date | None], WatchReading] = {}
    numbered = list(enumerate(watches))
    scope = {"days": days, "latest": latest}
    stocks = [(no, w) for no, w in numbered if isinstance(w, StockWatch)]
    if stocks:
        for r in queries.records(con, "digest/watch_stock", **scope, **_scopes(stocks)):
            gpu_model = dict(stocks)[r["watch_no"]].gpu_model
            readings[r["watch_no"], r["day"]] = WatchReading(r["available_gpus"], r["platform"], gpu_model)
    prices = [(no, w) for no, w in numbered if isinstance(w, PriceWatch)]
    if prices:
        for r in queries.records(con, "digest/watch_prices", **scope, **_scopes(prices)):
            watch = dict(prices)[r["watch_no"]]
            column = "usd" if watch.currency == "USD" else "cny"
            if r[f"min_{column}_per_gpu_hour"] is not None:
                readings[r["watch_no"], r["day"]] = WatchReading(
                    r[f"min_{column}_per_gpu_hour"], r[f"{column}_platform"], watch.gpu_model
                )
    return readings


def _scopes(numbered: Sequence[tuple[int, StockWatch | PriceWatch]]) -> dict[str, list[Any]]:
    """The watches' numbers, cards and platforms ([]: every platform), as parallel lists."""
    return {
        "watch_nos": [no for no, _ in numbered],
        "gpu_models": [w.gpu_model for _, w in numbered],
        "platforms": [list(w.platforms) for _, w in numbered],
    }

"""Crawl drift: a platform's crawl of a day against its own last good crawls.

A parser that no longer fits its platform rarely fails outright; it yields fewer offers, more
unknown GPU names, more rejected quotes, or prices off by a unit. `crawl_drift` names each of
those, so a check (pipelines.drift_checks) can warn instead of letting quiet nonsense into plans.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

import duckdb
import pandas as pd

from warehouse import queries

# How many earlier good crawls form "the usual": a week of daily crawls.
HISTORY_CRAWLS = 7
# Offers dropping below half the usual count is lost pages or a broken parser, while a market's
# stock moves by far less from one day to the next. The one home of this rule: a crawl's own
# `crawled` check only asks that it worked and yielded items.
MIN_OFFER_SHARE = 0.5
# A share of unknown GPU names or rejected quotes that doubles means the platform renamed cards or
# changed a field. Shares are compared from at least this floor: one new name among a hundred offers
# (0.01 -> 0.02) is a new card, not drift.
SHARE_GROWTH = 2.0
SHARE_FLOOR = 0.02
# A GPU model's median price moving more than 3x in a day is a unit or parsing change (cents read
# as dollars, a per-unit price read per GPU); real markets move by tens of percent. Rule 6 of the
# price-plausibility rules listed in docs/plausibility.md.
PRICE_FACTOR = 3.0
# The drift check of a platform is named `<platform>_drift` (in Dagster, the refresh output and the
# digest alike).
CHECK_SUFFIX = "_drift"


@dataclass(frozen=True)
class CrawlDrift:
    """What changed in one platform's crawl of `plan_date`; `problems` is empty when nothing drifted.

    Shares are fractions (0.25 = a quarter of the offers); prices USD per GPU-hour.
    `history_crawls` = 0: no earlier good crawl to compare with (or no good crawl that day).
    """

    platform: str
    plan_date: date
    history_crawls: int
    today_offers: int | None
    usual_offers: float | None
    today_unknown_share: float | None
    usual_unknown_share: float | None
    today_rejected_share: float | None
    usual_rejected_share: float | None
    price_moves: tuple[tuple[str, float, float], ...]  # (gpu_model, today median, usual median)
    problems: tuple[str, ...]

    @property
    def check_name(self) -> str:
        return check_name(self.platform)


def check_name(platform: str) -> str:
    """The name of `platform`'s drift check."""
    return f"{platform}{CHECK_SUFFIX}"


def day_drift(con: duckdb.DuckDBPyConnection, plan_date: date) -> list[CrawlDrift]:
    """The drift of every platform whose crawl feeds `plan_date`'s plans, those that drifted only."""
    crawls = queries.frame(con, "plans/day_crawls", plan_date=plan_date)
    results = [crawl_drift(con, str(platform), plan_date) for platform in crawls["platform"].unique()]
    return [result for result in results if result.problems]


def crawl_drift(con: duckdb.DuckDBPyConnection, platform: str, plan_date: date) -> CrawlDrift:
    """Compare `platform`'s crawl behind `plan_date` with its last `HISTORY_CRAWLS` good crawls."""
    row = queries.frame(
        con, "drift/crawl", platform=platform, plan_date=plan_date, history=HISTORY_CRAWLS
    ).iloc[0]
    values = {key: _value(row[key]) for key in row.index}
    history = int(values["history_crawls"] or 0)
    moves: tuple[tuple[str, float, float], ...] = ()
    problems: list[str] = []
    if history and values["today_offers"] is not None:
        params = {
            "platform": platform,
            "plan_date": plan_date,
            "history": HISTORY_CRAWLS,
            "factor": PRICE_FACTOR,
        }
        prices = con.execute(queries.sql("drift/prices"), params).fetchall()
        moves = tuple((str(model), float(now), float(usual)) for model, now, usual, _ in prices)
        problems = _problems(values, moves)
    return CrawlDrift(
        platform=platform,
        plan_date=plan_date,
        history_crawls=history,
        today_offers=None if values["today_offers"] is None else int(values["today_offers"]),
        usual_offers=values["usual_offers"],
        today_unknown_share=values["today_unknown_share"],
        usual_unknown_share=values["usual_unknown_share"],
        today_rejected_share=values["today_rejected_share"],
        usual_rejected_share=values["usual_rejected_share"],
        price_moves=moves,
        problems=tuple(problems),
    )


def _problems(values: dict[str, float | None], moves: tuple[tuple[str, float, float], ...]) -> list[str]:
    problems = []
    today, usual = values["today_offers"] or 0, values["usual_offers"]
    if usual and today < MIN_OFFER_SHARE * usual:
        problems.append(f"{today:g} offers, under half the usual {usual:g}")
    for what in ("unknown", "rejected"):
        share, usual_share = values[f"today_{what}_share"], values[f"usual_{what}_share"]
        if share is not None and share > SHARE_GROWTH * max(usual_share or 0.0, SHARE_FLOOR):
            label = "unknown GPU names" if what == "unknown" else "rejected quotes"
            problems.append(f"{share:.0%} {label}, usually {usual_share or 0:.0%}")
    for gpu_model, now, before in moves:
        problems.append(f"{gpu_model} median {now:.3g} USD/GPU-h, usually {before:.3g} ({now / before:.2g}x)")
    return problems


def _value(value: object) -> float | None:
    """A SQL number as a float; NULL and NaN (a median of nothing) as None."""
    if value is None or pd.isna(value):  # type: ignore[call-overload]
        return None
    return float(value)  # type: ignore[arg-type]

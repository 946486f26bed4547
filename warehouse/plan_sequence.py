"""The plan sequence: one function that plans days, for every caller.

The daily graph and the Dagster `backfill_plans` job (one multi-asset, pipelines/assets/plans.py)
and `gpuplan backfill` (warehouse.backfill.backfill_plans) all plan through `plan_days`, so a day
gets the same plans whichever of them ran it, with the same settings (`PlanOptions`, every field
required: none can be left to a default by one caller and not another). The steps, each replacing
exactly its days' rows: the sizing model's requirements (sized once for all days), candidates and
cheapest plans per day, then the changes oldest first and of the next day planned after them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Protocol

import duckdb

from warehouse import daily_plans
from warehouse.requirements import SizedDays, fabric_rows, size_days


class PlanSettings(Protocol):
    """Whatever carries the four plan settings by these names: gpuplan's Settings, the Dagster
    WarehouseResource."""

    @property
    def models(self) -> Sequence[str]: ...
    @property
    def methods(self) -> Sequence[str]: ...
    @property
    def default_tokens(self) -> float: ...
    @property
    def price_move_pct(self) -> float: ...
    @property
    def max_nodes(self) -> int: ...


@dataclass(frozen=True)
class PlanOptions:
    """What to plan, and how: the settings the plans of a day depend on.

    `models` and `methods`: the sizing model's names (GPUPLAN_MODELS, GPUPLAN_METHODS);
    `default_tokens`: tokens of the run whose train days and total the daily tables give
    (GPUPLAN_DEFAULT_TOKENS); `price_move_pct`: a plan's price moving by at least this many percent
    is a change (GPUPLAN_PRICE_MOVE_PCT); `max_nodes`: the most whole nodes a plan joins where the
    platform sells a training fabric (GPUPLAN_MAX_NODES; 1: never across nodes).
    """

    models: tuple[str, ...]
    methods: tuple[str, ...]
    default_tokens: float
    price_move_pct: float
    max_nodes: int

    @classmethod
    def from_settings(cls, settings: PlanSettings) -> PlanOptions:
        """The options of `settings`: the one conversion every caller uses."""
        return cls(
            models=tuple(settings.models),
            methods=tuple(settings.methods),
            default_tokens=float(settings.default_tokens),
            price_move_pct=float(settings.price_move_pct),
            max_nodes=int(settings.max_nodes),
        )


@dataclass(frozen=True)
class PlannedDays:
    """What `plan_days` wrote: the days planned (oldest first), the requirements sized for them,
    and how many candidates, cheapest-plan rows and changes (of the daily plans) those days got."""

    days: tuple[date, ...]
    sized: SizedDays
    candidates: int
    plans: int
    changes: int


def plan_days(
    con: duckdb.DuckDBPyConnection,
    days: Sequence[date],
    options: PlanOptions,
    progress: Callable[[Sequence[date], int], Iterable[date]] | None = None,
) -> PlannedDays:
    """Plan `days` (any order; each needs its crawls in plan_crawls): requirements, candidates,
    cheapest plans, changes, replacing those days' rows. `con` is the writer.

    `progress(days, total)` may wrap the per-day loop (a progress bar). Raises what the sizing model
    raises for an unknown model or method, before anything is written.
    """
    ordered = sorted(set(days))
    fabrics = fabric_rows(options.max_nodes)
    sized = size_days(con, ordered, options.models, options.methods, fabrics)
    candidates = cheapest = 0
    for day in progress(ordered, len(ordered)) if progress else ordered:
        candidates += daily_plans.compute_candidates(con, day, options.default_tokens, fabrics)
        cheapest += daily_plans.compute_cheapest_plans(con, day)
    changes = daily_plans.compute_plan_changes_for_days(con, ordered, options.price_move_pct)
    return PlannedDays(tuple(ordered), sized, candidates, cheapest, changes)

"""Plan assets: sizing requirements, candidate plans, cheapest plans and plan changes, per day.

The sizing model runs in Python (`warehouse/plan_requirements.py`); everything that touches offers
runs as SQL in the warehouse (`warehouse/plans.py`, `warehouse/queries/plan_*.sql`). A run covers
one day, or in a backfill a range of days in one run (`BackfillPolicy.single_run()`): each asset
does its step for every day of the range that has crawls recorded, oldest first, so each day's
changes compare with the day before, as `gpuplan backfill` does with the same functions.
Days without any crawl recorded (no data) get no plans.
"""

from collections.abc import Sequence
from datetime import date, timedelta
from typing import Any

import dagster as dg
import pandas as pd

from pipelines import markdown
from pipelines.partitions import SINGLE_RUN, partition_days
from pipelines.resources import WarehouseResource
from warehouse import history, plans
from warehouse.plan_requirements import size_days

GROUP = "plans"

# Columns of the cheapest-plans preview in the UI (asset metadata).
PLAN_PREVIEW_COLUMNS = (
    "model",
    "method",
    "ranking",
    "status",
    "platform",
    "gpu_model",
    "gpu_count",
    "pricing_type",
    "rent_cny_per_month",
    "rent_usd_per_month",
    "cost_usd_per_billion_tokens",
    "stock_known",
)

# The product is refreshed daily: a day and two hours without a new materialization is late,
# two days is a missed day.
PLANS_FRESHNESS = dg.FreshnessPolicy.time_window(
    fail_window=timedelta(hours=48), warn_window=timedelta(hours=26)
)


def _fewest_gpus(frame: pd.DataFrame, gpu_models: Sequence[str]) -> str:
    """Markdown pivot: the fewest GPUs of each model on offer that fit each (model, method)."""
    fitting = frame[frame["fits"] & frame["gpu_model"].isin(gpu_models)] if len(frame) else frame
    if fitting.empty:
        return "_Nothing on offer fits any (model, method)._"
    fewest = fitting.groupby(["params", "model", "method", "gpu_model"])["gpu_count"].min()
    pivot = fewest.unstack("gpu_model").astype("Int64").reset_index().drop(columns="params")
    return markdown.table(pivot, list(pivot.columns))


def _days_metadata(requested: Sequence[date], planned: Sequence[date]) -> dict[str, Any]:
    """Which of the run's days had data to plan (a backfill range may hold days without any)."""
    skipped = sorted(set(requested) - set(planned))
    return {
        "days_planned": len(planned),
        "days_without_data": ", ".join(map(str, skipped[:10])) + (" ..." if len(skipped) > 10 else "")
        if skipped
        else "none",
    }


def build_plan_assets(partitions: dg.DailyPartitionsDefinition) -> list[dg.AssetsDefinition]:
    """plan_requirements -> plan_candidates -> cheapest_plans -> plan_changes, after offers and gpus."""

    @dg.asset(
        partitions_def=partitions,
        backfill_policy=SINGLE_RUN,
        group_name=GROUP,
        kinds={"duckdb", "python"},
        deps=[dg.AssetKey("offers"), dg.AssetKey("gpus")],
        description=(
            "What each (model, method) in the settings needs on each catalog GPU at each job size the "
            "day's offers allow: fits, ZeRO stage, memory per GPU, tokens per second (the sizing model). "
            "Stored in `plan_requirements` for each day with crawls recorded."
        ),
    )
    def plan_requirements(
        context: dg.AssetExecutionContext, warehouse: WarehouseResource
    ) -> dg.MaterializeResult:
        requested = partition_days(context)
        with warehouse.writer(context) as con:
            days = plans.recorded_days(con, requested[0], requested[-1])
            sized = size_days(con, days, warehouse.models, warehouse.methods)
        counts = sorted(sized.requirements["gpu_count"].unique()) if len(sized.requirements) else []
        return dg.MaterializeResult(
            metadata={
                "dagster/row_count": sized.rows_stored,
                **_days_metadata(requested, days),
                "models": ", ".join(warehouse.models),
                "methods": ", ".join(warehouse.methods),
                "gpu_counts": ", ".join(map(str, counts)),
                "fewest_gpus_on_offer": dg.MetadataValue.md(
                    _fewest_gpus(sized.requirements, sized.gpu_models_on_offer)
                ),
            }
        )

    @dg.asset(
        partitions_def=partitions,
        backfill_policy=SINGLE_RUN,
        group_name=GROUP,
        kinds={"duckdb"},
        deps=[plan_requirements],
        description=(
            "Per (model, method) and GPU model, the cheapest configuration of the day's in-stock offers "
            "(unknown stock kept, flagged) that fits, for rent and for cost per token. GPU counts only as "
            "platforms rent them: the unit as sold (a cluster unit may span nodes) or cards picked on one "
            "node. Rent per hour and month (730 h) in CNY and USD, tokens per day, cost per billion "
            "tokens. Offers under the price floor (a small share of what the other platforms ask for the "
            "same GPU that day, or of the platform's other offers of it: `price_floor_share()` and "
            "`judged_offers` in SQL) are placeholders, such as RunPod's 0.5 USD for sold-out GPUs: left "
            "out, and listed in `plan_excluded_offers`. Each candidate also gives the days and total of a "
            "run of `default_tokens` tokens (GPUPLAN_DEFAULT_TOKENS) by the offer's billing. SQL in the "
            "warehouse: `plan_shapes` (shared with the job plans) and `plan_candidates.sql`."
        ),
    )
    def plan_candidates(
        context: dg.AssetExecutionContext, warehouse: WarehouseResource
    ) -> dg.MaterializeResult:
        requested = partition_days(context)
        with warehouse.writer(context) as con:
            days = plans.recorded_days(con, requested[0], requested[-1])
            count = sum(plans.compute_candidates(con, day, warehouse.default_tokens) for day in days)
            excluded = pd.concat([plans.excluded_offers(con, day) for day in days] or [pd.DataFrame()])
        columns = ["plan_date", "platform", "offer_id", "gpu_model", "price_usd_per_gpu_hour"]
        return dg.MaterializeResult(
            metadata={
                "dagster/row_count": count,
                **_days_metadata(requested, days),
                "offers_excluded": len(excluded),
                "excluded_offers": dg.MetadataValue.md(
                    markdown.table(excluded, [*columns, "price_reference", "reference_usd_per_gpu_hour"])
                    if len(excluded)
                    else "_No offer under the price floor._"
                ),
            }
        )

    @dg.asset(
        partitions_def=partitions,
        backfill_policy=SINGLE_RUN,
        group_name=GROUP,
        kinds={"duckdb"},
        deps=[plan_candidates],
        freshness_policy=PLANS_FRESHNESS,
        description=(
            "The product: per (model, method), the lowest rent for a month of training that fits (the "
            "article's view) and the lowest cost per billion tokens, each with its train days and total "
            "for a run of GPUPLAN_DEFAULT_TOKENS tokens, and a 'no_offer_fits' row where nothing fits. "
            "Re-running a day replaces that day only."
        ),
    )
    def cheapest_plans(
        context: dg.AssetExecutionContext, warehouse: WarehouseResource
    ) -> dg.MaterializeResult:
        requested = partition_days(context)
        with warehouse.writer(context) as con:
            days = plans.recorded_days(con, requested[0], requested[-1])
            count = sum(plans.compute_cheapest_plans(con, day) for day in days)
            frame = plans.plans_for_date(con, days[-1]) if days else pd.DataFrame()
        metadata: dict[str, Any] = {"dagster/row_count": count, **_days_metadata(requested, days)}
        if days:
            metadata.update(
                {
                    "plans_ok": int((frame["status"] == "ok").sum()),
                    "no_offer_fits": int((frame["status"] == "no_offer_fits").sum()),
                    "preview": dg.MetadataValue.md(
                        f"Plans of {days[-1]}:\n\n" + markdown.table(frame, PLAN_PREVIEW_COLUMNS)
                    ),
                }
            )
        return dg.MaterializeResult(metadata=metadata)

    @dg.asset(
        partitions_def=partitions,
        backfill_policy=SINGLE_RUN,
        group_name=GROUP,
        kinds={"duckdb"},
        deps=[cheapest_plans],
        description=(
            "What changed against the previous day with plans: a new cheapest platform, GPU or count, rent "
            "moving by more than `price_move_pct`, a plan's offer gone out of stock, now fits / no longer "
            "fits. The first day with plans after the run's days is recomputed too (its previous day may "
            "be new)."
        ),
    )
    def plan_changes(context: dg.AssetExecutionContext, warehouse: WarehouseResource) -> dg.MaterializeResult:
        requested = partition_days(context)
        with warehouse.writer(context) as con:
            days = plans.recorded_days(con, requested[0], requested[-1])
            count = plans.compute_plan_changes_for_days(con, days, warehouse.price_move_pct)
            if not days:
                summary = "_No day of the run has crawls recorded: nothing to compare._"
            elif len(days) == 1:
                frame = plans.changes_for_date(con, days[0])
                summary = (
                    markdown.table(frame, ["model", "method", "ranking", "change_type", "detail"])
                    if count
                    else "_No change against the previous day with plans (or no previous day)._"
                )
            else:
                frame = history.plan_days(con, requested[0], requested[-1])
                summary = markdown.table(
                    frame, ["plan_date", "plans_ok", "plans", "changes", "offers_excluded"]
                )
        return dg.MaterializeResult(
            metadata={
                "dagster/row_count": count,
                **_days_metadata(requested, days),
                "changes": dg.MetadataValue.md(summary),
            }
        )

    return [plan_requirements, plan_candidates, cheapest_plans, plan_changes]

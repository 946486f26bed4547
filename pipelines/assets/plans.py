"""Plan assets: sizing requirements, candidate plans, cheapest plans and plan changes for one day.

The sizing model runs in Python once per (model, method) over the GPU catalog; everything that
touches offers runs as SQL in the warehouse (`warehouse/plans.py`, `warehouse/queries/plan_*.sql`).
"""

import dataclasses
from collections.abc import Iterable, Sequence
from datetime import date, timedelta

import dagster as dg
import pandas as pd

from pipelines import markdown
from pipelines.resources import WRITER_POOL, WarehouseResource
from sizing.catalog import GpuSpec, load_gpus
from sizing.planner import requirements
from warehouse import plans, queries

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


def plan_gpu_counts(gpus_per_node: int, unit_gpu_counts: Iterable[int]) -> list[int]:
    """Every job size a plan on this GPU model can take (see plan_candidates.sql), up to MAX_PLAN_GPU_COUNT.

    1..gpus_per_node (cards picked on one node) and the unit sizes offers sell it in (a 10-GPU
    machine, a 16-GPU cluster).
    """
    limit = plans.MAX_PLAN_GPU_COUNT
    counts = {count for count in unit_gpu_counts if 1 <= count <= limit}
    counts.update(range(1, min(gpus_per_node, limit) + 1))
    return sorted(counts)


def requirements_frame(
    models: Sequence[str], methods: Sequence[str], gpus: Sequence[GpuSpec], unit_sizes: pd.DataFrame
) -> pd.DataFrame:
    """The sizing model's requirements, one row per (model, method, catalog GPU, job size).

    `unit_sizes` (gpu_model, gpu_count) are the unit sizes on offer. GPUs that take the same job
    sizes are sized in one call, so the GPU-independent work is done once per group.
    """
    groups: dict[tuple[int, ...], list[str]] = {}
    for gpu in gpus:
        offered = unit_sizes.loc[unit_sizes["gpu_model"] == gpu.gpu_model, "gpu_count"]
        groups.setdefault(tuple(plan_gpu_counts(gpu.gpus_per_node, offered)), []).append(gpu.gpu_model)
    frame = pd.DataFrame(
        [
            dataclasses.asdict(requirement)
            for model in models
            for method in methods
            for counts, names in groups.items()
            for requirement in requirements(model, method, gpu_counts=counts, gpus=names)
        ]
    )
    frame["gpus_per_node"] = frame["gpu_model"].map({gpu.gpu_model: gpu.gpus_per_node for gpu in gpus})
    return frame


def _fewest_gpus(frame: pd.DataFrame, gpu_models: Sequence[str]) -> str:
    """Markdown pivot: the fewest GPUs of each model on offer that fit each (model, method)."""
    fitting = frame[frame["fits"] & frame["gpu_model"].isin(gpu_models)]
    if fitting.empty:
        return "_Nothing on offer today fits any (model, method)._"
    fewest = fitting.groupby(["params", "model", "method", "gpu_model"])["gpu_count"].min()
    pivot = fewest.unstack("gpu_model").astype("Int64").reset_index().drop(columns="params")
    return markdown.table(pivot, list(pivot.columns))


def build_plan_assets(partitions: dg.DailyPartitionsDefinition) -> list[dg.AssetsDefinition]:
    """plan_requirements -> plan_candidates -> cheapest_plans -> plan_changes, after offers and gpus."""

    @dg.asset(
        partitions_def=partitions,
        pool=WRITER_POOL,
        group_name=GROUP,
        kinds={"duckdb", "python"},
        deps=[dg.AssetKey("offers"), dg.AssetKey("gpus")],
        description=(
            "What each (model, method) in the settings needs on each catalog GPU at each job size the "
            "day's offers allow: fits, ZeRO stage, memory per GPU, tokens per second (the sizing model). "
            "Stored in `plan_requirements` for the day."
        ),
    )
    def plan_requirements(
        context: dg.AssetExecutionContext, warehouse: WarehouseResource
    ) -> dg.MaterializeResult:
        day = date.fromisoformat(context.partition_key)
        settings = warehouse.settings()
        with warehouse.writer() as con:
            units = queries.frame(con, "plan_unit_sizes", plan_date=day)
            frame = requirements_frame(settings.models, settings.methods, load_gpus(), units)
            stored = plans.store_requirements(con, day, frame)
        return dg.MaterializeResult(
            metadata={
                "dagster/row_count": stored,
                "models": ", ".join(settings.models),
                "methods": ", ".join(settings.methods),
                "gpu_counts": ", ".join(map(str, sorted(frame["gpu_count"].unique()))),
                "fewest_gpus_on_offer": dg.MetadataValue.md(
                    _fewest_gpus(frame, sorted(units["gpu_model"].unique()))
                ),
            }
        )

    @dg.asset(
        partitions_def=partitions,
        pool=WRITER_POOL,
        group_name=GROUP,
        kinds={"duckdb"},
        deps=[plan_requirements],
        description=(
            "Per (model, method) and GPU model, the cheapest configuration of the day's in-stock offers "
            "(unknown stock kept, flagged) that fits, for rent and for cost per token. GPU counts only as "
            "platforms rent them: the unit as sold (a cluster unit may span nodes) or cards picked on one "
            "node. Rent per hour and month (730 h) in CNY and USD, tokens per day, cost per billion "
            "tokens. SQL in the warehouse: `plan_candidates.sql`."
        ),
    )
    def plan_candidates(
        context: dg.AssetExecutionContext, warehouse: WarehouseResource
    ) -> dg.MaterializeResult:
        day = date.fromisoformat(context.partition_key)
        with warehouse.writer() as con:
            count = plans.compute_candidates(con, day)
        return dg.MaterializeResult(metadata={"dagster/row_count": count})

    @dg.asset(
        partitions_def=partitions,
        pool=WRITER_POOL,
        group_name=GROUP,
        kinds={"duckdb"},
        deps=[plan_candidates],
        freshness_policy=PLANS_FRESHNESS,
        description=(
            "The product: per (model, method), the lowest rent for a month of training that fits (the "
            "article's view) and the lowest cost per billion tokens, with a 'no_offer_fits' row where "
            "nothing fits. Re-running a day replaces that day only."
        ),
    )
    def cheapest_plans(
        context: dg.AssetExecutionContext, warehouse: WarehouseResource
    ) -> dg.MaterializeResult:
        day = date.fromisoformat(context.partition_key)
        with warehouse.writer() as con:
            count = plans.compute_cheapest_plans(con, day)
            frame = plans.plans_for_date(con, day)
        return dg.MaterializeResult(
            metadata={
                "dagster/row_count": count,
                "plans_ok": int((frame["status"] == "ok").sum()),
                "no_offer_fits": int((frame["status"] == "no_offer_fits").sum()),
                "preview": dg.MetadataValue.md(markdown.table(frame, PLAN_PREVIEW_COLUMNS)),
            }
        )

    @dg.asset(
        partitions_def=partitions,
        pool=WRITER_POOL,
        group_name=GROUP,
        kinds={"duckdb"},
        deps=[cheapest_plans],
        description=(
            "What changed against the previous day with plans: a new cheapest platform, GPU or count, rent "
            "moving by more than `price_move_pct`, a plan's offer gone out of stock, now fits / no longer "
            "fits."
        ),
    )
    def plan_changes(context: dg.AssetExecutionContext, warehouse: WarehouseResource) -> dg.MaterializeResult:
        day = date.fromisoformat(context.partition_key)
        with warehouse.writer() as con:
            count = plans.compute_plan_changes(con, day, warehouse.price_move_pct)
            frame = plans.changes_for_date(con, day)
        return dg.MaterializeResult(
            metadata={
                "dagster/row_count": count,
                "changes": dg.MetadataValue.md(
                    markdown.table(frame, ["model", "method", "ranking", "change_type", "detail"])
                    if count
                    else "_No change against the previous day with plans (or no previous day)._"
                ),
            }
        )

    return [plan_requirements, plan_candidates, cheapest_plans, plan_changes]

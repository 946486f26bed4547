"""Plan assets: sizing requirements, candidate plans, cheapest plans and plan changes, per day.

The sizing model runs in Python (`warehouse/requirements.py`); everything that touches offers
runs as SQL in the warehouse (`warehouse/daily_plans.py`, `warehouse/queries/plan_*.sql`). A run covers
one day, or in a backfill a range of days in one run (`BackfillPolicy.single_run()`): each asset
does its step for every day of the range that has crawls recorded, oldest first, so each day's
changes compare with the day before, as `gpuplan backfill` does with the same functions.
Days without any crawl recorded (no data) get no plans.
"""

from collections.abc import Iterator, Sequence
from datetime import date, timedelta
from typing import Any

import dagster as dg
import duckdb
import pandas as pd
from rich.text import Text

from gpuplan.plan_tables import daily_table, plan_label, tokens_text
from pipelines import markdown
from pipelines.partitions import SINGLE_RUN, partition_days
from pipelines.resources import WarehouseResource
from sizing import gpu_names
from warehouse import backfill, daily_plans, plan_sequence
from warehouse.plan_sequence import PlannedDays, PlanOptions

GROUP = "plans"

# The product is refreshed daily: a day and two hours without a new materialization is late,
# two days is a missed day.
PLANS_FRESHNESS = dg.FreshnessPolicy.time_window(
    fail_window=timedelta(hours=48), warn_window=timedelta(hours=26)
)


# What each of the four assets holds, as the UI shows it.
REQUIREMENTS = (
    "What each (model, method) in the settings needs on each catalog GPU at each job size the "
    "day's offers allow: fits, ZeRO stage, memory per GPU, tokens per second (the sizing model). "
    "Stored in `plan_requirements` for each day with crawls recorded."
)
CANDIDATES = (
    "Per (model, method) and GPU model, the cheapest configuration of the day's in-stock offers "
    "(unknown stock kept, flagged) that fits, for rent and for one run's total as billed. GPU counts only as "
    "platforms rent them: the unit as sold (a cluster unit may span nodes) or cards picked on one "
    "node. Rent per hour and month (730 h) in CNY and USD, tokens per day, cost per billion "
    "tokens. Offers under the price floor (a small share of what the other platforms ask for the "
    "same GPU that day, or of the platform's other offers of it: `price_floor_share()` and "
    "`judged_offers` in SQL) are placeholders, such as RunPod's 0.5 USD for sold-out GPUs: left "
    "out, and listed in `plan_excluded_offers`. Each candidate also gives the days and total of a "
    "run of `default_tokens` tokens (GPUPLAN_DEFAULT_TOKENS) by the offer's billing. SQL in the "
    "warehouse: `plan_shapes` (shared with the job plans) and `plans/candidates.sql`."
)
CHEAPEST = (
    "The product: per (model, method), two rankings: `lowest_rent`, the lowest rent for a month of "
    "training that fits (the article's view; a longer minimum term counts whole), and "
    "`lowest_run_total`, the lowest total as billed for one run of GPUPLAN_DEFAULT_TOKENS tokens "
    "(whole billing periods, at least the minimum term; ties to the earlier finish). Each row "
    "stores its ranking's measure (`measure`, `measure_usd`), the train days, the run's total and "
    "the rent per billion tokens (a rate, not a ranking); a 'no_offer_fits' row where nothing fits. "
    "Re-running a day replaces that day only."
)
CHANGES = (
    "What changed against the previous day with plans: a new cheapest platform, GPU or count, the "
    "ranking's measure (the stored `measure`: a month's rent, or one run's total) moving by at least "
    "`price_move_pct`, a plan's offer gone out of stock, now fits / no longer fits. The first day "
    "with plans after the run's days is recomputed too (its previous day may "
    "be new). The count and the table say each changed plan once, its kinds joined, as the digest does."
)


def _fewest_gpus(frame: pd.DataFrame, gpu_models: Sequence[str]) -> str:
    """Markdown: for each (model, method), the GPU models on offer that fit, grouped by the fewest
    of each it takes (one row per ask, not one column per GPU model)."""
    fitting = frame[frame["fits"] & frame["gpu_model"].isin(gpu_models)] if len(frame) else frame
    if fitting.empty:
        return "_Nothing on offer fits any (model, method)._"
    fewest = fitting.groupby(["params", "model", "method", "gpu_model"])["gpu_count"].min().reset_index()
    rows = []
    for (_, model, method), ask in fewest.groupby(["params", "model", "method"], sort=True):
        by_count = ask.groupby("gpu_count")["gpu_model"].apply(
            lambda names: ", ".join(sorted(gpu_names.short_name(name) for name in names))
        )
        fits_on = "; ".join(f"×{count}: {names}" for count, names in by_count.items())
        rows.append([f"{model} {method}", fits_on])
    return markdown.grid(["model", "GPUs on offer that fit, by the fewest it takes"], rows)


def headline(frame: pd.DataFrame) -> str:
    """One line of the day's answer for the first (model, method): its plan billed least for a run
    of the default tokens, e.g. "7B lora → A4000×1 vastai, 28 USD for 1B tokens (2.1 days)"."""
    fits = frame[frame["status"] == "ok"].dropna(subset=["total_usd"])
    if fits.empty:
        return "No offer fits any (model, method) today."
    first = fits[(fits["model"] == fits["model"].iloc[0]) & (fits["method"] == fits["method"].iloc[0])]
    row = first.loc[first["total_usd"].idxmin()]
    tokens = tokens_text(row["job_tokens"])
    return (
        f"{row['model']} {row['method']} → {plan_label(row, None)}, "
        f"{row['total_usd']:,.0f} USD for {tokens} tokens ({row['train_days']:.1f} days)"
    )


def _preview(frame: pd.DataFrame, changes: pd.DataFrame) -> str:
    """The day's plans as `gpuplan plans` prints them (same columns and headers, every one), with
    what changed against the previous day in a last column, and the headers' legend below."""
    title, columns, rows = daily_table(frame)
    changed = (
        changes.groupby(["model", "method", "ranking"])["change_type"].apply(
            lambda kinds: ", ".join(sorted({kind.replace("_", " ") for kind in kinds}))
        )
        if len(changes)
        else pd.Series(dtype=str)
    )
    marked = [
        [
            *(cell.plain if isinstance(cell, Text) else cell for cell in cells),
            changed.get((row.model, row.method, row.ranking), ""),
        ]
        for cells, row in zip(rows, frame.itertuples(), strict=True)
    ]
    headers = [column.header for column in columns] + ["changed"]
    right = [column.justify == "right" for column in columns] + [False]
    legend = "".join(f"- {column.header}: {column.legend}\n" for column in columns if column.legend)
    return f"{title}\n\n{markdown.grid(headers, marked, right)}\n{legend}"


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
    """plan_requirements -> plan_candidates -> cheapest_plans -> plan_changes, after offers and gpus:
    one step (`plans`) that makes all four."""

    @dg.multi_asset(
        name="plans",
        specs=[
            dg.AssetSpec(
                "plan_requirements",
                deps=[dg.AssetKey("offers"), dg.AssetKey("gpus")],
                group_name=GROUP,
                kinds={"duckdb", "python"},
                description=REQUIREMENTS,
            ),
            dg.AssetSpec(
                "plan_candidates",
                deps=["plan_requirements"],
                group_name=GROUP,
                kinds={"duckdb"},
                description=CANDIDATES,
            ),
            dg.AssetSpec(
                "cheapest_plans",
                deps=["plan_candidates"],
                group_name=GROUP,
                kinds={"duckdb"},
                freshness_policy=PLANS_FRESHNESS,
                description=CHEAPEST,
            ),
            dg.AssetSpec(
                "plan_changes",
                deps=["cheapest_plans"],
                group_name=GROUP,
                kinds={"duckdb"},
                description=CHANGES,
            ),
        ],
        partitions_def=partitions,
        backfill_policy=SINGLE_RUN,
    )
    def plan_assets(
        context: dg.AssetExecutionContext, warehouse: WarehouseResource
    ) -> Iterator[dg.MaterializeResult]:
        requested = partition_days(context)
        with warehouse.writer(context) as con:
            days = daily_plans.recorded_days(con, requested[0], requested[-1])
            planned = plan_sequence.plan_days(con, days, PlanOptions.from_settings(warehouse))
            results = _results(con, planned, requested, warehouse)
        yield from results

    return [plan_assets]


def _results(
    con: duckdb.DuckDBPyConnection,
    planned: PlannedDays,
    requested: Sequence[date],
    warehouse: WarehouseResource,
) -> list[dg.MaterializeResult]:
    """What each of the four assets holds after `planned`, as the UI shows it."""
    days = list(planned.days)
    per_day = _days_metadata(requested, days)
    return [
        _requirements_result(planned, per_day, warehouse),
        _candidates_result(con, planned, per_day),
        _cheapest_result(con, planned, per_day),
        _changes_result(con, planned, per_day, requested),
    ]


def _requirements_result(
    planned: PlannedDays, per_day: dict[str, Any], warehouse: WarehouseResource
) -> dg.MaterializeResult:
    sized = planned.sized
    counts = sorted(sized.requirements["gpu_count"].unique()) if len(sized.requirements) else []
    return dg.MaterializeResult(
        asset_key="plan_requirements",
        metadata={
            "dagster/row_count": sized.rows_stored,
            **per_day,
            "models": ", ".join(warehouse.models),
            "methods": ", ".join(warehouse.methods),
            "gpu_counts": ", ".join(map(str, counts)),
            "fewest_gpus_on_offer": dg.MetadataValue.md(
                _fewest_gpus(sized.requirements, sized.gpu_models_on_offer)
            ),
        },
    )


def _candidates_result(
    con: duckdb.DuckDBPyConnection, planned: PlannedDays, per_day: dict[str, Any]
) -> dg.MaterializeResult:
    excluded = pd.concat([daily_plans.excluded_offers(con, day) for day in planned.days] or [pd.DataFrame()])
    columns = ["plan_date", "platform", "offer_id", "gpu_model", "price_usd_per_gpu_hour"]
    return dg.MaterializeResult(
        asset_key="plan_candidates",
        metadata={
            "dagster/row_count": planned.candidates,
            **per_day,
            "offers_excluded": len(excluded),
            "excluded_offers": dg.MetadataValue.md(
                markdown.table(excluded, [*columns, "price_reference", "reference_usd_per_gpu_hour"])
                if len(excluded)
                else "_No offer under the price floor._"
            ),
        },
    )


def _cheapest_result(
    con: duckdb.DuckDBPyConnection, planned: PlannedDays, per_day: dict[str, Any]
) -> dg.MaterializeResult:
    metadata: dict[str, Any] = {}
    if planned.days:
        last = planned.days[-1]
        frame = daily_plans.plans_for_date(con, last)
        # the headline first: plain text, the asset page shows it without a click
        metadata = {
            "headline": f"{last}: {headline(frame)}",
            "preview": dg.MetadataValue.md(_preview(frame, daily_plans.changes_for_date(con, last))),
            "plans_ok": int((frame["status"] == "ok").sum()),
            "no_offer_fits": int((frame["status"] == "no_offer_fits").sum()),
        }
    metadata.update({"dagster/row_count": planned.plans, **per_day})
    return dg.MaterializeResult(asset_key="cheapest_plans", metadata=metadata)


def _changes_result(
    con: duckdb.DuckDBPyConnection, planned: PlannedDays, per_day: dict[str, Any], requested: Sequence[date]
) -> dg.MaterializeResult:
    days = planned.days
    if not days:
        summary = "_No day of the run has crawls recorded: nothing to compare._"
    elif len(days) == 1:
        frame = daily_plans.changed_plans_for_date(con, days[0], subject="plan")
        summary = (
            markdown.table(frame, ["model", "method", "ranking", "changes", "detail"])
            if planned.changes
            else "_No change against the previous day with plans (or no previous day)._"
        )
    else:
        frame = backfill.planned_days(con, requested[0], requested[-1])
        summary = markdown.table(frame, ["plan_date", "plans_ok", "plans", "changes", "offers_excluded"])
    return dg.MaterializeResult(
        asset_key="plan_changes",
        metadata={"dagster/row_count": planned.changes, **per_day, "changes": dg.MetadataValue.md(summary)},
    )

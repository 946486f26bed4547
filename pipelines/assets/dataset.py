"""The open daily dataset asset: the day's files in GPUPLAN_EXPORT_DIR (warehouse.export does the work)."""

from datetime import date
from pathlib import Path

import dagster as dg

from pipelines.resources import WarehouseResource


def build_dataset_asset(
    partitions: dg.DailyPartitionsDefinition, export_dir: Path | None
) -> dg.AssetsDefinition:
    @dg.asset(
        partitions_def=partitions,
        group_name="dataset",
        kinds={"parquet"},
        deps=[dg.AssetKey("cheapest_plans"), dg.AssetKey("plan_changes")],
        description=(
            "The open daily dataset: the day's offers, price history, plans and plan changes as Parquet (and "
            "the offers as CSV) with a manifest of row counts and sha256, in GPUPLAN_EXPORT_DIR. Unset: "
            "nothing is exported."
        ),
    )
    def dataset(context: dg.AssetExecutionContext, warehouse: WarehouseResource) -> dg.MaterializeResult:
        from warehouse import export

        if export_dir is None:
            return dg.MaterializeResult(metadata={"status": "not exported: GPUPLAN_EXPORT_DIR is unset"})
        day = date.fromisoformat(context.partition_key)
        # From the published snapshot, as the digest reads it: no writer is held while files are written.
        with warehouse.reader() as con:
            exported = export.export_days(con, export_dir, export.days_of_plan_day(con, day))
        return dg.MaterializeResult(
            metadata={
                "folder": dg.MetadataValue.path(str(export_dir)),
                "days": ", ".join(
                    f"{item.day} v{item.version} ({'written' if item.changed else 'unchanged'})"
                    for item in exported
                ),
                "rows": dg.MetadataValue.json({str(item.day): item.rows for item in exported}),
            }
        )

    return dataset

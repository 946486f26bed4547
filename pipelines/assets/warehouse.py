"""Warehouse assets, one step: FX rates, the GPU catalog, and the day's offers from the crawl folder."""

import contextlib
import os
from collections.abc import Iterator, Sequence
from datetime import date

import dagster as dg
import duckdb
import pandas as pd

from pipelines import markdown
from pipelines.assets.crawls import is_current
from pipelines.partitions import SINGLE_RUN, partition_days
from pipelines.resources import CrawlerResource, WarehouseResource
from scrapers.crawl.lock import crawl_folder_lock
from scrapers.crawl.summary import SummaryError
from warehouse import backfill, daily_plans, fx, gpus
from warehouse.loading import load_crawl

GROUP = "warehouse"


def _record_day(
    context: dg.AssetExecutionContext,
    con: duckdb.DuckDBPyConnection,
    warehouse: WarehouseResource,
    day: date,
    timezone: str,
    offline: bool,
    wait_s: float,
) -> None:
    """Load the day's crawl folder and record its crawls; a past day without one takes imported history."""
    folder = warehouse.day_dir(day, offline)
    # Another run crawling into the folder now would hand this load half-written feeds.
    held = (
        crawl_folder_lock(
            folder, wait_s=wait_s, holder=f"Dagster run {context.run.run_id}, pid {os.getpid()}"
        )
        if folder.is_dir()
        else contextlib.nullcontext()
    )
    loaded: list[dict[str, object]] = []
    with held:
        summaries = sorted(folder.glob("*.summary.json"))
        for path in summaries:
            try:
                result = load_crawl(con, path)
            except SummaryError as exc:
                context.log.error(str(exc))
                continue
            loaded.append({"platform": result.platform, "crawl_id": result.crawl_id, "status": result.status})
    if loaded:
        # the folder holds all the day's crawls: a platform it lacks was not crawled, and is carried
        daily_plans.record_plan_crawls(
            con, day, pd.DataFrame(loaded), warehouse.stale_hours, carry_uncrawled=True
        )
    elif not summaries and not is_current(day, timezone):
        # no crawl of ours that day: what was imported for it stands in (a backfill of history)
        added = backfill.record_history_crawls(con, day, day)
        context.log.info(f"{day}: no crawl folder; {int((~added['already_recorded']).sum())} imported run(s)")


FX_RATES, GPUS, OFFERS = dg.AssetKey("fx_rates"), dg.AssetKey("gpus"), dg.AssetKey("offers")


def build_warehouse_assets(
    crawl_keys: Sequence[dg.AssetKey], partitions: dg.DailyPartitionsDefinition
) -> list[dg.AssetsDefinition]:
    """fx_rates, gpus and offers, made in one step (`offers`) and one writer session, which publishes
    when it ends; offers waits for every crawl in `crawl_keys`. Each can be materialized alone."""

    @dg.multi_asset(
        name="offers",
        specs=[
            dg.AssetSpec(
                OFFERS,
                deps=[*crawl_keys, FX_RATES],
                group_name=GROUP,
                kinds={"duckdb"},
                skippable=True,
                description=(
                    "The day's offers of every platform, in the offers table. Every crawl summary in "
                    "`<crawl_dir>/<day>/` (offline runs: `<crawl_dir>/offline/<day>/`) is loaded into "
                    "`offers` (a crawl already loaded is a no-op), and recorded in `plan_crawls` as the "
                    "crawl behind that platform's offers for the day. A past day without crawl summaries "
                    "takes imported history instead (`gpuplan import`): the run that stands for each "
                    "platform that day. Failed platforms are listed with their error."
                ),
            ),
            dg.AssetSpec(
                FX_RATES,
                group_name=GROUP,
                kinds={"duckdb"},
                skippable=True,
                description=(
                    "Daily ECB reference rates (units per USD) in the fx_rates table. The bundled history "
                    "always, the latest download when online. Offers are converted with the rate of their "
                    "observation day."
                ),
            ),
            dg.AssetSpec(
                GPUS,
                group_name=GROUP,
                kinds={"duckdb"},
                skippable=True,
                description=(
                    "The GPU catalog (sizing/data/gpus.csv): canonical model names, memory, throughput, "
                    "GPUs per node, mirrored into the `gpus` table for SQL users and the plans."
                ),
            ),
        ],
        can_subset=True,
        partitions_def=partitions,
        backfill_policy=SINGLE_RUN,
    )
    def warehouse_assets(
        context: dg.AssetExecutionContext, warehouse: WarehouseResource, crawler: CrawlerResource
    ) -> Iterator[dg.MaterializeResult]:
        selected = context.selected_asset_keys
        results = []  # in the order they depend on each other, as Dagster asks
        with warehouse.writer(context) as con:
            if FX_RATES in selected:  # before the offers, which are converted at its rates
                results.append(_fx_rates(context, con, crawler))
            if GPUS in selected:
                results.append(
                    dg.MaterializeResult(
                        asset_key=GPUS, metadata={"dagster/row_count": gpus.sync_catalog(con)}
                    )
                )
            if OFFERS in selected:
                days = partition_days(context)
                frames = []
                for day in days:
                    _record_day(
                        context, con, warehouse, day, partitions.timezone, crawler.offline, crawler.timeout_s
                    )
                    frames.append(daily_plans.day_crawls(con, day).assign(day=day))
                results.append(_offers_result(context, pd.concat(frames, ignore_index=True), len(days)))
        yield from results

    return [warehouse_assets]


def _fx_rates(
    context: dg.AssetExecutionContext, con: duckdb.DuckDBPyConnection, crawler: CrawlerResource
) -> dg.MaterializeResult:
    added = fx.ensure_rates(con)
    if not crawler.offline:
        try:
            added += fx.refresh_rates(con)
        except fx.FxDownloadError as exc:
            context.log.warning(str(exc))
    latest = con.execute(
        "SELECT max(rate_date), arg_max(units_per_usd, rate_date) FROM fx_rates WHERE currency = $c",
        {"c": "CNY"},
    ).fetchall()[0]
    return dg.MaterializeResult(
        asset_key=FX_RATES,
        metadata={
            "rows_added": added,
            "latest_rate_date": str(latest[0]),
            "cny_per_usd": float(latest[1]) if latest[1] is not None else None,
        },
    )


def _offers_result(
    context: dg.AssetExecutionContext, crawls: pd.DataFrame, days: int
) -> dg.MaterializeResult:
    for row in crawls.itertuples():
        if row.status == "failed":
            context.log.error(f"{row.platform}: no offers for {row.day}: {row.error}")
    columns = ["platform", "source", "status", "offers_loaded", "items_rejected", "error"]
    return dg.MaterializeResult(
        asset_key=OFFERS,
        metadata={
            "dagster/row_count": int(crawls["offers_loaded"].sum()),
            "platforms": crawls["platform"].nunique(),
            "days_with_data": crawls["day"].nunique(),
            "failed_platforms": ", ".join(crawls.loc[crawls["status"] == "failed", "platform"].unique())
            or "none",
            "crawls": dg.MetadataValue.md(
                markdown.table(crawls, columns if days == 1 else ["day", *columns])
            ),
        },
    )

"""The push asset: the day's fired watches, plan changes and failed crawls to GPUPLAN_NOTIFY's channels."""

from datetime import date
from pathlib import Path

import dagster as dg

from pipelines.resources import CrawlerResource, MailerResource, WarehouseResource


def build_push_asset(
    partitions: dg.DailyPartitionsDefinition, notify_file: Path | None
) -> dg.AssetsDefinition:
    @dg.asset(
        partitions_def=partitions,
        group_name="digest",
        kinds={"slack"},
        deps=[dg.AssetKey("cheapest_plans"), dg.AssetKey("plan_changes")],
        description=(
            "The day's news pushed to the chat bots and webhooks of GPUPLAN_NOTIFY, each event once per "
            "channel; a failed push is recorded and retried at the next run and never fails the day's plans. "
            "Not pushed offline or without GPUPLAN_NOTIFY."
        ),
    )
    def push(
        context: dg.AssetExecutionContext,
        warehouse: WarehouseResource,
        crawler: CrawlerResource,
        mailer: MailerResource,
    ) -> dg.MaterializeResult:
        from config.notify_file import read_channels
        from config.user_files import UserFileError
        from config.watches_file import read_watches
        from digest.push.delivery import push_day
        from scrapers.registry import platforms

        if crawler.offline:
            return dg.MaterializeResult(metadata={"status": "not pushed: offline run"})
        if notify_file is None:
            return dg.MaterializeResult(metadata={"status": "not pushed: GPUPLAN_NOTIFY is unset"})
        try:
            channels = read_channels(notify_file)
        except UserFileError as exc:
            context.log.warning(str(exc))
            return dg.MaterializeResult(metadata={"status": "not pushed", "why": str(exc)})
        watches = read_watches(Path(mailer.watches_file) if mailer.watches_file else None, platforms())
        results = push_day(
            warehouse.path,
            channels,
            date.fromisoformat(context.partition_key),
            price_move_pct=mailer.price_move_pct,
            watches=watches,
        )
        failed = [r for r in results if r.status == "failed"]
        for result in failed:  # recorded and retried at the next run: a warning, not a failed run
            context.log.warning(f"push {result.event_key} to {result.channel} failed: {result.error}")
        return dg.MaterializeResult(
            metadata={
                "sent": sum(r.status == "sent" for r in results),
                "failed": len(failed),
                "already_sent": sum(r.status == "already" for r in results),
            }
        )

    return push

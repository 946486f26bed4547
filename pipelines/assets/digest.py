"""The digest asset: mails the day's plans and changes once (digest.sending does the work)."""

from dataclasses import replace
from datetime import date
from pathlib import Path

import dagster as dg

from config.watches_file import read_watches
from digest.mailer import SmtpConfigError, check_settings
from digest.sending import send_pending
from pipelines.resources import CrawlerResource, MailerResource, WarehouseResource
from scrapers.registry import platforms


def build_digest_asset(partitions: dg.DailyPartitionsDefinition) -> dg.AssetsDefinition:
    @dg.asset(
        partitions_def=partitions,
        # It mails from the published snapshot and records the send in short writer sessions of its
        # own (digest.sending): the writer is never held while a slow SMTP server answers.
        group_name="digest",
        kinds={"email"},
        deps=[dg.AssetKey("cheapest_plans"), dg.AssetKey("plan_changes")],
        description=(
            "The day's email digest (fired watches, plans and what changed), in GPUPLAN_DIGEST_LANG, sent "
            "once per day with the GPUPLAN_SMTP_* settings; earlier failed days are retried first. Not sent "
            "offline or without SMTP settings."
        ),
    )
    def digest(
        context: dg.AssetExecutionContext,
        warehouse: WarehouseResource,
        crawler: CrawlerResource,
        mailer: MailerResource,
    ) -> dg.MaterializeResult:
        day = date.fromisoformat(context.partition_key)
        if crawler.offline:
            return dg.MaterializeResult(metadata={"status": "not sent: offline run"})
        try:
            check_settings(mailer)
        except SmtpConfigError as exc:
            context.log.info(str(exc))
            return dg.MaterializeResult(metadata={"status": "not sent: SMTP not configured", "why": str(exc)})
        # a bad watches file is a line in the mail (and the watches check fails), never a lost mail
        watches = read_watches(Path(mailer.watches_file) if mailer.watches_file else None, platforms())
        results = send_pending(warehouse.path, day, replace(mailer.options(), watches=watches))
        failed = [result for result in results if result.status == "failed"]
        metadata = {
            "status": ", ".join(f"{result.digest_date}: {result.status}" for result in results),
            "recipients": ", ".join(results[-1].recipients),
        }
        if failed:
            # recorded for a retry on the next run; the run goes red so someone looks
            raise dg.Failure(
                description="; ".join(f"{result.digest_date}: {result.error}" for result in failed),
                metadata=metadata,
            )
        return dg.MaterializeResult(metadata=metadata)

    return digest

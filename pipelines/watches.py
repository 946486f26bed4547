"""Watches in the Dagster UI: an asset check that warns on the day a GPUPLAN_WATCHES watch fires.

The check runs after `plan_changes` (the day's plans, changes and offers are in), reads the
published snapshot like the other checks, and evaluates the watches as the digest does
(`digest.watches`): a watch fires on the day it holds and did not hold on the previous day with
plans. A fired watch turns the check yellow (severity WARN) with the watch in its description; a
malformed watches file fails it (ERROR) with the file's line. The run goes on either way.

The file is read by `config.watches_file.read_watches`, with the platforms Scrapy knows.
"""

from pathlib import Path

import dagster as dg
import pandas as pd

from config.watches_file import read_watches
from digest.content import previous_plan_day
from digest.watches import WatchResult, evaluate_watches
from digest.wording import Wording
from pipelines import markdown
from pipelines.partitions import partition_days
from pipelines.resources import MailerResource, WarehouseResource
from scrapers.registry import platforms

# The check speaks the UI's language; the mail speaks GPUPLAN_DIGEST_LANG.
UI_LANGUAGE = "en"


@dg.asset_check(
    asset="plan_changes",
    name="watches",
    description=(
        "Passes when no watch of GPUPLAN_WATCHES fires; warns on the day one fires (holds today, did "
        "not hold on the previous day with plans): a price under a threshold, stock appearing, a job's "
        "total falling. Fails when the watches file cannot be read."
    ),
)
def watches(
    context: dg.AssetCheckExecutionContext, warehouse: WarehouseResource, mailer: MailerResource
) -> dg.AssetCheckResult:
    path = Path(mailer.watches_file) if mailer.watches_file else None
    listed = read_watches(path, platforms())
    if listed.error:
        return dg.AssetCheckResult(
            passed=False, severity=dg.AssetCheckSeverity.ERROR, description=listed.error
        )
    days = partition_days(context)
    results: list[tuple[str, WatchResult]] = []
    with warehouse.reader() as con:
        for day in days:
            evaluated = evaluate_watches(con, listed.watches, day, previous_plan_day(con, day))
            results += [(day.isoformat(), result) for result in evaluated]
    wording = Wording.of(UI_LANGUAGE)
    fired = [f"{day}: {wording.watch_line(result)}" for day, result in results if result.fired]
    columns = ["day", "watch", "holds", "held_before", "fired", "reading"]
    rows = pd.DataFrame.from_records(
        [
            {
                "day": day,
                "watch": f"line {result.watch.line}: {wording.watch(result)}",
                "holds": result.holds,
                "held_before": result.held_before,
                "fired": result.fired,
                "reading": wording.watch_now(result),
            }
            for day, result in results
        ],
        columns=columns,
    )
    return dg.AssetCheckResult(
        passed=not fired,
        severity=dg.AssetCheckSeverity.WARN,
        description="; ".join(fired) if fired else None,
        metadata={
            "watches_file": str(path) if path else "none (GPUPLAN_WATCHES unset)",
            "watches": len(listed.watches),
            "fired": len(fired),
            "results": dg.MetadataValue.md(markdown.table(rows, columns)),
        },
    )

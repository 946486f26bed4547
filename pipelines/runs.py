"""One day's run of the daily job in this process, as `gpuplan refresh` runs it: followed and bounded.

`execute_day(settings, day, offline=..., platforms=..., on_crawl=...)` runs `daily_refresh` for
`day` with Dagster's in-process executor, on the instance in $DAGSTER_HOME when set (the run then
shows in the UI beside the schedule's), else on a throwaway one. Around it:

- **One run per crawl folder.** It holds the day's crawl folder (`scrapers.crawl_lock`) for the
  whole run, and first waits for any run of the same day still in progress on the instance (one
  the daemon launched from the UI or the schedule): two runs never share a day's crawls. It waits
  up to `wait_s`, then raises RunBlocked naming the other run.
- **The writer slot.** Every step that writes DuckDB runs in the Dagster pool `duckdb_writer`
  (limit 1). A run killed with SIGKILL never frees its slot, and Dagster's in-process executor
  then waits for it for ever, at full CPU, deaf to SIGTERM. So before the run: slots of runs
  that have finished are freed (what run monitoring does, `dagster.yaml`), and so are those of a
  `gpuplan refresh` run whose process is gone from this machine (marked failed). A live holder
  is waited for up to `wait_s`, then RunBlocked names it. During the run, `pipelines.slot_watch`
  bounds a wait for the slot the same way, and lets Ctrl-C and SIGTERM stop it.
- **A first offline run shows changes.** The bundled snapshots hold two recorded days per
  platform (`scrapers/fixtures/<slug>/` and its `previous/`). On a warehouse with no earlier
  day, an offline refresh first runs the day before from `previous/`, then the day: its plans
  then have a day to differ from. Later runs plan the day alone. Both are offline runs, marked so
  (`crawl_runs.offline`): demo data never stands for a live crawl.
- **Progress.** `on_crawl(platform, state, summary)` is called from this thread as each
  platform's crawl goes: "waiting", "crawling", "done" with its `CrawlSummary` (the order of
  `scrapers.runner.OnProgress`; a past day's kept crawl comes as "done", with summary None when
  that day has none). The CLI draws its live display from it.

The result lists the steps that failed ("step: cause"); platforms that failed are not steps that
failed (their status is in the warehouse, `plans.day_crawls`).
"""

from __future__ import annotations

import datetime as dt
import os
import signal
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import dagster as dg

from gpuplan.settings import Settings
from pipelines.assets.crawls import GROUP as CRAWLS
from pipelines.assets.crawls import crawl_key, crawl_listener
from pipelines.definitions import build_defs, policy_warnings_silenced
from pipelines.partitions import FIRST_DAY
from pipelines.resources import WarehouseResource
from pipelines.slot_watch import (
    PROCESS_TAG,
    RunBlocked,
    SlotWatch,
    fail_dead_runs,
    process_identity,
    wait_for_writer_slot,
)
from scrapers import registry
from scrapers.crawl.lock import CrawlFolderBusy, crawl_folder_lock
from scrapers.crawl.runner import OnProgress
from warehouse import connect, plans

if TYPE_CHECKING:
    from dagster._utils.error import SerializableErrorInfo

JOB = "daily_refresh"
POLL_S = 1.0

__all__ = ["DayResult", "RunBlocked", "execute_day"]


@dataclass(frozen=True)
class DayResult:
    """A finished run: its id on the instance, and "step: cause" for each step that failed."""

    run_id: str
    failures: list[str]


def execute_day(
    settings: Settings,
    day: dt.date,
    *,
    offline: bool,
    platforms: Sequence[str] | None = None,
    on_crawl: OnProgress | None = None,
    wait_s: float,
) -> DayResult:
    """Run `daily_refresh` for `day` here; `platforms`: crawl only these (the others keep the day's crawl).

    Offline, on a warehouse without any day before `day`, the day before is run first from the
    snapshots' recorded previous day (`previous_demo_day`), so the first plans already show what
    changed. Failures of that day's steps are listed too, after its date.
    Raises RunBlocked when another run keeps the day's crawl folder or the writer slot for more
    than `wait_s` seconds; KeyboardInterrupt (after stopping the run) on Ctrl-C or SIGTERM.
    """
    # Dagster's own setting: with it the run is recorded where the UI reads; without, nothing is kept
    instance = dg.DagsterInstance.get() if os.environ.get("DAGSTER_HOME") else dg.DagsterInstance.ephemeral()
    with instance:
        failures = []
        earlier = previous_demo_day(settings, day, platforms) if offline else None
        if earlier is not None:
            before, demo_platforms = earlier
            result = _run_day(
                settings, instance, before, True, demo_platforms, registry.PREVIOUS, None, wait_s
            )
            failures += [f"{before}: {failure}" for failure in result.failures]
        result = _run_day(settings, instance, day, offline, platforms, "", on_crawl, wait_s)
    return DayResult(result.run_id, failures + result.failures)


def previous_demo_day(
    settings: Settings, day: dt.date, platforms: Sequence[str] | None
) -> tuple[dt.date, list[str]] | None:
    """The day before `day` and the platforms with a recorded previous day (`scrapers/fixtures/<slug>/
    previous/`), when the warehouse holds no day before `day` (planned, crawled or imported): what a
    first offline run replays."""
    before = day - dt.timedelta(days=1)
    recorded = [
        platform
        for platform in (platforms if platforms is not None else registry.platforms())
        if registry.previous_fixture_dir(platform) is not None
    ]
    if not recorded or before < dt.date.fromisoformat(FIRST_DAY):
        return None
    if settings.warehouse.exists():
        with connect.reader(settings.warehouse) as con:
            if plans.has_history_before(con, day):
                return None
    return before, recorded


def _run_day(
    settings: Settings,
    instance: dg.DagsterInstance,
    day: dt.date,
    offline: bool,
    platforms: Sequence[str] | None,
    snapshot: str,
    on_crawl: OnProgress | None,
    wait_s: float,
) -> DayResult:
    defs = build_defs(settings, offline=offline, snapshot=snapshot)
    job = defs.resolve_job_def(JOB)
    selection = None
    if platforms is not None:
        crawled = dg.AssetSelection.assets(*(crawl_key(platform) for platform in platforms))
        selected = (dg.AssetSelection.all() - dg.AssetSelection.groups(CRAWLS)) | crawled
        selection = list(selected.resolve(defs.resolve_asset_graph()))
    run_id = str(uuid.uuid4())  # a Dagster run id, known before the run starts
    day_dir = WarehouseResource.from_settings(settings).day_dir(day, offline)
    holder = f"gpuplan refresh (Dagster run {run_id}), pid {os.getpid()}"
    try:
        with crawl_folder_lock(day_dir, wait_s=wait_s, holder=holder):
            deadline = time.monotonic() + wait_s
            fail_dead_runs(instance)
            if not offline:  # the daemon's runs crawl live, into this folder
                _wait_for_day_runs(instance, day, deadline)
            wait_for_writer_slot(instance, deadline)
            return _execute(job, instance, day, selection, run_id, on_crawl, wait_s)
    except CrawlFolderBusy as exc:
        raise RunBlocked(str(exc)) from None


def _execute(
    job: dg.JobDefinition,
    instance: dg.DagsterInstance,
    day: dt.date,
    selection: list[dg.AssetKey] | None,
    run_id: str,
    on_crawl: OnProgress | None,
    wait_s: float,
) -> DayResult:
    listening = crawl_listener.set(on_crawl)
    # Dagster's interrupt capture leaves SIGTERM mapped to SIGINT's handler; ours comes back after.
    sigterm = signal.getsignal(signal.SIGTERM)
    try:
        with SlotWatch(instance, run_id, wait_s) as watch, policy_warnings_silenced():
            result = job.execute_in_process(
                instance=instance,
                partition_key=day.isoformat(),
                asset_selection=selection,
                raise_on_error=False,
                run_id=run_id,
                tags={PROCESS_TAG: process_identity(os.getpid()) or str(os.getpid())},
                # the CLI prints its own summary; Dagster's event log stays in the instance
                run_config={"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}},
            )
    finally:
        crawl_listener.reset(listening)
        if signal.getsignal(signal.SIGTERM) is not sigterm and sigterm is not None:
            signal.signal(signal.SIGTERM, sigterm)
        if instance.event_log_storage.supports_global_concurrency_limits:
            # a step stopped mid-way keeps its claim: this run is over, so none of its slots is in use
            instance.event_log_storage.free_concurrency_slots_for_run(run_id)
    watch.raise_if_stopped()
    failures = [
        f"{event.step_key}: {_root_cause(event.step_failure_data.error)}"
        for event in result.all_events
        if event.is_step_failure
    ]
    if not result.success and not failures:
        run_failure = next((e for e in result.all_events if e.is_failure), None)
        failures.append(f"run: {run_failure.message if run_failure else 'failed'}")
    return DayResult(run_id, failures)


def _wait_for_day_runs(instance: dg.DagsterInstance, day: dt.date, deadline: float) -> None:
    """Wait until no other run of the daily job for `day` is in progress (RunBlocked at `deadline`)."""
    while True:
        records = instance.get_run_records(
            filters=dg.RunsFilter(
                job_name=JOB,
                statuses=[dg.DagsterRunStatus.STARTING, dg.DagsterRunStatus.STARTED],
                tags={"dagster/partition": day.isoformat()},
            ),
            limit=1,
        )
        if not records:
            return
        other = records[0].dagster_run
        if time.monotonic() >= deadline:
            raise RunBlocked(
                f"run {other.run_id} ({JOB} for {day}) is in progress and would share the day's crawl "
                "folder; wait for it to finish, or stop it in the Dagster UI"
            )
        time.sleep(POLL_S)


def _root_cause(error: SerializableErrorInfo | None) -> str:
    """The innermost error's message: Dagster wraps the asset's exception in its own."""
    if error is None:
        return "failed"
    while error.cause is not None:
        error = error.cause
    return error.message.strip()

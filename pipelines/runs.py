"""One day's run of the daily job in this process, as `gpuplan refresh` runs it: followed and bounded.

`execute_day(settings, day, offline=..., platforms=..., on_crawl=..., wait_s=...)` runs
`daily_refresh` for `day` with Dagster's in-process executor, on the instance in $DAGSTER_HOME
when set (the run then shows in the UI beside the schedule's), else on a throwaway one. Around it:

- **One run per crawl folder.** It holds the day's crawl folder (`scrapers.crawl.lock`) for the
  whole run; another refresh of the day waits for it up to `wait_s`, then RunBlocked names it.
  (A run the daemon launched holds the folder while it crawls and while it loads, so neither
  ever reads or clears the other's half-written files.)
- **One writer.** Every writing step takes the warehouse's writer lock (`warehouse.engine.connect`),
  waiting up to `wait_s` (`WarehouseResource.writer_wait_s`) for another holder, whom the step's log
  names; a step that gives up ends the refresh with RunBlocked naming the holder. Both locks
  are flocks: the kernel frees them when their holder dies, SIGKILL included, so a killed run
  never blocks a later one, with the daemon or without, and nothing reads Dagster's own state.
- **A first offline run shows changes.** The bundled snapshots hold two recorded days per
  platform (`scrapers/fixtures/<slug>/` and its `previous/`). On a warehouse with no earlier
  day, an offline refresh first runs the day before from `previous/`, then the day: its plans
  then have a day to differ from. Later runs plan the day alone. Both are offline runs, marked so
  (`crawl_runs.offline`): demo data never stands for a live crawl.
- **Progress.** `on_day(day, platforms, replay)` says which day runs next (the recorded day
  before, then the day), and `on_crawl(platform, state, summary)` is called from this thread as each
  platform's crawl goes: "waiting", "crawling", "done" with its `CrawlSummary` (the order of
  `scrapers.crawl.runner.OnProgress`; a past day's kept crawl comes as "done", with summary None when
  that day has none). The CLI draws its live display from it.

The result lists the steps that failed ("step: cause"); platforms that failed are not steps that
failed (their status is in the warehouse, `daily_plans.day_crawls`).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import signal
import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import dagster as dg
import duckdb
from dagster_shared.error import SerializableErrorInfo

from config.settings import Settings
from pipelines.assets.crawls import GROUP as CRAWLS
from pipelines.assets.crawls import crawl_key, crawl_listener
from pipelines.definitions import build_defs, policy_warnings_silenced
from pipelines.partitions import FIRST_DAY
from pipelines.resources import WarehouseResource
from scrapers import registry
from scrapers.crawl.lock import CrawlFolderBusy, crawl_folder_lock
from scrapers.crawl.runner import OnProgress
from warehouse import daily_plans
from warehouse.engine import connect

JOB = "daily_refresh"
# The tag a run launched here carries, with the command's name: runs the schedule or the UI
# launched have none.
ORIGIN_TAG = "gpuplan/origin"
# What a step that gave up waiting for the writer raises (warehouse.engine.connect): the run was blocked.
BLOCKED_BY = connect.WriterBusyError.__name__

__all__ = ["DayResult", "RunBlocked", "execute_day"]


# Told before each day's run: (day, its platforms or None for all, True for a replayed day before).
OnDay = Callable[[dt.date, Sequence[str] | None, bool], None]


class RunBlocked(RuntimeError):
    """Another run keeps what this one needs (the writer, the day's crawl folder); says which."""


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
    on_day: OnDay | None = None,
    wait_s: float,
) -> DayResult:
    """Run `daily_refresh` for `day` here; `platforms`: crawl only these (the others keep the day's crawl).

    Offline, on a warehouse without any day before `day`, the day before is run first from the
    snapshots' recorded previous day (`previous_demo_day`), so the first plans already show what
    changed. Failures of that day's steps are listed too, after its date. `on_day(day, platforms,
    replay)` is called before each day's run (`replay` True for that recorded day before), with the
    platforms it crawls (None: all); `on_crawl` hears the crawls of both.
    Raises RunBlocked when another run keeps the day's crawl folder or the writer for more than
    `wait_s` seconds. Ctrl-C or SIGTERM stops the run, then comes back as KeyboardInterrupt or SIGTERM.
    """
    # Dagster's own setting: with it the run is recorded where the UI reads; without, nothing is kept
    instance = dg.DagsterInstance.get() if os.environ.get("DAGSTER_HOME") else dg.DagsterInstance.ephemeral()
    with instance:
        failures = []
        earlier = previous_demo_day(settings, day, platforms) if offline else None
        if earlier is not None:
            before, demo_platforms = earlier
            if on_day is not None:
                on_day(before, demo_platforms, True)
            result = _run_day(
                settings, instance, before, True, demo_platforms, registry.PREVIOUS, on_crawl, wait_s
            )
            failures += [f"{before}: {failure}" for failure in result.failures]
        if on_day is not None:
            on_day(day, platforms, False)
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
        with _current_reader(settings) as con:
            if daily_plans.has_history_before(con, day):
                return None
    return before, recorded


def _current_reader(settings: Settings) -> duckdb.DuckDBPyConnection:
    """A reader of the published warehouse; one published by an older gpuplan is first migrated by a
    writer session, as the refresh about to run would (an upgrade must not stop the refresh that
    the error message asks for)."""
    try:
        return connect.reader(settings.warehouse)
    except connect.OutdatedWarehouseError:
        with connect.writer(settings.warehouse):
            pass
        return connect.reader(settings.warehouse)


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
    defs = build_defs(settings, offline=offline, snapshot=snapshot, writer_wait_s=wait_s, first_day=day)
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
            return _execute(job, instance, day, selection, run_id, on_crawl, _origin(offline, snapshot))
    except CrawlFolderBusy as exc:
        raise RunBlocked(str(exc)) from None


def _origin(offline: bool, snapshot: str) -> dict[str, str]:
    """The run's tags saying where it came from, so the UI's Runs list tells it from the schedule's."""
    how = "the recorded previous day, replayed" if snapshot else "offline" if offline else "live"
    return {ORIGIN_TAG: "gpuplan refresh", "gpuplan/crawls": how}


def _execute(
    job: dg.JobDefinition,
    instance: dg.DagsterInstance,
    day: dt.date,
    selection: list[dg.AssetKey] | None,
    run_id: str,
    on_crawl: OnProgress | None,
    tags: dict[str, str],
) -> DayResult:
    listening = crawl_listener.set(on_crawl)
    # Dagster's interrupt capture leaves SIGTERM mapped to SIGINT's handler; ours comes back after.
    sigterm = signal.getsignal(signal.SIGTERM)
    try:
        with policy_warnings_silenced(), _signals_heard() as heard:
            result = job.execute_in_process(
                instance=instance,
                partition_key=day.isoformat(),
                asset_selection=selection,
                raise_on_error=False,
                run_id=run_id,
                tags=tags,
                # the CLI prints its own summary; Dagster's event log stays in the instance
                run_config={"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}},
            )
    finally:
        crawl_listener.reset(listening)
        if signal.getsignal(signal.SIGTERM) is not sigterm and sigterm is not None:
            signal.signal(signal.SIGTERM, sigterm)
    if signal.SIGTERM in heard:
        signal.raise_signal(signal.SIGTERM)  # to the caller's handler (the CLI's), or the default
    if signal.SIGINT in heard:
        raise KeyboardInterrupt
    failures = []
    for event in result.all_events:
        if not event.is_step_failure or event.step_failure_data is None:
            continue
        chain = []  # Dagster's error, the step's exception it wraps, what that was raised from
        error = event.step_failure_data.error
        while error is not None:
            chain.append(error)
            error = error.cause
        blocked = next((link for link in chain if link.cls_name == BLOCKED_BY), None)
        if blocked is not None:
            raise RunBlocked(_said(blocked))
        failures.append(f"{event.step_key}: {_said(chain[-1]) if chain else 'failed'}")
    if not result.success and not failures:
        run_failure = next((e for e in result.all_events if e.is_failure), None)
        failures.append(f"run: {run_failure.message if run_failure else 'failed'}")
    return DayResult(run_id, failures)


def _said(error: SerializableErrorInfo) -> str:
    """An error's message without its class's qualified name before it (Dagster's Failure, ...)."""
    return error.message.split(f"{error.cls_name}: ", 1)[-1].strip()


@contextmanager
def _signals_heard() -> Iterator[set[int]]:
    """The SIGINT and SIGTERM that arrive in the block, filled in when it ends.

    Dagster hears both as an interrupt: it stops the run (the step running fails with
    DagsterExecutionInterruptedError, the run is marked so) and returns, keeping the signal to
    itself. The caller raises it again after the run, so that SIGTERM still ends the command as
    SIGTERM. The signals are learned from `signal.set_wakeup_fd`, which the interpreter writes
    whatever handler runs. Only the main thread can listen; elsewhere the set stays empty.
    """
    heard: set[int] = set()
    if threading.current_thread() is not threading.main_thread():
        yield heard
        return
    read, write = os.pipe()
    os.set_blocking(read, False)
    os.set_blocking(write, False)
    previous = signal.set_wakeup_fd(write, warn_on_full_buffer=False)
    try:
        yield heard
    finally:
        signal.set_wakeup_fd(previous)
        with contextlib.suppress(BlockingIOError):
            heard.update(signum for signum in os.read(read, 512) if signum in (signal.SIGINT, signal.SIGTERM))
        os.close(read)
        os.close(write)

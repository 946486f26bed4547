"""The intraday watches: one cycle (`run_cycle`, behind `gpuplan watch`), and in Dagster the
`watch_cycle` job and its schedule, every GPUPLAN_WATCH_EVERY minutes (default 15).

One cycle:
1. crawls only the platforms the watches need (`needed_platforms`) into a folder of its own;
2. in one writer session that does not publish (`connect.writer(..., publish=False)`) loads those
   crawls like any crawl (they are history) and checks the watches against the latest crawls
   (`digest.intraday.check_watches`), recording each watch's edge state;
3. after that session, pushes the edges (`digest.push.delivery.push`), each one event.
It rebuilds no plan and publishes nothing: the digest's "since yesterday" compares the daily plans,
and the cycle's crawls go out with the daily run's publish. Its writer session costs the crawls'
rows and a few small queries, not the warehouse's size (bench/bench_watch_cycle.py).
"""

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import dagster as dg

from config.watches_file import JobWatch, Watch
from digest.intraday import WatchCheck, check_watches, edge_events
from digest.push.delivery import Channels, PushResult, push
from pipelines.resources import CrawlerResource, MailerResource, WarehouseResource
from scrapers.crawl.summary import WORKED_STATUSES, CrawlSummary
from sizing.jobs import Job
from warehouse.engine import connect
from warehouse.loading import LoadResult, load_crawl

# Crawls `platforms` into a folder, their summaries in order (CrawlerResource.crawl, runner.crawl).
Crawl = Callable[[Sequence[str], Path], list[CrawlSummary]]


@dataclass(frozen=True)
class Cycle:
    checked_at: datetime  # naive UTC
    platforms: tuple[str, ...]  # crawled
    loads: tuple[LoadResult, ...]
    checks: tuple[WatchCheck, ...]
    pushed: tuple[PushResult, ...]


def needed_platforms(watches: Sequence[Watch], jobs: Mapping[str, Job], known: Sequence[str]) -> list[str]:
    """The platforms a cycle crawls, in `known`'s order: those a price or stock watch names (one that
    names none: all), and a job watch's job's (`platforms:` of the job; none named: all)."""
    wanted: set[str] = set()
    for watch in watches:
        if isinstance(watch, JobWatch):
            job = jobs.get(watch.job)
            named: Collection[str] = job.platforms if job is not None else ()
        else:
            named = watch.platforms
        if not named:
            return list(known)
        wanted.update(named)
    return [platform for platform in known if platform in wanted]


def run_cycle(
    warehouse: Path,
    out_dir: Path,
    watches: Sequence[Watch],
    jobs: Mapping[str, Job],
    platforms: Sequence[str],
    crawl: Crawl,
    channels: Channels = (),
    *,
    stale_hours: float | None = None,
    max_nodes: int = 1,
    lock_timeout_s: float = connect.DEFAULT_LOCK_TIMEOUT_S,
    push_options: Mapping[str, Any] | None = None,
) -> Cycle:
    """One cycle: crawl `needed_platforms` of `platforms` into `out_dir`, load, check, record, push."""
    chosen = needed_platforms(watches, jobs, platforms)
    summaries = crawl(chosen, out_dir) if chosen else []
    with connect.writer(warehouse, lock_timeout_s, publish=False, holder="gpuplan watch") as con:
        loads = tuple(load_crawl(con, summary) for summary in summaries)
        checked_at = datetime.now(UTC).replace(tzinfo=None)
        worked = {load.platform for load in loads if load.status in WORKED_STATUSES}
        checks = check_watches(
            con, watches, jobs, worked, chosen, checked_at, stale_hours=stale_hours, max_nodes=max_nodes
        )
    listed = list(channels)
    pushed = (
        push(
            warehouse,
            listed,
            edge_events(checks, checked_at),
            lock_timeout_s=lock_timeout_s,
            **(push_options or {}),
        )
        if listed
        else []
    )
    return Cycle(checked_at, tuple(chosen), loads, checks, tuple(pushed))


def build_watch_cycle(
    notify_file: Path | None, every_minutes: int
) -> tuple[dg.JobDefinition, dg.ScheduleDefinition]:
    """The `watch_cycle` job and its schedule, every `every_minutes` minutes (GPUPLAN_WATCH_EVERY);
    pushes go to `notify_file`'s channels (GPUPLAN_NOTIFY); an offline run checks nothing."""

    @dg.op(
        name="check_watches",
        description="Crawls the platforms the watches need, loads them, checks the watches and pushes "
        "each that starts to hold (digest.intraday).",
    )
    def watch_cycle_op(
        context: dg.OpExecutionContext,
        warehouse: WarehouseResource,
        crawler: CrawlerResource,
        mailer: MailerResource,
    ) -> dg.Output[int]:
        from config.jobs_file import read_jobs
        from config.notify_file import read_channels
        from config.watches_file import read_watches
        from scrapers.registry import platforms

        if crawler.offline:  # replayed snapshots are no news, and the latest crawls leave them out
            return dg.Output(0, metadata={"status": "not run: offline"})
        known = platforms()
        listed = read_watches(Path(mailer.watches_file) if mailer.watches_file else None, known)
        if listed.error:
            raise dg.Failure(description=listed.error)
        channels = read_channels(notify_file) if notify_file else []
        jobs = {job.name: job for job in read_jobs(Path(warehouse.jobs_file))} if warehouse.jobs_file else {}
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        folder = Path(warehouse.crawl_dir) / "intraday" / stamp
        cycle = run_cycle(
            warehouse.path,
            folder,
            listed.watches,
            jobs,
            known,
            crawler.crawl,
            channels,
            stale_hours=warehouse.stale_hours,
            max_nodes=warehouse.max_nodes,
            lock_timeout_s=warehouse.writer_wait_s,
        )
        fired = [check for check in cycle.checks if check.fired]
        for check in fired:
            context.log.warning(f"watch fired: {check.key}")
        for result in cycle.pushed:
            if result.status == "failed":
                context.log.warning(f"push {result.event_key} to {result.channel} failed: {result.error}")
        return dg.Output(
            len(fired),
            metadata={
                "crawled": ", ".join(f"{load.platform} {load.status}" for load in cycle.loads) or "nothing",
                "watches": len(cycle.checks),
                "fired": len(fired),
                "pushed": sum(result.status == "sent" for result in cycle.pushed),
            },
        )

    @dg.job(
        name="watch_cycle",
        description="One cycle of the intraday watches: crawl what they need, check, push what fired.",
    )
    def watch_cycle() -> None:
        watch_cycle_op()

    schedule = dg.ScheduleDefinition(
        name="watch_cycle_schedule",
        job=watch_cycle,
        cron_schedule=watch_cron(every_minutes),
        description=f"Runs the intraday watches every {every_minutes} min (GPUPLAN_WATCH_EVERY), "
        f"cron '{watch_cron(every_minutes)}'.",
    )
    return watch_cycle, schedule


def watch_cron(every_minutes: int) -> str:
    """A cron for every `every_minutes` minutes: `*/15 * * * *`; an hour or more, on the hour (`0 */2
    * * *`). A period that does not divide the hour or the day runs at its nearest divisor below."""
    if every_minutes < 60:
        return f"*/{_divisor(every_minutes, 60)} * * * *"
    return f"0 */{_divisor(every_minutes // 60, 24)} * * *"


def _divisor(wanted: int, whole: int) -> int:
    divisors: Sequence[int] = [d for d in range(1, whole + 1) if whole % d == 0 and d <= wanted]
    return max(divisors)

"""Run platform crawls, all of a run in one child process, and write their summaries.

Scrapy's reactor cannot restart inside a process, so crawls run in a child: one
`python -m scrapers.crawl.child` for every crawl of a run (Scrapy's `AsyncCrawlerProcess`
runs them concurrently in one reactor, so adding a platform costs a few tenths of a second,
not another interpreter). Each crawl writes its own offers feed, rejected-offers feed, log and
stats report (`scrapers.extensions`); the parent reads them back as each crawl ends and writes
`<out_dir>/<platform>.summary.json` (`scrapers.crawl.summary.CrawlSummary`, the one summary type).

A platform failure (HTTP errors, error envelopes, an exception in its parse code, a timeout, a
crash) is a summary with status "failed" and the reason, never an exception, and never costs
another platform its summary: a crawl that raises ends alone; one that blocks the shared
reactor or kills the process leaves the crawls that had not ended, and each of those is run
again alone, in a child of its own, side by side (`scrapers.crawl.supervision.run_children`), so
only the culprit fails.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

from scrapers.crawl.files import CrawlFiles, CrawlRecord
from scrapers.crawl.lock import crawl_folder_lock, this_process
from scrapers.crawl.summary import CrawlSummary, utc_now
from scrapers.crawl.supervision import ChildEvent, ChildExit, ChildJob, run_child, run_children
from scrapers.extensions import REPORT_FILE_SETTING
from scrapers.registry import SETTINGS_MODULE, fixture_dir, spider_class, token_secrets
from scrapers.replay import RECORD_SETTING, SNAPSHOT_FILE, Snapshot, SnapshotError

# A healthy crawl takes seconds to a minute (RunPod's fan-out is the longest);
# ten minutes means it is stuck. The spider is asked to stop at 80 % of this so
# it can still write what it has; the process is killed at 100 %.
DEFAULT_TIMEOUT_S = 600.0
GRACEFUL_STOP_SHARE = 0.8
# Crawls rerun alone at once, after one blocked or crashed the process they shared. Each rerun is a
# Python + Scrapy process (~100 MB) mostly waiting on the network, so more than the cores is fine;
# four bounds the memory (~400 MB) and the burst of interpreter start-ups on a small machine, and
# covers the usual case (a run's few live platforms) without queueing. The rest wait their turn.
RERUNS_AT_ONCE = 4
# Stands in for a required token in offline replay: the snapshot answers, nothing is sent.
OFFLINE_TOKEN = "offline-replay"

# What `crawl` tells its caller as it goes, from the calling thread: (platform, state,
# summary once done). Every platform gets "waiting" first; "crawling" when its spider opened in
# the crawl process (a platform skipped or failed before it started gets none; one rerun alone
# after another blocked or crashed the shared process gets it again); "done" with its summary,
# once, last, as soon as that platform's crawl ended (not when the whole run did).
ProgressState = str  # "waiting" | "crawling" | "done"
OnProgress = Callable[[str, ProgressState, CrawlSummary | None], None]


@dataclass(frozen=True)
class CrawlJob:
    """One platform's crawl in a run: its own extra Scrapy settings, feed path, snapshot to replay or record.

    `settings` go to this crawl only, after the run's (tests point one platform at a fault server).
    """

    platform: str
    settings: Mapping[str, Any] = field(default_factory=dict)
    feed: Path | None = None
    replay_dir: Path | None = None
    record_dir: Path | None = None


def run_crawl(
    platform: str,
    out_dir: Path,
    offline: bool = False,
    env: Mapping[str, str] | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    *,
    feed: Path | None = None,
    settings: Mapping[str, Any] | None = None,
    replay_dir: Path | None = None,
    record_dir: Path | None = None,
) -> CrawlSummary:
    """Crawl one platform in a child process; write and return its summary.

    `feed`: where the offers JSONL goes (default `<out_dir>/<platform>.jsonl`).
    `settings`: extra Scrapy settings for this crawl (tests point spiders at a
    loopback server with them). `offline`: replay `scrapers/fixtures/<platform>/`;
    `replay_dir`: replay that recorded snapshot folder instead (a crawl recorded with
    `record_dir`, yours or one attached to a bug report); both are marked offline.
    `record_dir`: also record every response there as a new snapshot.
    Raises UnknownPlatform for a name no spider has; never for a platform failure.
    """
    job = CrawlJob(platform, settings or {}, feed, replay_dir, record_dir)
    (summary,) = crawl([job], out_dir, offline=offline, timeout_s=timeout_s, env=env)
    return summary


class Progress(NamedTuple):
    """One step of a run's crawls: `platform` is now `state` ("waiting" | "crawling" | "done"),
    with its summary when done (see OnProgress for the order)."""

    platform: str
    state: ProgressState
    summary: CrawlSummary | None = None


def crawl(
    jobs: Sequence[CrawlJob],
    out_dir: Path,
    *,
    offline: bool = False,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    env: Mapping[str, str] | None = None,
    settings: Mapping[str, Any] | None = None,
    on_progress: OnProgress | None = None,
) -> list[CrawlSummary]:
    """Run `jobs` side by side in one crawl process into `out_dir`; their summaries, in order.

    A platform's failure is its summary's status, never an exception, and never stops the
    others. `timeout_s` bounds each crawl (they run side by side, so the run too; twice that when
    crawls are rerun alone after another blocked or crashed the shared process, more when more than
    RERUNS_AT_ONCE wait their turn). `settings` go to every crawl; a job's own settings go after
    them. Raises UnknownPlatform (before crawling anything) for a name no spider has.
    """
    summaries = {}
    for step in iter_crawls(jobs, out_dir, offline=offline, timeout_s=timeout_s, env=env, settings=settings):
        if on_progress is not None:
            on_progress(*step)
        if step.summary is not None:
            summaries[step.platform] = step.summary
    return [summaries[job.platform] for job in jobs]


def iter_crawls(
    jobs: Sequence[CrawlJob],
    out_dir: Path,
    *,
    offline: bool = False,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    env: Mapping[str, str] | None = None,
    settings: Mapping[str, Any] | None = None,
) -> Generator[Progress, None, None]:
    """`crawl`, as the steps happen: a Dagster asset yields each platform's result as it ends.

    Raises UnknownPlatform before anything is crawled, CrawlFolderBusy when another process keeps
    `out_dir` for longer than `timeout_s` (`scrapers.crawl.lock`). Closing it early kills the crawl
    process.
    """
    for job in jobs:
        spider_class(job.platform)
    # Another run crawling into this folder would clear these files, and its load read them half-written.
    with crawl_folder_lock(out_dir, wait_s=timeout_s, holder=this_process()):
        yield from _crawl_together(jobs, out_dir, offline, timeout_s, env, settings or {})


def _crawl_together(
    jobs: Sequence[CrawlJob],
    out_dir: Path,
    offline: bool,
    timeout_s: float,
    env: Mapping[str, str] | None,
    settings: Mapping[str, Any],
) -> Iterator[Progress]:
    child_env = {**(os.environ if env is None else env), "SCRAPY_SETTINGS_MODULE": SETTINGS_MODULE}
    secrets = token_secrets(child_env)
    for job in jobs:
        yield Progress(job.platform, "waiting")
    together: list[_Crawl] = []
    for job in jobs:
        prepared = _prepare(job, out_dir, offline, child_env, timeout_s, settings, secrets)
        if isinstance(prepared, CrawlSummary):
            yield Progress(job.platform, "done", prepared)
        else:
            together.append(prepared)
    if not together:
        return
    by_platform = {item.platform: item for item in together}
    events = run_child([item.child_job() for item in together], out_dir, child_env, timeout_s)
    exit_ = yield from _progress(events, by_platform, timeout_s)
    left = [by_platform[platform] for platform in exit_.unfinished]
    if len(together) > 1 and exit_.isolate:
        # Blocked or died with these crawls unfinished: rerun each alone, so only the culprit fails,
        # side by side (each in its own child: one blocking again holds only its own reactor).
        for item in left:
            item.record.files.clear()
        reruns = run_children(
            [[item.child_job()] for item in left], out_dir, child_env, timeout_s, at_once=RERUNS_AT_ONCE
        )
        yield from _progress(reruns, by_platform, timeout_s)
        return
    for item in left:
        yield Progress(item.platform, "done", item.record.judged(exit_.failure(timeout_s)))


_Ended = TypeVar("_Ended")  # what a children's event stream returns: a ChildExit, or nothing


def _progress(
    events: Generator[ChildEvent | ChildExit, None, _Ended], crawls: Mapping[str, _Crawl], timeout_s: float
) -> Generator[Progress, None, _Ended]:
    """The children's events as progress steps, each ended crawl summarized, and each crawl a
    child's yielded exit left unfinished failed with its reason; returns what `events` returns."""
    try:
        while True:
            try:
                event = next(events)
            except StopIteration as stop:
                return stop.value  # type: ignore[no-any-return]
            if isinstance(event, ChildExit):
                for platform in event.unfinished:
                    yield Progress(platform, "done", crawls[platform].record.judged(event.failure(timeout_s)))
                continue
            record = crawls[event.platform].record
            if event.ended is None:
                record.started = utc_now()
                yield Progress(event.platform, "crawling")
            else:
                yield Progress(event.platform, "done", record.judged(event.ended.error))
    finally:
        events.close()  # closed early (an interrupt in the consumer): every child is killed now


@dataclass(frozen=True)
class _Crawl:
    """A crawl ready to start: its Scrapy settings, and the record that writes its summary."""

    record: CrawlRecord
    settings: dict[str, Any]

    @property
    def platform(self) -> str:
        return self.record.platform

    def child_job(self) -> ChildJob:
        return ChildJob(self.platform, self.settings, self.record.files.log)


def _prepare(
    job: CrawlJob,
    out_dir: Path,
    offline: bool,
    child_env: dict[str, str],
    timeout_s: float,
    run_settings: Mapping[str, Any],
    secrets: tuple[str, ...],
) -> _Crawl | CrawlSummary:
    """The crawl's settings (and `child_env` fitted to its spider), or its summary when it cannot start."""
    spider = spider_class(job.platform)
    files = CrawlFiles(out_dir, job.platform, job.feed)
    files.clear()
    record = CrawlRecord(job.platform, files, offline or job.replay_dir is not None, secrets)
    # The child runs in `out_dir`: a relative file path must mean the caller's folder.
    if spider.file_env and child_env.get(spider.file_env):
        child_env[spider.file_env] = str(Path(child_env[spider.file_env]).expanduser().resolve())
    crawl_settings: dict[str, Any] = {}
    if record.replaying:
        snapshot = job.replay_dir if job.replay_dir is not None else fixture_dir(job.platform)
        if not (snapshot / SNAPSHOT_FILE).exists():
            missing = f"no snapshot of {job.platform} to replay (looked for {snapshot / SNAPSHOT_FILE})"
            return record.write("failed", missing)
        try:
            Snapshot.load(snapshot)  # here, so a broken one is said as broken, not as every request missing
        except (OSError, SnapshotError) as error:
            return record.write("failed", str(error))
        crawl_settings.update(_replay_settings(snapshot))
        for token in spider.tokens():
            if token.required and not token.value(child_env):
                child_env[token.env] = OFFLINE_TOKEN
    else:
        reason = spider.skip_reason(child_env)
        if reason is not None:
            return record.write("skipped", reason)
    if job.record_dir is not None:
        crawl_settings.update(_record_settings(job.record_dir))
    crawl_settings.update(
        {
            "FEEDS": json.dumps(files.feeds()),
            REPORT_FILE_SETTING: str(files.report),
            "CLOSESPIDER_TIMEOUT": str(round(timeout_s * GRACEFUL_STOP_SHARE, 1)),
        }
    )
    crawl_settings.update(run_settings)
    crawl_settings.update(job.settings)
    return _Crawl(record, crawl_settings)


def _replay_settings(snapshot: Path) -> dict[str, str]:
    return {
        # Politeness protects servers, and a replay sends nothing: no delay between answers.
        "DOWNLOAD_DELAY": "0",
        "AUTOTHROTTLE_ENABLED": "False",
        "HTTPCACHE_ENABLED": "True",
        "HTTPCACHE_STORAGE": "scrapers.replay.SnapshotStorage",
        "HTTPCACHE_DIR": str(snapshot.resolve()),
        "HTTPCACHE_IGNORE_MISSING": "True",
        "HTTPCACHE_EXPIRATION_SECS": "0",
    }


def _record_settings(record_dir: Path) -> dict[str, str]:
    if record_dir.exists() and any(record_dir.iterdir()):
        raise FileExistsError(f"record folder {record_dir} is not empty; a snapshot needs a fresh folder")
    return {
        "HTTPCACHE_ENABLED": "True",
        "HTTPCACHE_STORAGE": "scrapers.replay.SnapshotStorage",
        "HTTPCACHE_DIR": str(record_dir.resolve()),
        RECORD_SETTING: "True",
        # Transient failures are retried; only the answer that counted is recorded.
        "HTTPCACHE_IGNORE_HTTP_CODES": "408,429,500,502,503,504,522,524",
    }

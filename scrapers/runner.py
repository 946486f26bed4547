"""Run platform crawls, all of a run in one child process, and write their summaries.

Scrapy's reactor cannot restart inside a process, so crawls run in a child: one
`python -m scrapers.crawl_child` for every crawl of a run (Scrapy's `AsyncCrawlerProcess`
runs them concurrently in one reactor, so adding a platform costs a few tenths of a second,
not another interpreter). Each crawl writes its own offers feed, rejected-offers feed, log and
stats report (`scrapers.extensions`); the parent reads them back as each crawl ends and writes
`<out_dir>/<platform>.summary.json` (`scrapers.summary.CrawlSummary`, the one summary type).

A platform failure (HTTP errors, error envelopes, an exception in its parse code, a timeout, a
crash) is a summary with status "failed" and the reason, never an exception, and never costs
another platform its summary: a crawl that raises ends alone; one that blocks the shared
reactor or kills the process leaves the crawls that had not ended, and each of those is run
again alone (`scrapers.supervision`), so only the culprit fails.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from scrapers import pipelines
from scrapers.extensions import REPORT_FILE_SETTING
from scrapers.platform import STAT_ERRORS, STAT_FAILURES, STAT_PARTIAL, STAT_SKIPPED
from scrapers.redaction import redact
from scrapers.registry import SETTINGS_MODULE, fixture_dir, spider_class, token_secrets
from scrapers.replay import RECORD_SETTING, SNAPSHOT_FILE
from scrapers.summary import CrawlSummary, FeedDigest, digest_feed, utc_now
from scrapers.supervision import ChildJob, Ended, run_child

# A healthy crawl takes seconds to a minute (RunPod's fan-out is the longest);
# ten minutes means it is stuck. The spider is asked to stop at 80 % of this so
# it can still write what it has; the process is killed at 100 %.
DEFAULT_TIMEOUT_S = 600.0
GRACEFUL_STOP_SHARE = 0.8
# Stands in for a required token in offline replay: the snapshot answers, nothing is sent.
OFFLINE_TOKEN = "offline-replay"

# What `run_crawls` tells its caller as it goes, from the calling thread: (platform, state,
# summary once done). Every platform gets "waiting" first; "crawling" when its spider opened in
# the crawl process (a platform skipped or failed before it started gets none); "done" with its
# summary, once, last, as soon as that platform's crawl ended (not when the whole run did).
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


def run_crawls(
    names: Sequence[str],
    out_dir: Path,
    *,
    offline: bool = False,
    replay_dir: Path | None = None,
    record_dir: Path | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    env: Mapping[str, str] | None = None,
    settings: Mapping[str, Any] | None = None,
    on_progress: OnProgress | None = None,
) -> list[CrawlSummary]:
    """Crawl each of `names` into `out_dir`, all at once in one process; one summary per platform, in order.

    A platform's failure is its summary's status, never an exception, and never stops the
    others. `replay_dir` and `record_dir` take one platform (a recording is one snapshot).
    `timeout_s` bounds each crawl (they run side by side, so the run too, but for a crawl rerun
    alone after another blocked or crashed the shared process).
    Raises UnknownPlatform (before crawling anything) for a name no spider has.
    """
    if len(names) > 1 and (replay_dir is not None or record_dir is not None):
        raise ValueError("replaying or recording a snapshot takes one platform")
    jobs = [CrawlJob(name, replay_dir=replay_dir, record_dir=record_dir) for name in names]
    return crawl(
        jobs,
        out_dir,
        offline=offline,
        timeout_s=timeout_s,
        env=env,
        settings=settings,
        on_progress=on_progress,
    )


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

    `settings` go to every crawl; a job's own settings go after them. The rules of `run_crawls`.
    """
    for job in jobs:
        spider_class(job.platform)  # UnknownPlatform before anything is crawled
    out_dir.mkdir(parents=True, exist_ok=True)
    child_env = {**(os.environ if env is None else env), "SCRAPY_SETTINGS_MODULE": SETTINGS_MODULE}
    secrets = token_secrets(child_env)
    notify = on_progress or (lambda platform, state, summary: None)
    for job in jobs:
        notify(job.platform, "waiting", None)
    summaries: dict[str, CrawlSummary] = {}
    prepared: dict[str, _Crawl] = {}
    for job in jobs:
        outcome = _prepare(job, out_dir, offline, child_env, timeout_s, settings or {}, secrets)
        if isinstance(outcome, CrawlSummary):
            summaries[job.platform] = outcome
            notify(job.platform, "done", outcome)
        else:
            prepared[job.platform] = outcome

    def started(platform: str) -> None:
        prepared[platform].started = utc_now()
        notify(platform, "crawling", None)

    def ended(platform: str, how: Ended) -> None:
        summaries[platform] = prepared[platform].summarize(how)
        notify(platform, "done", summaries[platform])

    together = list(prepared.values())
    if together:
        exit_ = run_child([c.child_job() for c in together], out_dir, child_env, timeout_s, started, ended)
        left = [c for c in together if c.platform not in exit_.ended]
        if len(together) > 1 and exit_.isolate:
            # Blocked or died with these unfinished: run each alone, so only the culprit fails.
            for item in left:
                item.paths.clear()
                alone = run_child([item.child_job()], out_dir, child_env, timeout_s, started, ended)
                if item.platform not in alone.ended:
                    ended(item.platform, Ended(alone.failure(timeout_s)))
        else:
            for item in left:
                ended(item.platform, Ended(exit_.failure(timeout_s)))
    return [summaries[job.platform] for job in jobs]


@dataclass
class _Crawl:
    """A crawl ready to start: its paths, its Scrapy settings, and when it started."""

    platform: str
    paths: _Paths
    settings: dict[str, Any]
    replaying: bool
    secrets: tuple[str, ...]
    started: datetime = field(default_factory=utc_now)

    def child_job(self) -> ChildJob:
        return ChildJob(self.platform, self.settings, self.paths.log)

    def summarize(self, how: Ended) -> CrawlSummary:
        """The summary of how the crawl ended: its report judged, or the child's failure."""
        if how.error is not None:
            return self.summary("failed", how.error, _paths_stats(self.paths))
        report = _read_report(self.paths.report)
        self.paths.report.unlink(missing_ok=True)  # its stats are in the log's stats dump and the summary
        if report is None:
            return self.summary("failed", "crawl ended without a report", _paths_stats(self.paths))
        # One read of the feed counts its offers and hashes it (the loader's crawl id).
        feed = self.paths.feed
        feed_digest = digest_feed(feed) if feed.exists() else FeedDigest(0, "")
        status, error, stats = summarize(report, feed_digest.lines, _count_lines(self.paths.rejected))
        return self.summary(
            status, error, {**stats, **_paths_stats(self.paths)}, feed_digest if feed_digest.sha256 else None
        )

    def summary(
        self,
        status: str,
        error: str | None,
        stats: dict[str, Any] | None = None,
        feed_digest: FeedDigest | None = None,
    ) -> CrawlSummary:
        return _write_summary(
            self.platform,
            self.paths,
            self.started,
            self.replaying,
            self.secrets,
            status,
            error,
            stats,
            feed_digest,
        )


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
    paths = _Paths(out_dir, job.platform, job.feed)
    paths.clear()
    started = utc_now()
    replaying = offline or job.replay_dir is not None
    # The child runs in `out_dir`: a relative file path must mean the caller's folder.
    if spider.file_env and child_env.get(spider.file_env):
        child_env[spider.file_env] = str(Path(child_env[spider.file_env]).expanduser().resolve())

    def refused(status: str, error: str) -> CrawlSummary:
        return _write_summary(job.platform, paths, started, replaying, secrets, status, error)

    crawl_settings: dict[str, Any] = {}
    if replaying:
        snapshot = job.replay_dir if job.replay_dir is not None else fixture_dir(job.platform)
        if not (snapshot / SNAPSHOT_FILE).exists():
            return refused(
                "failed", f"no snapshot of {job.platform} to replay (looked for {snapshot / SNAPSHOT_FILE})"
            )
        crawl_settings.update(_replay_settings(snapshot))
        if spider.token is not None and spider.token.required and not spider.token.value(child_env):
            child_env[spider.token.env] = OFFLINE_TOKEN
    else:
        reason = spider.skip_reason(child_env)
        if reason is not None:
            return refused("skipped", reason)
    if job.record_dir is not None:
        crawl_settings.update(_record_settings(job.record_dir))
    crawl_settings.update(
        {
            "FEEDS": json.dumps(paths.feeds()),
            REPORT_FILE_SETTING: str(paths.report),
            "CLOSESPIDER_TIMEOUT": str(round(timeout_s * GRACEFUL_STOP_SHARE, 1)),
        }
    )
    crawl_settings.update(run_settings)
    crawl_settings.update(job.settings)
    return _Crawl(job.platform, paths, crawl_settings, replaying, secrets, started)


def _write_summary(
    platform: str,
    paths: _Paths,
    started: datetime,
    replaying: bool,
    secrets: tuple[str, ...],
    status: str,
    error: str | None,
    stats: dict[str, Any] | None = None,
    feed_digest: FeedDigest | None = None,
) -> CrawlSummary:
    finished = utc_now()
    if stats and stats.get("errors"):
        stats = {**stats, "errors": [redact(e, secrets) for e in stats["errors"]]}
    if feed_digest is None and paths.feed.exists():
        feed_digest = digest_feed(paths.feed)
    result = CrawlSummary(
        platform=platform,
        status=status,
        error=None if error is None else redact(error, secrets),
        started_at=started,
        finished_at=finished,
        items_yielded=feed_digest.lines if feed_digest else 0,
        offline=replaying,
        feed=paths.feed if feed_digest else None,
        feed_sha256=feed_digest.sha256 if feed_digest else None,
        stats={"duration_s": round((finished - started).total_seconds(), 2), **(stats or {})},
    )
    return result.write(paths.summary)


def summarize(
    report: Mapping[str, Any], offers_written: int, rejected_written: int
) -> tuple[str, str | None, dict[str, Any]]:
    """Status, error and summary stats from a crawl's report and what its feeds hold."""
    stats = report.get("stats", {})
    finish_reason = report.get("finish_reason")
    errors = list(stats.get(STAT_ERRORS, []))
    reasons = {
        key.removeprefix(pipelines.STAT_REJECTED_BY_REASON): value
        for key, value in stats.items()
        if key.startswith(pipelines.STAT_REJECTED_BY_REASON)
    }
    summary_stats = {
        "offers": offers_written,
        "rejected": rejected_written,
        "rejected_reasons": reasons,
        "stock_known": stats.get(pipelines.STAT_STOCK_KNOWN, 0),
        "stock_unknown": stats.get(pipelines.STAT_STOCK_UNKNOWN, 0),
        "unknown_gpus": stats.get(pipelines.STAT_UNKNOWN_GPUS, []),
        "requests": stats.get("downloader/request_count", 0),
        "retries": stats.get("retry/count", 0),
        "failures": stats.get(STAT_FAILURES, 0),
        "errors": errors,
        "partial": stats.get(STAT_PARTIAL),
        "finish_reason": finish_reason,
    }
    skipped = stats.get(STAT_SKIPPED)
    if skipped:
        return "skipped", skipped, summary_stats
    counted = stats.get(pipelines.STAT_OFFERS, 0)
    if counted != offers_written:
        return (
            "failed",
            f"the feed holds {offers_written} offers but the crawl yielded {counted}",
            summary_stats,
        )
    stopped = None if finish_reason == "finished" else f"crawl stopped early: {finish_reason}"
    problems = [*errors, *filter(None, [summary_stats["partial"], stopped])]
    if offers_written == 0:
        if problems:
            return "failed", "; ".join(problems[:3]), summary_stats
        if rejected_written:
            listed = ", ".join(f"{reason} ×{count}" for reason, count in sorted(reasons.items()))
            return "failed", f"all {rejected_written} quotes were rejected ({listed})", summary_stats
        return "failed", "no offers: the platform returned nothing the spider could read", summary_stats
    if problems:
        return "partial", "; ".join(problems[:3]), summary_stats
    return "ok", None, summary_stats


@dataclass(frozen=True)
class _Paths:
    out_dir: Path
    platform: str
    feed_override: Path | None

    @property
    def feed(self) -> Path:
        return (self.feed_override or self.out_dir / f"{self.platform}.jsonl").resolve()

    @property
    def rejected(self) -> Path:
        return (self.out_dir / f"{self.platform}.rejected.jsonl").resolve()

    @property
    def summary(self) -> Path:
        return self.out_dir / f"{self.platform}.summary.json"

    @property
    def report(self) -> Path:
        return (self.out_dir / f"{self.platform}.report.json").resolve()

    @property
    def log(self) -> Path:
        return (self.out_dir / f"{self.platform}.log").resolve()

    def feeds(self) -> dict[str, dict[str, Any]]:
        def jsonl(item_class: str) -> dict[str, Any]:
            return {"format": "jsonlines", "overwrite": True, "item_classes": [item_class]}

        return {
            str(self.feed): jsonl("scrapers.items.OfferItem"),
            str(self.rejected): jsonl("scrapers.rejects.RejectedOffer"),
        }

    def clear(self) -> None:
        """Yesterday's files must never pass for today's when this crawl fails."""
        for path in (self.feed, self.rejected, self.summary, self.report, self.log):
            path.unlink(missing_ok=True)


def _paths_stats(paths: _Paths) -> dict[str, str | None]:
    return {
        "rejected_feed": str(paths.rejected) if paths.rejected.exists() else None,
        "log": str(paths.log) if paths.log.exists() else None,
    }


def _replay_settings(snapshot: Path) -> dict[str, str]:
    return {
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


def _read_report(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads(path.read_text("utf-8"))
    except (FileNotFoundError, json.JSONDecodeError):
        return None


def _count_lines(path: Path) -> int:
    return digest_feed(path).lines if path.exists() else 0

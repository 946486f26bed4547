"""Run platform crawls in child processes and write their summaries.

Scrapy's reactor cannot restart inside a process, so every crawl is a fresh
`python -m scrapy crawl <platform>` child. The child writes the offers feed,
the rejected-offers feed, a log, and a report of its stats (scrapers.extensions);
the parent reads them back and writes `<out_dir>/<platform>.summary.json`
(`scrapers.summary.CrawlSummary`, the one summary type).

A platform failure (HTTP errors, error envelopes, a crash, a timeout) is a
summary with status "failed" and the reason, never an exception.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scrapers import pipelines
from scrapers.extensions import REPORT_FILE_SETTING
from scrapers.platform import STAT_ERRORS, STAT_FAILURES, STAT_PARTIAL, STAT_SKIPPED, STAT_UNVERIFIED
from scrapers.redaction import redact
from scrapers.registry import SETTINGS_MODULE, fixture_dir, spider_class, token_secrets
from scrapers.replay import RECORD_SETTING, SNAPSHOT_FILE
from scrapers.summary import CrawlSummary, FeedDigest, digest_feed, utc_now

# A healthy crawl takes seconds to a minute (RunPod's fan-out is the longest);
# ten minutes means it is stuck. The spider is asked to stop at 80 % of this so
# it can still write what it has; the process is killed at 100 %.
DEFAULT_TIMEOUT_S = 600.0
GRACEFUL_STOP_SHARE = 0.8
# Stands in for a required token in offline replay: the snapshot answers, nothing is sent.
OFFLINE_TOKEN = "offline-replay"
LAST_LINE_CHARS = 300  # of a crashed child's output, for the summary's error

# What `run_crawls` tells its caller as it goes: (platform, state, summary once done).
ProgressState = str  # "waiting" | "crawling" | "done"
OnProgress = Callable[[str, ProgressState, CrawlSummary | None], None]


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
    """Crawl each of `names` into `out_dir`; one summary per platform, in order.

    A platform's failure is its summary's status, never an exception, and never stops the
    others. `replay_dir` and `record_dir` take one platform (a recording is one snapshot).
    Raises UnknownPlatform (before crawling anything) for a name no spider has.
    """
    for name in names:
        spider_class(name)
    if len(names) > 1 and (replay_dir is not None or record_dir is not None):
        raise ValueError("replaying or recording a snapshot takes one platform")
    if on_progress is not None:
        for name in names:
            on_progress(name, "waiting", None)
    summaries = []
    for name in names:
        if on_progress is not None:
            on_progress(name, "crawling", None)
        summary = run_crawl(
            name,
            out_dir,
            offline=offline,
            replay_dir=replay_dir,
            record_dir=record_dir,
            timeout_s=timeout_s,
            env=env,
            settings=settings,
        )
        summaries.append(summary)
        if on_progress is not None:
            on_progress(name, "done", summary)
    return summaries


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
    spider = spider_class(platform)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = _Paths(out_dir, platform, feed)
    paths.clear()
    started = utc_now()
    child_env = {**(os.environ if env is None else env), "SCRAPY_SETTINGS_MODULE": SETTINGS_MODULE}
    # The child runs in `out_dir`: a relative file path must mean the caller's folder.
    if spider.file_env and child_env.get(spider.file_env):
        child_env[spider.file_env] = str(Path(child_env[spider.file_env]).expanduser().resolve())

    secrets = token_secrets(child_env)
    replaying = offline or replay_dir is not None

    def summary(
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

    crawl_settings: dict[str, Any] = {}
    if replaying:
        snapshot = replay_dir if replay_dir is not None else fixture_dir(platform)
        if not (snapshot / SNAPSHOT_FILE).exists():
            return summary(
                "failed", f"no snapshot of {platform} to replay (looked for {snapshot / SNAPSHOT_FILE})"
            )
        crawl_settings.update(_replay_settings(snapshot))
        if spider.token is not None and spider.token.required and not spider.token.value(child_env):
            child_env[spider.token.env] = OFFLINE_TOKEN
    else:
        reason = spider.skip_reason(child_env)
        if reason is not None:
            return summary("skipped", reason)
    if record_dir is not None:
        crawl_settings.update(_record_settings(record_dir))
    crawl_settings.update(
        {
            "FEEDS": json.dumps(paths.feeds()),
            REPORT_FILE_SETTING: str(paths.report),
            "LOG_FILE": str(paths.log),
            "LOG_FILE_APPEND": "False",
            "CLOSESPIDER_TIMEOUT": str(round(timeout_s * GRACEFUL_STOP_SHARE, 1)),
        }
    )
    crawl_settings.update(settings or {})
    command = [sys.executable, "-m", "scrapy", "crawl", platform]
    for name, value in crawl_settings.items():
        command += ["-s", f"{name}={value}"]
    try:
        child = subprocess.run(
            command,
            env=child_env,
            cwd=out_dir,
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return summary(
            "failed", f"crawl did not finish within {timeout_s:g} s and was killed", _paths_stats(paths)
        )
    report = _read_report(paths.report)
    paths.report.unlink(missing_ok=True)  # its stats are in the log's stats dump and the summary
    if report is None:
        last = _last_line(child.stderr or "") or _last_line(_read_text(paths.log))
        crashed = f"crawl process exited with code {child.returncode} without a report: {last or 'no output'}"
        return summary("failed", crashed, _paths_stats(paths))
    # One read of the feed counts its offers and hashes it (the loader's crawl id).
    feed_digest = digest_feed(paths.feed) if paths.feed.exists() else FeedDigest(0, "")
    status, error, stats = summarize(report, feed_digest.lines, _count_lines(paths.rejected))
    return summary(
        status, error, {**stats, **_paths_stats(paths)}, feed_digest if feed_digest.sha256 else None
    )


def summarize(
    report: Mapping[str, Any], offers_written: int, rejected_written: int
) -> tuple[str, str | None, dict[str, Any]]:
    """Status, error and summary stats from a child's report and what its feeds hold."""
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
        "unknown_gpus": stats.get(pipelines.STAT_UNKNOWN_GPUS, {}),
        "requests": stats.get("downloader/request_count", 0),
        "retries": stats.get("retry/count", 0),
        "failures": stats.get(STAT_FAILURES, 0),
        "errors": errors,
        "partial": stats.get(STAT_PARTIAL),
        "unverified": stats.get(STAT_UNVERIFIED),
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


def _last_line(text: str) -> str:
    """The last non-empty line (a traceback's last line names the exception), shortened."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1][-LAST_LINE_CHARS:] if lines else ""


def _read_text(path: Path) -> str:
    try:
        return path.read_text("utf-8", errors="replace")
    except FileNotFoundError:
        return ""


def _read_report(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads(path.read_text("utf-8"))
    except (FileNotFoundError, json.JSONDecodeError):
        return None


def _count_lines(path: Path) -> int:
    return digest_feed(path).lines if path.exists() else 0

"""What a crawl leaves in its folder, and its summary judged from that.

A crawl of `<platform>` writes, in its output folder: `<platform>.jsonl` (its offers, or the feed
path it was given), `<platform>.rejected.jsonl` (quotes its spider refused), `<platform>.log`,
and `<platform>.report.json` (finish reason and stats, `scrapers.extensions.CrawlReport`). The
runner turns them into `<platform>.summary.json` (`scrapers.crawl.summary.CrawlSummary`); `summarize`
holds the status rules.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from scrapers import coverage, pipelines
from scrapers.crawl.summary import CrawlSummary, FeedDigest, digest_feed, utc_now
from scrapers.platform import (
    STAT_CLOCK,
    STAT_ERRORS,
    STAT_FAILURES,
    STAT_PARTIAL,
    STAT_SKIPPED,
    STAT_UNVERIFIED,
)
from scrapers.redaction import redact


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
        "unknown_gpus": stats.get(pipelines.STAT_UNKNOWN_GPUS, {}),
        "requests": stats.get("downloader/request_count", 0),
        "retries": stats.get("retry/count", 0),
        "failures": stats.get(STAT_FAILURES, 0),
        "errors": errors,
        "partial": stats.get(STAT_PARTIAL),
        "unverified": stats.get(STAT_UNVERIFIED),
        "clock": stats.get(STAT_CLOCK),
        "finish_reason": finish_reason,
        # what a partial crawl stands for: the platform addresses whose answers it read whole
        "read_sources": coverage.read_sources(stats),
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
class CrawlFiles:
    """The files of one platform's crawl in `out_dir` (`feed_override`: the offers feed elsewhere)."""

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


def files_stats(files: CrawlFiles) -> dict[str, str | None]:
    return {
        "rejected_feed": str(files.rejected) if files.rejected.exists() else None,
        "log": str(files.log) if files.log.exists() else None,
    }


def read_report(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads(path.read_text("utf-8"))
    except (FileNotFoundError, json.JSONDecodeError):
        return None


def count_lines(path: Path) -> int:
    return digest_feed(path).lines if path.exists() else 0


@dataclass
class CrawlRecord:
    """Writes one crawl's summary: from its report when it ended, or the failure that ended it."""

    platform: str
    files: CrawlFiles
    replaying: bool  # offline replay of a snapshot: marked offline
    secrets: tuple[str, ...]  # token values no summary may show
    started: datetime = field(default_factory=utc_now)

    def judged(self, failure: str | None) -> CrawlSummary:
        """The summary of a crawl that ended: `failure` None judges its report, else it failed so."""
        if failure is not None:
            return self.write("failed", failure, files_stats(self.files))
        report = read_report(self.files.report)
        self.files.report.unlink(missing_ok=True)  # its stats are in the log's stats dump and the summary
        if report is None:
            return self.write("failed", "crawl ended without a report", files_stats(self.files))
        # One read of the feed counts its offers and hashes it (the loader's crawl id).
        feed = self.files.feed
        feed_digest = digest_feed(feed) if feed.exists() else FeedDigest(0, "")
        status, error, stats = summarize(report, feed_digest.lines, count_lines(self.files.rejected))
        stats = {**stats, **files_stats(self.files)}
        return self.write(status, error, stats, feed_digest if feed_digest.sha256 else None)

    def write(
        self,
        status: str,
        error: str | None,
        stats: dict[str, Any] | None = None,
        feed_digest: FeedDigest | None = None,
    ) -> CrawlSummary:
        """Write `<platform>.summary.json` (atomically) and return it, secrets redacted."""
        finished = utc_now()
        if stats and stats.get("errors"):
            stats = {**stats, "errors": [redact(e, self.secrets) for e in stats["errors"]]}
        if feed_digest is None and self.files.feed.exists():
            feed_digest = digest_feed(self.files.feed)
        result = CrawlSummary(
            platform=self.platform,
            status=status,
            error=None if error is None else redact(error, self.secrets),
            started_at=self.started,
            finished_at=finished,
            items_yielded=feed_digest.lines if feed_digest else 0,
            offline=self.replaying,
            feed=self.files.feed if feed_digest else None,
            feed_sha256=feed_digest.sha256 if feed_digest else None,
            stats={"duration_s": round((finished - self.started).total_seconds(), 2), **(stats or {})},
        )
        return result.write(self.files.summary)

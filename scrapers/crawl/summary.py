"""The one crawl-summary type: written by the crawl runner, read by the warehouse loader and the pipelines.

A crawl leaves `<platform>.summary.json` beside its feed:

    platform, status ("ok" | "failed" | "partial" | "skipped"), error,
    started_at, finished_at (ISO-8601 UTC), items_yielded, offline, source ("crawl" | "import:<fmt>"),
    feed (path of the JSONL or null), feed_sha256 (of the feed's bytes, or null),
    stats (counts, errors, the rejected feed's and the log's paths)

Paths in the file are absolute when the runner writes them; a relative one is read relative to
the summary's folder (a crawl folder moved or attached to a bug report still loads).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

STATUSES = ("ok", "failed", "partial", "skipped")
# The statuses of a run that worked: its offers count. SQL asks the same of run_worked(status)
# (warehouse/definitions/00_run_worked.sql); a test holds the two equal.
WORKED_STATUSES = ("ok", "partial")
# Read in chunks: a Vast feed is tens of megabytes.
_CHUNK_BYTES = 1 << 20


class SummaryError(ValueError):
    """A crawl summary file that cannot be read or lacks what loading needs."""


@dataclass(frozen=True)
class FeedDigest:
    """What one pass over a JSONL feed learns: its non-empty lines and the sha256 of its bytes."""

    lines: int
    sha256: str


def digest_feed(path: Path) -> FeedDigest:
    """Count a feed's non-empty lines and hash its bytes in one read (OSError if unreadable)."""
    digest = hashlib.sha256()
    lines = 0
    pending_line = False  # the current line has a non-blank byte not yet counted
    with path.open("rb") as feed:
        while chunk := feed.read(_CHUNK_BYTES):
            digest.update(chunk)
            for line in chunk.split(b"\n")[:-1]:
                if pending_line or line.strip():
                    lines += 1
                pending_line = False
            pending_line = pending_line or bool(chunk.rsplit(b"\n", 1)[-1].strip())
    return FeedDigest(lines + int(pending_line), digest.hexdigest())


@dataclass(frozen=True)
class CrawlSummary:
    """One crawl's outcome. Times are timezone-aware UTC; `path` is where it was read or written."""

    platform: str
    status: str  # one of STATUSES
    error: str | None
    started_at: dt.datetime | None
    finished_at: dt.datetime | None
    items_yielded: int  # offers written to the feed
    offline: bool  # a replay of recorded answers (the bundled demo snapshots), not a live crawl
    source: str = "crawl"
    feed: Path | None = None
    feed_sha256: str | None = None
    stats: dict[str, Any] = field(default_factory=dict)
    path: Path | None = None

    @property
    def rejected_feed(self) -> Path | None:
        """The spider's rejected quotes (`<platform>.rejected.jsonl`), named in `stats`."""
        return _path(self.path, self.stats.get("rejected_feed"))

    @property
    def log(self) -> Path | None:
        return _path(self.path, self.stats.get("log"))

    @property
    def duration_s(self) -> float | None:
        if self.started_at is None or self.finished_at is None:
            return None
        return (self.finished_at - self.started_at).total_seconds()

    def to_json(self) -> dict[str, Any]:
        return {
            "platform": self.platform,
            "status": self.status,
            "error": self.error,
            "started_at": _iso(self.started_at),
            "finished_at": _iso(self.finished_at),
            "items_yielded": self.items_yielded,
            "offline": self.offline,
            "source": self.source,
            "feed": str(self.feed) if self.feed is not None else None,
            "feed_sha256": self.feed_sha256,
            "stats": self.stats,
        }

    def write(self, path: Path) -> CrawlSummary:
        """Write atomically (temp file, then rename); returns the summary with `path` set."""
        temporary = path.with_suffix(".tmp")
        text = json.dumps(self.to_json(), indent=1, ensure_ascii=False) + "\n"
        temporary.write_text(text, "utf-8")
        temporary.replace(path)
        return replace(self, path=path)

    @classmethod
    def read(cls, path: Path) -> CrawlSummary:
        """The summary at `path`, checked; SummaryError says what is wrong with it."""
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise SummaryError(f"cannot read crawl summary {path}: {exc}") from exc
        if not isinstance(data, dict):
            raise SummaryError(f"crawl summary {path} is not a JSON object")
        platform = data.get("platform")
        if not isinstance(platform, str) or not platform.strip():
            raise SummaryError(f"crawl summary {path} has no platform")
        status = data.get("status")
        if status not in STATUSES:
            raise SummaryError(
                f"crawl summary {path}: status must be one of {', '.join(STATUSES)}, got {status!r}"
            )
        items_yielded = data.get("items_yielded") or 0
        if not isinstance(items_yielded, int) or isinstance(items_yielded, bool) or items_yielded < 0:
            raise SummaryError(f"crawl summary {path}: items_yielded must be a whole number >= 0")
        feed = data.get("feed")
        if feed is not None and not isinstance(feed, str):
            raise SummaryError(f"crawl summary {path}: feed must be a path or null")
        sha256 = data.get("feed_sha256")
        if sha256 is not None and not isinstance(sha256, str):
            raise SummaryError(f"crawl summary {path}: feed_sha256 must be a string or null")
        stats = data.get("stats") or {}
        if not isinstance(stats, dict):
            raise SummaryError(f"crawl summary {path}: stats must be an object")
        for key in ("rejected_feed", "log"):
            if stats.get(key) is not None and not isinstance(stats[key], str):
                raise SummaryError(f"crawl summary {path}: stats.{key} must be a path or null")
        return cls(
            platform=platform.strip(),
            status=status,
            error=data.get("error") or None,
            started_at=_utc(path, "started_at", data.get("started_at")),
            finished_at=_utc(path, "finished_at", data.get("finished_at")),
            items_yielded=items_yielded,
            offline=bool(data.get("offline", False)),
            source=data.get("source") or "crawl",
            feed=_path(path, feed),
            feed_sha256=sha256,
            stats=stats,
            path=path,
        )


def utc_now() -> dt.datetime:
    """Now, timezone-aware UTC, to the second (as summaries store it)."""
    return dt.datetime.now(dt.UTC).replace(microsecond=0)


def _iso(moment: dt.datetime | None) -> str | None:
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ") if moment is not None else None


def _utc(path: Path, key: str, value: Any) -> dt.datetime | None:
    if value is None:
        return None
    try:
        stamp = dt.datetime.fromisoformat(str(value))
    except ValueError as exc:
        raise SummaryError(f"crawl summary {path}: {key} is not an ISO-8601 time: {value!r}") from exc
    return stamp.replace(tzinfo=dt.UTC) if stamp.tzinfo is None else stamp.astimezone(dt.UTC)


def _path(summary_path: Path | None, value: str | None) -> Path | None:
    if not value:
        return None
    named = Path(value)
    if named.is_absolute() or summary_path is None:
        return named
    return (summary_path.parent / named).resolve()

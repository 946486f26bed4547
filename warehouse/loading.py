"""Load one crawl (its summary JSON and JSONL feed) into the warehouse, in one transaction.

Public API (stable):
    load_crawl(con, summary_path) -> LoadResult
    CrawlSummary.read(path) -> CrawlSummary     the summary file, checked (SummaryError if bad)
    LoadResult, SummaryError

Contract:
- crawl_id = sha256(platform + "\\n" + feed bytes); when there is no feed (null, missing or an
  empty file) it is the sha256 of platform + "\\n" + the summary's bytes. Loading a crawl that
  is already in crawl_runs is a no-op (`LoadResult.already_loaded`).
- Bulk statements only, see `warehouse/queries/load_*.sql`: read_json with explicit columns
  into a staging table, validation and normalization in SQL (per GPU, per hour: month = 730 h,
  USD and CNY at the ECB rate of the observation day or the nearest earlier one), then
  INSERT ... SELECT into offers and rejected_offers. Every line becomes an offer or a
  rejected_offers row with its reason: a record that fails validation keeps its fields as
  read; a line that is not a JSON object (a truncated last line) is kept verbatim. Nothing
  is dropped silently. Duplicates (same offer_id and pricing_type) keep the latest observation.
- Values must be spelled as OfferItem says (currency "USD", price_per "gpu"...); variants are
  rejected with the value in the reason. gpu_model null (an unknown GPU name) loads.
- The quotes the spider itself rejected (`<platform>.rejected.jsonl`, scrapers.rejects, named by
  the summary's `stats.rejected_feed`) load into rejected_offers too, in the same transaction,
  each line verbatim with its reason code and detail (a quote file's line-numbered problems),
  and count in items_rejected. A rejected feed that is named but missing or unreadable is said
  in the crawl's error; the offers still load.
- Every crawl gets a crawl_runs row, whatever its outcome. Offers are only ever appended:
  a failed, skipped or empty crawl never deletes, overwrites or hides earlier offers
  (`latest_offers` shows each platform's last crawl that is ok or partial and loaded offers).
- Status recorded (the runner's status, then what the loader saw):
    runner failed / skipped          -> as the runner said (any valid items still load, as history)
    runner ok / partial, 0 offers    -> failed ("no offers loaded ..."): an empty crawl is not
                                        "everything sold out"
    runner ok, some lines rejected   -> partial (the error says how many; the offers stay visible)
    (quotes the spider rejected count in items_rejected only: the runner's status judged them)
    otherwise                        -> as the runner said
- A feed that cannot be read at all (no permission, or DuckDB refuses it as a whole) records
  the crawl as failed with the reason; lines that are not UTF-8 are rejected one by one. An
  error writing the warehouse (a full disk...) is raised and leaves nothing of the crawl: the
  transaction rolls back, and loading it again later is not a no-op.

Call it on the writer connection (`warehouse.connect.writer`), one load at a time.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from warehouse import queries

STATUSES = ("ok", "failed", "partial", "skipped")
# Column delimiter for re-reading unparsed lines verbatim: the record separator, a control
# character that valid JSON never contains unescaped, so a line never splits.
_LINE_DELIMITER = "\x1e"


class SummaryError(ValueError):
    """A crawl summary file that cannot be read or lacks what loading needs."""


class _UnreadableFeed(Exception):
    """DuckDB refused the feed itself (as opposed to a failure writing the warehouse)."""


@dataclass(frozen=True)
class CrawlSummary:
    """A crawl's `<platform>.summary.json`, as written by the crawl runner (times in UTC)."""

    path: Path
    platform: str
    status: str  # ok | failed | partial | skipped
    error: str | None
    started_at: dt.datetime | None  # naive UTC
    finished_at: dt.datetime | None
    items_yielded: int
    offline: bool
    source: str  # "crawl" or "import:<format>"
    feed: Path | None  # absolute; a relative path in the file is relative to the summary's folder
    rejected_feed: Path | None  # stats.rejected_feed, the spider's rejected quotes; resolved as feed

    @classmethod
    def read(cls, path: Path) -> CrawlSummary:
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
        if not isinstance(items_yielded, int) or items_yielded < 0:
            raise SummaryError(f"crawl summary {path}: items_yielded must be a whole number >= 0")
        feed = data.get("feed")
        if feed is not None and not isinstance(feed, str):
            raise SummaryError(f"crawl summary {path}: feed must be a path or null")
        stats = data.get("stats") or {}
        if not isinstance(stats, dict):
            raise SummaryError(f"crawl summary {path}: stats must be an object")
        rejected_feed = stats.get("rejected_feed")
        if rejected_feed is not None and not isinstance(rejected_feed, str):
            raise SummaryError(f"crawl summary {path}: stats.rejected_feed must be a path or null")
        return cls(
            path=path,
            platform=platform.strip(),
            status=status,
            error=data.get("error") or None,
            started_at=_utc(path, "started_at", data.get("started_at")),
            finished_at=_utc(path, "finished_at", data.get("finished_at")),
            items_yielded=items_yielded,
            offline=bool(data.get("offline", False)),
            source=data.get("source") or "crawl",
            feed=(path.parent / feed).resolve() if feed else None,
            rejected_feed=(path.parent / rejected_feed).resolve() if rejected_feed else None,
        )


def _utc(path: Path, key: str, value: Any) -> dt.datetime | None:
    if value is None:
        return None
    try:
        stamp = dt.datetime.fromisoformat(str(value))
    except ValueError as exc:
        raise SummaryError(f"crawl summary {path}: {key} is not an ISO-8601 time: {value!r}") from exc
    if stamp.tzinfo is not None:
        stamp = stamp.astimezone(dt.UTC).replace(tzinfo=None)
    return stamp


@dataclass(frozen=True)
class LoadResult:
    crawl_id: str
    platform: str
    status: str  # as recorded in crawl_runs
    offers_loaded: int
    items_rejected: int
    error: str | None
    already_loaded: bool  # True: this crawl was in the warehouse already; nothing changed


def _crawl_id(summary: CrawlSummary, feed: Path | None) -> str:
    digest = hashlib.sha256(summary.platform.encode("utf-8") + b"\n")
    with (feed or summary.path).open("rb") as content:
        while chunk := content.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _inserted(con: duckdb.DuckDBPyConnection, name: str, **params: Any) -> int:
    """Run a named INSERT and return how many rows it added."""
    ((rows,),) = con.execute(queries.sql(name), params).fetchall()
    return int(rows)


def _load_feed(
    con: duckdb.DuckDBPyConnection, summary: CrawlSummary, feed: Path, crawl_id: str, now: dt.datetime
) -> tuple[int, int, str | None]:
    """Stage, price and insert the feed's records; returns (offers loaded, records rejected, a note).

    Raises _UnreadableFeed when DuckDB cannot read the feed at all (InvalidInputException of the
    two statements that read it); any other error, a full disk included, propagates.
    """
    try:
        queries.execute(con, "load_stage_feed", feed=str(feed), platform=summary.platform)
    except duckdb.InvalidInputException as exc:
        raise _UnreadableFeed(str(exc).splitlines()[0]) from exc
    ((unparsed,),) = con.execute("SELECT count(*) FROM load_staged WHERE unparsed").fetchall()
    rejected = 0
    note = None
    if unparsed:
        lines = {"crawl_id": crawl_id, "platform": summary.platform, "rejected_at": now}
        try:
            rejected += _inserted(
                con, "load_unparsed_lines", feed=str(feed), delimiter=_LINE_DELIMITER, **lines
            )
        except duckdb.InvalidInputException as exc:
            raise _UnreadableFeed(str(exc).splitlines()[0]) from exc
        rejected += _inserted(con, "load_unreadable_lines", **lines)
        con.execute("DROP TABLE load_unreadable_lines")
        con.execute("DROP TABLE load_unreadable_scans")
        if rejected != unparsed:  # both passes use DuckDB's JSON parser; say so if they ever disagree
            note = f"{unparsed} line(s) could not be parsed but {rejected} were found again as text"
    con.execute(
        "CREATE OR REPLACE TEMP VIEW fx_days AS "
        "SELECT observed_date, price_currency FROM load_staged WHERE reason IS NULL"
    )
    queries.execute(con, "fx_day_rates")
    queries.execute(con, "load_price_staged")
    offers = _inserted(
        con,
        "load_insert_offers",
        crawl_id=crawl_id,
        source=summary.source,
        started_at=summary.started_at,
        loaded_at=now,
    )
    rejected += _inserted(
        con, "load_insert_rejected", crawl_id=crawl_id, platform=summary.platform, rejected_at=now
    )
    queries.execute(con, "load_drop_staging")
    return offers, rejected, note


def _stage_scraper_rejects(con: duckdb.DuckDBPyConnection, summary: CrawlSummary) -> tuple[bool, str | None]:
    """Stage the spider's rejected feed (temp table load_scraper_rejects): (staged, a note if not).

    Runs outside the load's transaction, so a feed DuckDB cannot read aborts nothing.
    """
    path = summary.rejected_feed
    if path is None:
        return False, None
    if not path.is_file():
        return False, f"rejected feed {path} named by the summary does not exist"
    if path.stat().st_size == 0:
        return False, None
    try:
        queries.execute(con, "load_stage_scraper_rejects", feed=str(path), delimiter=_LINE_DELIMITER)
    except (duckdb.InvalidInputException, duckdb.IOException) as exc:
        return False, f"rejected feed {path} is unreadable: {str(exc).splitlines()[0]}"
    return True, None


def _outcome(
    summary: CrawlSummary, offers: int, rejected: int, notes: tuple[str | None, ...]
) -> tuple[str, str | None]:
    """The status to record and the error text: the runner's error, then the loader's notes.

    `rejected`: the records the loader rejected. Quotes the spider rejected do not count here:
    the runner's status and error already judge them (an ok crawl may reject quotes by design).
    """
    status = summary.status
    loader_note = None
    if status in ("ok", "partial") and offers == 0:
        status = "failed"
        loader_note = f"no offers loaded ({summary.items_yielded} items yielded, {rejected} rejected)"
    elif rejected:
        status = "partial" if status == "ok" else status
        loader_note = f"{rejected} item(s) rejected, see rejected_offers"
    parts = [part for part in (summary.error, *notes, loader_note) if part]
    return status, "; ".join(parts) or None


def load_crawl(con: duckdb.DuckDBPyConnection, summary_path: Path) -> LoadResult:
    """Load one crawl from its summary file (and the JSONL feed it names); see the module doc."""
    summary = CrawlSummary.read(Path(summary_path))
    feed_note: str | None = None
    feed = summary.feed
    if feed is not None and not feed.is_file():
        feed_note = f"feed {feed} named by the summary does not exist"
        feed = None
    elif feed is not None and feed.stat().st_size == 0:
        feed = None
    try:
        crawl_id = _crawl_id(summary, feed)
    except OSError as exc:  # the feed is there but cannot be read (permissions, I/O error)
        if feed is None:
            raise SummaryError(f"cannot read crawl summary {summary.path}: {exc}") from exc
        feed_note = f"feed {feed} is unreadable: {exc.strerror or exc}"
        feed = None
        crawl_id = _crawl_id(summary, None)

    # fetchall, not fetchone: DuckDB 2.0 keeps an unfinished result and blocks the connection
    existing = con.execute(
        "SELECT status, offers_loaded, items_rejected, error FROM crawl_runs WHERE crawl_id = $crawl_id",
        {"crawl_id": crawl_id},
    ).fetchall()
    if existing:
        ((status, offers, rejected, error),) = existing
        return LoadResult(crawl_id, summary.platform, status, offers, rejected, error, already_loaded=True)

    # Keeping file order would build the staging table on one core (measured: 2.1 s against
    # 1.2 s for 1M offers on 2 cores) and nothing needs it (see load_price_staged.sql). Set
    # outside the transaction, so an aborted one cannot stop the setting from being restored.
    ((order_kept,),) = con.execute("SELECT current_setting('preserve_insertion_order')").fetchall()
    con.execute("SET preserve_insertion_order = false")
    try:
        rejects_staged, rejects_note = _stage_scraper_rejects(con, summary)
        status, offers, rejected, error = _load_in_transaction(
            con, summary, feed, feed_note, crawl_id, rejects_staged, rejects_note
        )
    finally:
        con.execute("DROP TABLE IF EXISTS load_scraper_rejects")
        con.execute("SET preserve_insertion_order = $kept", {"kept": order_kept})
    return LoadResult(crawl_id, summary.platform, status, offers, rejected, error, already_loaded=False)


def _load_in_transaction(
    con: duckdb.DuckDBPyConnection,
    summary: CrawlSummary,
    feed: Path | None,
    feed_note: str | None,
    crawl_id: str,
    rejects_staged: bool,
    rejects_note: str | None,
) -> tuple[str, int, int, str | None]:
    """Load the feed (if any), the staged spider rejects (if any) and record the crawl in one
    transaction: (status, offers, records rejected by the loader and the spider, error)."""
    now = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    offers = rejected = scraper_rejected = 0
    con.execute("BEGIN TRANSACTION")
    try:
        if feed is not None:
            try:
                offers, rejected, feed_note = _load_feed(con, summary, feed, crawl_id, now)
            except _UnreadableFeed as exc:
                # The feed is unreadable as a whole: record the crawl as failed, load nothing.
                con.execute("ROLLBACK")
                con.execute("BEGIN TRANSACTION")
                feed_note = f"feed {feed} is unreadable: {exc}"
                offers = rejected = 0
        if rejects_staged:
            scraper_rejected = _inserted(
                con,
                "load_insert_scraper_rejects",
                crawl_id=crawl_id,
                platform=summary.platform,
                rejected_at=now,
            )
        status, error = _outcome(summary, offers, rejected, (feed_note, rejects_note))
        queries.execute(
            con,
            "load_record_crawl",
            crawl_id=crawl_id,
            platform=summary.platform,
            source=summary.source,
            status=status,
            error=error,
            started_at=summary.started_at,
            finished_at=summary.finished_at,
            items_yielded=summary.items_yielded,
            items_rejected=rejected + scraper_rejected,
            offers_loaded=offers,
            offline=summary.offline,
            source_file=str(feed or summary.path),
            loaded_at=now,
        )
        con.execute("COMMIT")
    except BaseException:
        with contextlib.suppress(duckdb.TransactionException):  # a failed COMMIT leaves none open
            con.execute("ROLLBACK")
        raise
    return status, offers, rejected + scraper_rejected, error

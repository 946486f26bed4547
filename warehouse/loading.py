"""Load one crawl (its summary JSON and JSONL feed) into the warehouse, in one transaction.

Public API (stable):
    load_crawl(con, summary) -> LoadResult   `summary`: a scrapers.crawl.summary.CrawlSummary, or its file
    LoadResult, SummaryError (scrapers.crawl.summary's)

Contract:
- crawl_id = sha256(platform + newline + feed_sha256), feed_sha256 being the sha256 of the feed's
  bytes as the runner computed it while counting the feed (one read; computed here when a summary
  lacks it); when there is no feed (null, missing or an empty file) it is the sha256 of
  platform + newline + the summary's bytes. Loading a crawl that is already in crawl_runs is a
  no-op (`LoadResult.already_loaded`).
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

Call it on the writer connection (`warehouse.engine.connect.writer`), one load at a time.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from scrapers.crawl.summary import WORKED_STATUSES, CrawlSummary, SummaryError, digest_feed
from warehouse import queries

__all__ = ["LoadResult", "SummaryError", "load_crawl"]
# How many kinds of rejection a crawl's error names (the commonest): enough to see a unit mistake.
REJECTION_KINDS_SHOWN = 3
# Column delimiter for re-reading unparsed lines verbatim: the record separator, a control
# character that valid JSON never contains unescaped, so a line never splits.
_LINE_DELIMITER = "\x1e"


class _UnreadableFeed(Exception):
    """DuckDB refused the feed itself (as opposed to a failure writing the warehouse)."""


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
    """sha256(platform, the feed's sha256); without a feed, of platform and the summary's bytes."""
    digest = hashlib.sha256(summary.platform.encode("utf-8") + b"\n")
    if feed is not None:
        known = summary.feed_sha256 if summary.feed == feed else None
        digest.update((known or digest_feed(feed).sha256).encode("ascii"))
    elif summary.path is not None:
        digest.update(summary.path.read_bytes())
    else:  # a summary never written: its content stands for it
        digest.update(repr(summary.to_json()).encode("utf-8"))
    return digest.hexdigest()


def _naive_utc(moment: dt.datetime | None) -> dt.datetime | None:
    """UTC wall time without zone, as the warehouse stores timestamps."""
    return moment.astimezone(dt.UTC).replace(tzinfo=None) if moment is not None else None


def _inserted(con: duckdb.DuckDBPyConnection, name: str, **params: Any) -> int:
    """Run a named INSERT and return how many rows it added."""
    ((rows,),) = con.execute(queries.sql(name), params).fetchall()
    return int(rows)


@dataclass(frozen=True)
class _FeedLoad:
    offers: int
    rejected: int
    reasons: str | None  # the commonest kinds of rejection, e.g. "absurd price ×12"
    note: str | None


def _load_feed(
    con: duckdb.DuckDBPyConnection, summary: CrawlSummary, feed: Path, crawl_id: str, now: dt.datetime
) -> _FeedLoad:
    """Stage, price and insert the feed's records: offers loaded, records rejected and why, a note.

    Raises _UnreadableFeed when DuckDB cannot read the feed at all (InvalidInputException of the
    two statements that read it); any other error, a full disk included, propagates.
    """
    params = {
        "feed": str(feed),
        "platform": summary.platform,
        "crawl_id": crawl_id,
        "source": summary.source,
        "started_at": _naive_utc(summary.started_at),  # with loaded_at: offers.run_day (run_day_of)
        "loaded_at": now,
    }
    try:
        queries.execute(con, "load/stage_feed", **params)
    except duckdb.InvalidInputException as exc:
        raise _UnreadableFeed(str(exc).splitlines()[0]) from exc
    ((unparsed,),) = con.execute("SELECT count(*) FROM load_staged WHERE unparsed").fetchall()
    rejected = 0
    note = None
    if unparsed:
        lines = {"crawl_id": crawl_id, "platform": summary.platform, "rejected_at": now}
        try:
            rejected += _inserted(
                con, "load/unparsed_lines", feed=str(feed), delimiter=_LINE_DELIMITER, **lines
            )
        except duckdb.InvalidInputException as exc:
            raise _UnreadableFeed(str(exc).splitlines()[0]) from exc
        rejected += _inserted(con, "load/unreadable_lines", **lines)
        con.execute("DROP TABLE load_unreadable_lines")
        con.execute("DROP TABLE load_unreadable_scans")
        if rejected != unparsed:  # both passes use DuckDB's JSON parser; say so if they ever disagree
            note = f"{unparsed} line(s) could not be parsed but {rejected} were found again as text"
    queries.execute(con, "fx/days")
    queries.execute(con, "fx/day_rates")
    queries.execute(con, "load/price_staged")
    offers = _inserted(con, "load/insert_offers")
    rejected += _inserted(con, "load/insert_rejected", rejected_at=now)
    kinds = con.execute(queries.sql("load/rejection_kinds"), {"shown": REJECTION_KINDS_SHOWN}).fetchall()
    queries.execute(con, "load/drop_staging")
    reasons = ", ".join(f"{kind} ×{count}" for kind, count in kinds) or None
    return _FeedLoad(offers, rejected, reasons, note)


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
        queries.execute(con, "load/stage_scraper_rejects", feed=str(path), delimiter=_LINE_DELIMITER)
    except (duckdb.InvalidInputException, duckdb.IOException) as exc:
        return False, f"rejected feed {path} is unreadable: {str(exc).splitlines()[0]}"
    return True, None


def _read_sources(summary: CrawlSummary) -> list[str] | None:
    """The addresses the crawl read whole (stats.read_sources), or None when its summary does not say."""
    found = summary.stats.get("read_sources")
    if not isinstance(found, list) or not all(isinstance(source, str) for source in found):
        return None
    return found


def _dated_ahead(con: duckdb.DuckDBPyConnection, summary: CrawlSummary, now: dt.datetime) -> str | None:
    """A note when the crawl says it ran after it was loaded (the crawling host's clock ahead): it
    then counts as crawled when it was loaded (usable_runs.crawled_at), never as newer than later crawls."""
    moment = _naive_utc(summary.finished_at or summary.started_at)
    if moment is None:
        return None
    ((ahead,),) = con.execute(queries.sql("load/dated_ahead"), {"at": moment, "loaded_at": now}).fetchall()
    if not ahead:
        return None
    return (
        f"crawl dated {moment:%Y-%m-%d %H:%M} UTC, after it was loaded at {now:%Y-%m-%d %H:%M} UTC "
        "(the crawling host's clock was ahead): counted as crawled when it was loaded"
    )


def _outcome(
    summary: CrawlSummary, offers: int, rejected: int, reasons: str | None, notes: tuple[str | None, ...]
) -> tuple[str, str | None]:
    """The status to record and the error text: the runner's error, then the loader's notes.

    `rejected`: the records the loader rejected. Quotes the spider rejected do not count here:
    the runner's status and error already judge them (an ok crawl may reject quotes by design).
    """
    status = summary.status
    loader_note = None
    if status in WORKED_STATUSES and offers == 0:
        status = "failed"
        why = f": {reasons}" if reasons else ""
        loader_note = f"no offers loaded ({summary.items_yielded} items yielded, {rejected} rejected{why})"
    elif rejected:
        status = "partial" if status == "ok" else status
        why = f" ({reasons})" if reasons else ""
        loader_note = f"{rejected} item(s) rejected{why}, see rejected_offers"
    parts = [part for part in (summary.error, *notes, loader_note) if part]
    return status, "; ".join(parts) or None


def load_crawl(con: duckdb.DuckDBPyConnection, summary: CrawlSummary | Path) -> LoadResult:
    """Load one crawl from its summary (or summary file) and the JSONL feed it names; see the module doc."""
    if not isinstance(summary, CrawlSummary):
        summary = CrawlSummary.read(Path(summary))
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
    # 1.2 s for 1M offers on 2 cores) and nothing needs it (see load/price_staged.sql). Set
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
    reasons: str | None = None
    voted = False  # the feed's offers went in, with their votes for the history rule
    con.execute("BEGIN TRANSACTION")
    try:
        if feed is not None:
            try:
                loaded = _load_feed(con, summary, feed, crawl_id, now)
                offers, rejected, reasons, feed_note = (
                    loaded.offers,
                    loaded.rejected,
                    loaded.reasons,
                    loaded.note,
                )
                voted = True
            except _UnreadableFeed as exc:
                # The feed is unreadable as a whole: record the crawl as failed, load nothing.
                con.execute("ROLLBACK")
                con.execute("BEGIN TRANSACTION")
                feed_note = f"feed {feed} is unreadable: {exc}"
                offers = rejected = 0
        if rejects_staged:
            scraper_rejected = _inserted(
                con,
                "load/insert_scraper_rejects",
                crawl_id=crawl_id,
                platform=summary.platform,
                rejected_at=now,
            )
        clock_note = _dated_ahead(con, summary, now)
        status, error = _outcome(summary, offers, rejected, reasons, (feed_note, rejects_note, clock_note))
        queries.execute(
            con,
            "load/record_crawl",
            crawl_id=crawl_id,
            platform=summary.platform,
            source=summary.source,
            status=status,
            error=error,
            started_at=_naive_utc(summary.started_at),
            finished_at=_naive_utc(summary.finished_at),
            items_yielded=summary.items_yielded,
            items_rejected=rejected + scraper_rejected,
            offers_loaded=offers,
            offline=summary.offline,
            source_file=str(feed or summary.path or summary.platform),
            loaded_at=now,
            read_sources=_read_sources(summary),
        )
        if voted:  # after the run is recorded: its votes count only if it worked
            queries.execute(con, "load/price_references")
        con.execute("COMMIT")
    except BaseException:
        with contextlib.suppress(duckdb.TransactionException):  # a failed COMMIT leaves none open
            con.execute("ROLLBACK")
        raise
    return status, offers, rejected + scraper_rejected, error

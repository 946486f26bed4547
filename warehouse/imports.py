"""Import files end to end: read one file, load each (platform, day) in it as a run of the warehouse.

Each (platform, day) becomes one `crawl_runs` row with source `import:<format>` and the
file's path as `source_file`; its offers carry the same source. The file is staged in DuckDB
(`ImportStaging`), so memory stays flat however long the file: a format read in
Python a chunk of rows at a time, each chunk's items written as a crawl feed is and read back by the
crawl loader's reader; a format read in SQL (observations) by its query, in one statement. Then the
whole file loads in one transaction (bulk: a file holds thousands of runs), through the crawl
loader's checks and pricing. A run's `crawl_id` hashes its content (the rows of that platform and
day, as the reader read them), so re-importing a file, or a newer version of an append-only file,
loads only the days that are new or changed.

Why a bulk path beside `warehouse.loading.load_crawl`: an observations file holds 3,305
(platform, day) runs; one `load_crawl` per run costs ~30-40 ms of DuckDB statements (staging,
pricing, inserts), over two minutes for one file. `load_imported` prices and inserts every run
of a file with a handful of statements, through the same checks and pricing (checked_offers, then
the crawl loader's load/price_staged.sql, after history/stage_imported.sql).
"""

from __future__ import annotations

import datetime as dt
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import duckdb
import pandas as pd

from scrapers.history.formats import Format
from scrapers.history.offers import (
    CHUNK_ROWS,
    MAX_COUNT,
    ImportedChunk,
    PlatformDay,
    ReadOptions,
    sorted_days,
)
from scrapers.history.paths import latest_real_day
from scrapers.history.platforms import platform_slug
from scrapers.items import OfferItem, feed_line
from warehouse import queries

# Columns of the frames `load_imported` takes (offers: any of OfferItem's fields, by name).
IMPORT_RUN_COLUMNS = ("crawl_id", "platform", "day", "items_yielded", "rows_refused", "problem")
IMPORT_REFUSED_COLUMNS = ("crawl_id", "platform", "raw", "reason")
# DuckDB settings while a file is staged and loaded: a bounded share of memory whatever the file's
# size (the rest spills to the temp directory), and no insertion order to keep, which lets large
# inserts stream. The connection's own values come back after.
IMPORT_SETTINGS = {"memory_limit": "1GB", "preserve_insertion_order": "false"}
_SET = {
    "memory_limit": "SET memory_limit = $value",
    "preserve_insertion_order": "SET preserve_insertion_order = $value",
}


@dataclass(frozen=True)
class FileReport:
    """What importing one file did. `error` is set when the file could not be read at all."""

    path: Path
    format: str
    runs: pd.DataFrame | None = None  # load_imported's answer: one row per (platform, day)
    rows_read: int = 0
    rows_not_gpu: int = 0
    rows_refused: int = 0
    refusals: tuple[str, ...] = ()  # the distinct reasons the reader gave
    error: str | None = None

    @property
    def offers_loaded(self) -> int:
        """Offers in the warehouse from this file's runs (including runs loaded by an earlier import)."""
        return 0 if self.runs is None else int(self.runs["offers_loaded"].sum())

    @property
    def failed_runs(self) -> pd.DataFrame:
        return self.runs[self.runs["status"] == "failed"] if self.runs is not None else pd.DataFrame()

    @property
    def ok(self) -> bool:
        """True when the file was read, every (platform, day) in it loaded offers and no row was refused."""
        loaded = self.runs is not None and not self.runs.empty and self.failed_runs.empty
        return self.error is None and loaded and self.rows_refused == 0


def import_file(
    con: duckdb.DuckDBPyConnection,
    file_format: Format,
    path: Path,
    *,
    observed_on: dt.date | None = None,
    platform: str | None = None,
    chunk_rows: int = CHUNK_ROWS,
) -> FileReport:
    """Import one file into the warehouse on `con` (the writer), read `chunk_rows` rows at a time.

    A file that cannot be read (missing, not this format, no date, a row the CSV parser cannot
    split), or whose load needs more than the import's DuckDB memory, gives a report with `error`
    and changes nothing. A file that reads but holds no offer
    for a (platform, day) it speaks for (a header-only catalog) loads that day as a failed run with
    the reason. What is stored does not depend on `chunk_rows`.
    """
    if not path.is_file():
        return FileReport(path=path, format=file_format.name, error=f"no such file: {path}")
    source = f"import:{file_format.name}"
    options = ReadOptions(observed_on, platform, chunk_rows)
    with ImportStaging(con) as staging:
        try:
            if file_format.sql_reader is not None:
                read = _stage_in_sql(staging, file_format.sql_reader, path, options)
            else:
                read = _stage_chunks(staging, file_format, path, options)
            days = sorted_days(read.days)
            loaded = staging.load(
                source, str(path.resolve()), [(known.platform, known.day) for known in days], read.problem
            )
        except (OSError, ValueError, pd.errors.ParserError) as exc:
            return FileReport(path=path, format=file_format.name, error=str(exc))
        except duckdb.InvalidInputException as exc:  # DuckDB's CSV reader: a row it cannot split
            return FileReport(path=path, format=file_format.name, error=_csv_error(path, exc))
        except duckdb.OutOfMemoryException as exc:  # staged in temp tables, loaded in one transaction
            limit = IMPORT_SETTINGS["memory_limit"]
            said = str(exc).splitlines()[0]
            error = (
                f"{path.name} needs more than the import's {limit} of DuckDB memory; nothing stored ({said})"
            )
            return FileReport(path=path, format=file_format.name, error=error)
    return FileReport(
        path=path,
        format=file_format.name,
        runs=loaded,
        rows_read=read.rows_read,
        rows_not_gpu=read.rows_not_gpu,
        rows_refused=read.rows_refused,
        refusals=tuple(sorted(read.reasons)),
        error=None if days else read.problem or f"{path.name}: nothing to import",
    )


def _stage_chunks(staging: ImportStaging, file_format: Format, path: Path, options: ReadOptions) -> _Tally:
    """Stage a file read in Python, a chunk at a time."""
    read = _Tally()
    for chunk in file_format.chunks(
        path, observed_on=options.observed_on, platform=options.platform, chunk_rows=options.chunk_rows
    ):
        read.add(chunk)
        refused = chunk.rejected.assign(
            day=chunk.rejected["day"].map(lambda day: day.isoformat() if pd.notna(day) else None)
        )
        staging.add(chunk.item_records(), refused)
    return read


def _stage_in_sql(staging: ImportStaging, reader: ModuleType, path: Path, options: ReadOptions) -> _Tally:
    """Stage a file its format reads in SQL: the names it holds resolved in Python first, once each."""
    columns = {name: "VARCHAR" for name in reader.check_header(path)}
    ((rows_in_file, providers, gpu_names),) = staging.con.execute(
        queries.sql(reader.NAMES_QUERY), {"path": str(path), "columns": columns}
    ).fetchall()
    tally = staging.execute(
        reader.QUERY,
        reader.lookups(providers or [], gpu_names or []),
        path=str(path),
        columns=columns,
        observed_on=options.observed_on,
        platform=platform_slug(options.platform) if options.platform else None,
        latest=latest_real_day(),
        max_count=MAX_COUNT,
    )
    return _Tally(
        rows_read=tally["rows_read"],
        rows_refused=tally["rows_refused"],
        days={PlatformDay(day["platform"], day["day"]) for day in tally["days"]},
        reasons=set(tally["reasons"]),
        problem=reader.problem(path, rows_in_file, tally["rows_read"]),
    )


def _csv_error(path: Path, exc: duckdb.InvalidInputException) -> str:
    """DuckDB's CSV error in one line: the file, the line and what was wrong with it (its message
    goes on with the line's text and advice meant for DuckDB's own options)."""
    said = [line.strip() for line in str(exc).splitlines() if line.strip()]
    what = [line for line in said[1:4] if not line.startswith(("Original Line", "Possible fixes"))]
    return "; ".join([f"{path.name}: {said[0] if said else exc}", *what[:1]])


@dataclass
class _Tally:
    """What the chunks of one file added up to."""

    rows_read: int = 0
    rows_not_gpu: int = 0
    rows_refused: int = 0
    days: set[PlatformDay] = field(default_factory=set)
    reasons: set[str] = field(default_factory=set)
    problem: str | None = None

    def add(self, chunk: ImportedChunk) -> None:
        self.rows_read += chunk.rows_read
        self.rows_not_gpu += chunk.rows_not_gpu
        self.rows_refused += len(chunk.rejected)
        self.days.update(chunk.days)
        self.reasons.update(chunk.rejected["reason"])
        self.problem = chunk.problem or self.problem


def load_imported(
    con: duckdb.DuckDBPyConnection,
    source: str,
    source_file: str,
    runs: pd.DataFrame,
    offers: pd.DataFrame,
    refused: pd.DataFrame,
) -> pd.DataFrame:
    """Load every run of one imported file, given as frames, in one transaction; runs already loaded
    are left as they are.

    `runs` (IMPORT_RUN_COLUMNS): one row per (platform, day), `crawl_id` a content hash so a
    re-import is a no-op; `offers`: a `crawl_id` and OfferItem fields by name (others are ignored),
    optionally `item_json`, the whole item as JSON, whose fields win (`extra` is read from it);
    `refused` (IMPORT_REFUSED_COLUMNS): rows the importer could not turn into items. `source` is
    `import:<format>`. Returns crawl_runs' row for every run, with `already_loaded`. Staged and
    loaded as `ImportStaging` stages and loads a file.
    """
    frames = {"import_frame_runs": runs, "import_frame_offers": offers, "import_frame_refused": refused}
    with ImportStaging(con) as staging:
        for name, frame in frames.items():
            con.register(name, frame)
        try:
            queries.execute(con, "history/import_frames")
        finally:
            for name in frames:
                con.unregister(name)
        return staging.load_staged(source, source_file)


def _load_import(con: duckdb.DuckDBPyConnection, source: str, source_file: str) -> pd.DataFrame:
    """The bulk load of the runs and rows staged in import_runs and import_rows."""
    now = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    existing = set(queries.frame(con, "history/runs_loaded")["crawl_id"])
    con.execute("BEGIN TRANSACTION")
    try:
        # Staged as a crawl is (checked_offers), then the crawl loader's statements: one rule set
        # for crawled and imported offers.
        queries.execute(con, "history/stage_imported", source=source)
        queries.execute(con, "fx/days")
        queries.execute(con, "fx/day_rates")
        queries.execute(con, "load/price_staged")
        queries.execute(con, "load/insert_offers")
        queries.execute(con, "load/insert_rejected", rejected_at=now)
        queries.execute(con, "history/insert_rejected", rejected_at=now)
        queries.execute(con, "history/record_runs", source=source, source_file=source_file, loaded_at=now)
        queries.execute(con, "load/drop_staging")
        queries.execute(con, "load/price_references")  # once the runs are recorded
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    result = queries.frame(con, "history/runs_loaded")
    result["already_loaded"] = result["crawl_id"].isin(existing)
    return result


class ImportStaging:
    """One imported file's rows, staged chunk by chunk in a DuckDB temp table, then loaded at once.

    A reader read in Python hands over a chunk at a time (`add`: its items written as a crawl feed
    is, read back by the crawl loader's reader), a reader in SQL stages the whole file in one
    statement (`execute`), so the process holds at most one chunk; DuckDB keeps the staged rows
    under IMPORT_SETTINGS' memory limit and spills the rest to its temp directory. `load` gives
    each (platform, day) its run and content-hashed `crawl_id` (history/import_runs.sql: the same
    id whatever the chunk size or row order) and loads every run in one transaction. Use as a
    context manager: the staging is dropped however it ends.
    """

    def __init__(self, con: duckdb.DuckDBPyConnection, feeds: Path | None = None) -> None:
        """`feeds`: the folder where `add` writes a chunk's feed (default: the system's temp folder)."""
        self.con = con
        self.feeds = feeds
        self._settings: dict[str, str] = {}

    def __enter__(self) -> ImportStaging:
        for name, value in IMPORT_SETTINGS.items():
            (current,) = self.con.execute("SELECT current_setting($name)", {"name": name}).fetchall()[0]
            self._settings[name] = str(current)
            self.con.execute(_SET[name], {"value": value})
        queries.execute(self.con, "history/import_staging")
        return self

    def __exit__(self, *exc: object) -> None:
        queries.execute(self.con, "history/import_drop")
        for name, value in self._settings.items():
            self.con.execute(_SET[name], {"value": value})

    def add(self, items: Iterable[OfferItem | Mapping[str, Any]], refused: pd.DataFrame) -> None:
        """Append one chunk: `items`, OfferItems or their fields as dicts (scrapers.items.feed_line
        writes each as a line of a crawl feed), and `refused` (platform, day, raw, reason)."""
        with tempfile.NamedTemporaryFile(
            "w", encoding="utf-8", suffix=".jsonl", dir=self.feeds, delete=False
        ) as feed:
            feed.writelines(feed_line(item) for item in items)
        self.con.register("import_chunk_refused", refused.loc[:, ["platform", "day", "raw", "reason"]])
        try:
            queries.execute(self.con, "history/import_items", feed=feed.name)
        finally:
            self.con.unregister("import_chunk_refused")
            Path(feed.name).unlink()

    def execute(self, query: str, frames: Mapping[str, pd.DataFrame], **params: Any) -> dict[str, Any]:
        """Stage a whole file with `query` (a reader in SQL), `frames` registered by name beside it;
        returns what it staged (history/import_tally.sql: rows_read, rows_refused, reasons, days)."""
        for name, frame in frames.items():
            self.con.register(name, frame)
        try:
            queries.execute(self.con, query, **params)
        finally:
            for name in frames:
                self.con.unregister(name)
        (tally,) = queries.records(self.con, "history/import_tally")
        return tally

    def load(
        self, source: str, source_file: str, days: Sequence[tuple[str, dt.date]], problem: str | None
    ) -> pd.DataFrame:
        """Load the staged rows as the runs of `days` ((platform, day), the first the file's first run,
        which rows that say neither belong to). Returns what `load_imported` returns."""
        if days:
            first_platform, first_day = days[0]
            queries.execute(
                self.con, "history/import_unplaced", platform=first_platform, day=first_day.isoformat()
            )
        day_frame = pd.DataFrame(
            {"platform": [platform for platform, _ in days], "day": [day.isoformat() for _, day in days]},
            dtype=object,
        )
        self.con.register("import_days", day_frame)
        try:
            queries.execute(self.con, "history/import_runs", source=source, problem=problem)
        finally:
            self.con.unregister("import_days")
        return self.load_staged(source, source_file)

    def load_staged(self, source: str, source_file: str) -> pd.DataFrame:
        """Load the staged rows under the runs in import_runs, in one transaction."""
        queries.execute(self.con, "history/import_views")
        return _load_import(self.con, source, source_file)

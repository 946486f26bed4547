"""Import files end to end: read one file, load each (platform, day) in it as a run of the warehouse.

Each (platform, day) becomes one `crawl_runs` row with source `import:<format>` and the
file's path as `source_file`; its offers carry the same source. The file is staged in DuckDB
(`warehouse.history.ImportStaging`), so memory stays flat however long the file: a format read in
Python a chunk of rows at a time, each chunk's items written as a crawl feed is and read back by the
crawl loader's reader; a format read in SQL (observations) by its query, in one statement. Then the
whole file loads in one transaction (bulk: a file holds thousands of runs), through the crawl
loader's checks and pricing. A run's `crawl_id` hashes its content (the rows of that platform and
day, as the reader read them), so re-importing a file, or a newer version of an append-only file,
loads only the days that are new or changed.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

import duckdb
import pandas as pd

from scrapers.history.formats import Format
from scrapers.history.offers import (
    CHUNK_ROWS,
    MAX_COUNT,
    ImportedChunk,
    PlatformDay,
    ReadOptions,
    records,
    sorted_days,
)
from scrapers.history.paths import latest_real_day
from scrapers.history.platforms import platform_slug
from warehouse import history, queries


@dataclass(frozen=True)
class FileReport:
    """What importing one file did. `error` is set when the file could not be read at all."""

    path: Path
    format: str
    runs: pd.DataFrame | None = None  # history.load_imported's answer: one row per (platform, day)
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
    with history.ImportStaging(con) as staging:
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
            limit = history.IMPORT_SETTINGS["memory_limit"]
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


def _stage_chunks(
    staging: history.ImportStaging, file_format: Format, path: Path, options: ReadOptions
) -> _Tally:
    """Stage a file read in Python, a chunk at a time."""
    read = _Tally()
    for chunk in file_format.chunks(
        path, observed_on=options.observed_on, platform=options.platform, chunk_rows=options.chunk_rows
    ):
        read.add(chunk)
        refused = chunk.rejected.assign(
            day=chunk.rejected["day"].map(lambda day: day.isoformat() if pd.notna(day) else None)
        )
        staging.add(records(chunk.items), refused)
    return read


def _stage_in_sql(
    staging: history.ImportStaging, reader: ModuleType, path: Path, options: ReadOptions
) -> _Tally:
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

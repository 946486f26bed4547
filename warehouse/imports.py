"""Import files end to end: read one file, load each (platform, day) in it as a run of the warehouse.

Each (platform, day) becomes one `crawl_runs` row with source `import:<format>` and the
file's path as `source_file`; its offers carry the same source. The whole file loads in
one transaction through `warehouse.history.load_imported` (bulk: a file holds thousands of
runs). A run's `crawl_id` hashes its content (the items and refused rows of that platform
and day), so re-importing a file, or a newer version of an append-only file, loads only
the days that are new or changed.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pandas as pd

from scrapers.history.formats import Format
from scrapers.history.offers import ImportedFile
from warehouse import history


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
) -> FileReport:
    """Import one file into the warehouse on `con` (the writer).

    A file that cannot be read (missing, not this format, no date) gives a report with
    `error` and changes nothing. A file that reads but holds no offer for a (platform, day)
    it speaks for (a header-only catalog) loads that day as a failed run with the reason.
    """
    if not path.is_file():
        return FileReport(path=path, format=file_format.name, error=f"no such file: {path}")
    try:
        imported = file_format.read(path, observed_on=observed_on, platform=platform)
    except (OSError, ValueError, pd.errors.ParserError) as exc:
        return FileReport(path=path, format=file_format.name, error=str(exc))
    runs, offers, refused = _frames(imported)
    loaded = history.load_imported(con, imported.source, str(path.resolve()), runs, offers, refused)
    return FileReport(
        path=path,
        format=file_format.name,
        runs=loaded,
        rows_read=imported.rows_read,
        rows_not_gpu=imported.rows_not_gpu,
        rows_refused=len(imported.rejected),
        refusals=tuple(sorted(set(imported.rejected["reason"]))),
        error=None if imported.days else imported.problem or f"{path.name}: nothing to import",
    )


def _frames(imported: ImportedFile) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The runs, offers and refused rows of `imported`, as `history.load_imported` takes them."""
    items = imported.items
    offers = items.drop(columns=["extra"]).assign(
        row_no=range(len(items)),
        item_json=items.to_json(orient="records", lines=True, force_ascii=False).splitlines()
        if len(items)
        else [],
        day=items["observed_at"].str.slice(0, 10),
    )
    refused = imported.rejected.assign(
        day=imported.rejected["day"].map(lambda day: day.isoformat() if pd.notna(day) else None)
    )
    if imported.days:  # rows that say no (platform, day) belong to the file's first run: kept, not dropped
        first = imported.days[0]
        refused = refused.fillna({"platform": first.platform, "day": first.day.isoformat()})
    lines = pd.concat(
        [
            offers[["platform", "day", "item_json"]].rename(columns={"item_json": "line"}).assign(refused=0),
            refused[["platform", "day", "raw"]].rename(columns={"raw": "line"}).assign(refused=1),
        ]
    )
    per_run = {
        (str(platform), str(day)): (
            len(group),
            int(group["refused"].sum()),
            _run_id(imported.source, (str(platform), str(day)), group["line"]),
        )
        for (platform, day), group in lines.groupby(["platform", "day"])
    }
    keys = [(platform_day.platform, platform_day.day.isoformat()) for platform_day in imported.days]
    nothing = (0, 0, None)
    runs = pd.DataFrame(
        {
            # object columns even with no run (a header-only file), so the merges below match types
            "platform": pd.Series([platform for platform, _ in keys], dtype=object),
            "day": pd.Series([day for _, day in keys], dtype=object),
            "items_yielded": [per_run.get(key, nothing)[0] for key in keys],
            "rows_refused": [per_run.get(key, nothing)[1] for key in keys],
            "crawl_id": [per_run.get(key, nothing)[2] or _run_id(imported.source, key, []) for key in keys],
            "problem": imported.problem,
        }
    )
    run_ids = runs[["platform", "day", "crawl_id"]]
    offers = offers.merge(run_ids, on=["platform", "day"], how="left")
    refused = refused.merge(run_ids, on=["platform", "day"], how="left")
    return runs.assign(day=pd.to_datetime(runs["day"]).dt.date), offers, refused


def _run_id(source: str, key: tuple[str, str], lines: Iterable[str]) -> str:
    """sha256 of source, platform, day and the run's sorted lines: one day imported twice is one run."""
    digest = hashlib.sha256("\n".join((source, *key)).encode())
    for line in sorted(lines):
        digest.update(b"\n" + line.encode())
    return digest.hexdigest()

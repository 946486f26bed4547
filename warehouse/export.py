"""The open daily dataset: each day of the warehouse as immutable files others can read without gpuplan.

Public API:
    export_days(con, folder, days=None) -> list[Exported]   write the days (default: every day)
    days_of_plan_day(con, day) -> list[date]   the days a daily run touched (what the asset exports)
    verify(folder) -> list[str]   every problem found (empty: every file matches its manifest)
    TABLES, dataset_days(con)

Layout of `folder` (hive partitions: `read_parquet('DIR/offers/*/*.parquet', hive_partitioning = true)`):

    offers/day=2026-12-02/offers.parquet        the current version of each table's day
    offers_csv/day=2026-12-02/offers.csv        the day's offers as CSV too, for people without Parquet
    price_history_daily/day=.../price_history_daily.parquet, cheapest_plans/..., plan_changes/...
    manifests/day=2026-12-02/manifest.json      the current version's manifest, written last
    versions/day=2026-12-02/v1/...              every version ever written, never changed or removed

A version is written whole into its own folder (files first, its manifest last, the folder renamed into
place), the current files are then pointed at it (a hard link each, swapped in with `os.replace`), and
the day's manifest is replaced last, as gpuhunt publishes its catalog: so a reader never meets a
manifest whose files are missing. A day whose files would come out byte for byte as the current
version's is left alone; any change makes a new version beside the old ones. Export costs what the
day holds: every query is of one day.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import re
import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from warehouse import queries

# Each table of the dataset: what its day is, and the named query of one day. Offers and their daily
# history are days of observation (UTC); plans are the schedule's days.
TABLES: dict[str, str] = {
    "offers": "observed_date (UTC)",
    "price_history_daily": "observed_date (UTC)",
    "cheapest_plans": "plan_date (GPUPLAN_SCHEDULE_TZ)",
    "plan_changes": "change_date (GPUPLAN_SCHEDULE_TZ)",
}
QUERIES: dict[str, str] = {
    "offers": "export/offers",
    "price_history_daily": "export/price_history_daily",
    "cheapest_plans": "export/cheapest_plans",
    "plan_changes": "export/plan_changes",
}
CSV_TABLES = ("offers",)
DATASET = "gpuplan daily GPU rental prices and training plans"
MANIFEST_FORMAT = 1
_CURRENCY = re.compile(r"(?:^|_)(usd|cny)(?:_|$)")
_PER = re.compile(r"_per_([a-z_]+)$")


@dataclass(frozen=True)
class Exported:
    day: dt.date
    version: int
    changed: bool  # False: the day's files were already the current version's, nothing was written
    rows: dict[str, int]


def price_unit(column: str) -> dict[str, str] | None:
    """The currency and unit of a price column, read from its name (units live in names: STYLE.md).

    `price_amount` is the price as quoted: its currency, what it is per and its billing period are the
    columns `price_currency`, `price_per` and `billing_period` of the same row."""
    if column == "price_amount":
        return {
            "currency": "column price_currency",
            "per": "column price_per (gpu or instance), for one column billing_period",
        }
    currency = _CURRENCY.search(column)
    if currency is None:
        return None
    per = _PER.search(column)
    return {
        "currency": currency.group(1).upper(),
        "per": per.group(1).replace("_", " ") if per else "total (see the column's name)",
    }


def _parquet_rows(con: duckdb.DuckDBPyConnection, path: Path) -> int:
    """The rows of a Parquet file (from its footer: DuckDB reads no data for a count)."""
    ((rows,),) = con.execute("SELECT count(*) FROM read_parquet($path)", {"path": str(path)}).fetchall()
    return int(rows)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _day_folder(day: dt.date) -> str:
    return f"day={day.isoformat()}"


def _current(folder: Path, table: str, day: dt.date, suffix: str = "parquet") -> Path:
    """The current file of a table's day; CSV in a folder of its own, so that a table's folder is
    all Parquet (pandas and pyarrow read a folder whole)."""
    base = table if suffix == "parquet" else f"{table}_{suffix}"
    return folder / base / _day_folder(day) / f"{table}.{suffix}"


def _manifest_path(folder: Path, day: dt.date) -> Path:
    return folder / "manifests" / _day_folder(day) / "manifest.json"


def _read_manifest(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))  # type: ignore[no-any-return]
    except FileNotFoundError:
        return None


def _write_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)


def _point(current: Path, version_file: Path) -> None:
    """Make `current` the version's file: a hard link (a copy where links are refused), swapped in whole."""
    current.parent.mkdir(parents=True, exist_ok=True)
    temporary = current.with_name(f".{current.name}.{os.getpid()}.tmp")
    temporary.unlink(missing_ok=True)
    try:
        os.link(version_file, temporary)
    except OSError:
        shutil.copyfile(version_file, temporary)
    os.replace(temporary, current)


def dataset_days(con: duckdb.DuckDBPyConnection) -> list[dt.date]:
    return [row["day"] for row in queries.records(con, "export/days")]


def days_of_plan_day(con: duckdb.DuckDBPyConnection, day: dt.date) -> list[dt.date]:
    """What the daily run of `day` touched: the plan day and the UTC days its crawls observed."""
    return [row["day"] for row in queries.records(con, "export/days_of_plan_day", day=day)]


def _versions(con: duckdb.DuckDBPyConnection) -> tuple[int, str]:
    """(schema version: the newest migration applied, methodology version: a hash of every view and
    macro the warehouse applies, i.e. its rules of prices, stock and plans)."""
    ((schema,),) = con.execute("SELECT max(version) FROM schema_migrations").fetchall()
    rules = con.execute("SELECT name, sha256 FROM schema_definitions ORDER BY name").fetchall()
    methodology = hashlib.sha256(json.dumps(rules).encode()).hexdigest()[:16]
    return int(schema or 0), methodology


def _write_files(con: duckdb.DuckDBPyConnection, day: dt.date, into: Path) -> list[dict[str, Any]]:
    """Each table's day as Parquet (the query runs once), and the CSV ones read back from that file."""
    files = []
    for table in TABLES:
        relation = con.sql(queries.sql(QUERIES[table]), params={"day": day})
        columns = [
            {"name": name, "type": str(kind), **({"unit": unit} if (unit := price_unit(name)) else {})}
            for name, kind in zip(relation.columns, relation.types, strict=True)
        ]
        parquet = into / f"{table}.parquet"
        relation.write_parquet(str(parquet), compression="zstd")
        written = [parquet]
        if table in CSV_TABLES:
            written.append(into / f"{table}.csv")
            con.read_parquet(str(parquet)).write_csv(str(written[-1]), header=True)
        rows = _parquet_rows(con, parquet)
        for path in written:
            files.append(
                {
                    "table": table,
                    "format": path.suffix[1:],
                    "day_is": TABLES[table],
                    "name": path.name,
                    "rows": int(rows),
                    "sha256": _sha256(path),
                    "columns": columns,
                }
            )
    return files


def _export_day(con: duckdb.DuckDBPyConnection, folder: Path, day: dt.date, made_at: str) -> Exported:
    previous = _read_manifest(_manifest_path(folder, day))
    versions = folder / "versions" / _day_folder(day)
    staging = versions / f".staging-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    try:
        files = _write_files(con, day, staging)
        if previous is not None and [(f["name"], f["sha256"]) for f in previous["files"]] == [
            (f["name"], f["sha256"]) for f in files
        ]:
            return Exported(day, int(previous["version"]), False, _rows(files))
        version = 1 + max((int(p.name[1:]) for p in versions.glob("v[0-9]*")), default=0)
        schema, methodology = _versions(con)
        manifest = {
            "format": MANIFEST_FORMAT,
            "dataset": DATASET,
            "day": day.isoformat(),
            "version": version,
            "supersedes": previous["version"] if previous else None,
            "made_at": made_at,
            "schema_version": schema,
            "methodology_version": methodology,
            "platforms": queries.records(con, "export/platforms", day=day),
            "files": [
                {
                    **entry,
                    "path": f"versions/{_day_folder(day)}/v{version}/{entry['name']}",
                    "current_path": _current(Path(), entry["table"], day, entry["format"]).as_posix(),
                }
                for entry in files
            ],
        }
        (staging / "manifest.json").write_text(json.dumps(manifest, indent=1, default=str), encoding="utf-8")
        final = versions / f"v{version}"
        os.rename(staging, final)  # the whole version at once; never over an existing one
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    for entry in files:
        _point(_current(folder, entry["table"], day, entry["format"]), final / entry["name"])
    _write_atomically(_manifest_path(folder, day), (final / "manifest.json").read_text(encoding="utf-8"))
    return Exported(day, version, True, _rows(files))


def _rows(files: list[dict[str, Any]]) -> dict[str, int]:
    return {f["table"]: int(f["rows"]) for f in files if f["format"] == "parquet"}


def export_days(
    con: duckdb.DuckDBPyConnection, folder: Path, days: Iterable[dt.date] | None = None
) -> list[Exported]:
    """Write each of `days` (default: every day with offers or plans) into `folder`, oldest first."""
    made_at = dt.datetime.now(dt.UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
    chosen = sorted(set(days)) if days is not None else dataset_days(con)
    return [_export_day(con, folder, day, made_at) for day in chosen]


def verify(folder: Path) -> list[str]:
    """Every problem with `folder`: a file missing, or whose sha256 or row count is not its manifest's."""
    problems: list[str] = []
    manifests = sorted(folder.glob("versions/day=*/v*/manifest.json"))
    current = {p.parent.name: p for p in folder.glob("manifests/day=*/manifest.json")}
    if not manifests:
        return [f"{folder}: no manifest (not a gpuplan dataset, or nothing exported yet)"]
    for path in manifests:
        manifest = json.loads(path.read_text(encoding="utf-8"))
        for entry in manifest["files"]:
            _check(folder / entry["path"], entry, problems)
    for day_folder, path in sorted(current.items()):
        manifest = json.loads(path.read_text(encoding="utf-8"))
        if not (folder / "versions" / day_folder / f"v{manifest['version']}" / "manifest.json").is_file():
            problems.append(f"{path}: version {manifest['version']} is not under versions/")
        for entry in manifest["files"]:
            _check(folder / entry["current_path"], entry, problems)
    return problems


def _check(path: Path, entry: dict[str, Any], problems: list[str]) -> None:
    if not path.is_file():
        problems.append(f"{path}: missing")
        return
    if _sha256(path) != entry["sha256"]:
        problems.append(f"{path}: sha256 differs from its manifest's")
        return
    if entry["format"] == "parquet":
        with duckdb.connect() as con:
            rows = _parquet_rows(con, path)
        if rows != entry["rows"]:
            problems.append(f"{path}: {rows} rows, its manifest says {entry['rows']}")

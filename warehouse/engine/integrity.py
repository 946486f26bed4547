"""Is this file a whole, readable warehouse? Every block checked, without trusting a query to touch it.

Public API (stable):
    check_file(path) -> FileCheck      the verdict on one DuckDB file (published, writer, previous)
    describe(path) -> str              what a file that is not a DuckDB database is ("an empty file", ...)
    read_stamp(con) -> Stamp | None    the warehouse_stamp row of an open warehouse (migration 060)
    FileCheck, Stamp, SAFE_CONFIG, first_line

Why the blocks are checked here: DuckDB opens a file with a damaged block and fails only when a
query reads that block (a load that touched other blocks once published the damage over the
only good snapshot). So `check_file` checks every block's checksum itself (`warehouse.engine.blocks`:
a block in use that fails is damage, index blocks included, which no query scan reads), then opens
the file read-only and reads its catalog, stamp and row counts. Where the block check cannot vouch
for the file (another storage version, a free list it cannot read) DuckDB decides: every column of
every table is read, and DuckDB verifies each block it reads (~4x slower than the block check).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

import duckdb

from warehouse.engine import blocks

# What other files people leave where a DuckDB file should be (first bytes -> what it is).
_SIGNATURES = (
    (b"SQLite format 3\x00", "a SQLite database"),
    (b"PK\x03\x04", "a zip archive"),
    (b"\x1f\x8b", "a gzip file"),
    (b"PAR1", "a Parquet file"),
    (b"version https://git-lfs", "a Git LFS pointer"),
)


@dataclass(frozen=True)
class Stamp:
    """The warehouse_stamp row (migration 060): which writer session wrote this file."""

    generation: int  # writer sessions counted; a published copy carries its writer's
    written_at: dt.datetime | None


@dataclass(frozen=True)
class FileCheck:
    """The verdict on one file. `good`: every block intact and the catalog readable."""

    path: Path
    exists: bool
    good: bool
    problem: str | None  # why it is not good, one line
    stamp: Stamp | None
    size_bytes: int
    blocks: int

    @property
    def generation(self) -> int | None:
        return self.stamp.generation if self.stamp else None


def describe(path: Path) -> str:
    """What `path` is, for a message: 'an empty file', 'a SQLite database', 'text', 'a DuckDB file'..."""
    try:
        if path.is_dir():
            return "a folder"
        if not path.is_file():
            return "not a regular file"
        with path.open("rb") as handle:
            head = handle.read(64)
    except OSError as exc:
        return f"unreadable ({exc.strerror or exc})"
    if not head:
        return "an empty file"
    if blocks.is_duckdb(head):
        return "a DuckDB file"
    for signature, kind in _SIGNATURES:
        if head.startswith(signature):
            return kind
    try:
        head.decode("utf-8")
    except UnicodeDecodeError:
        return "binary data that is not a DuckDB database"
    return "a text file"


def read_stamp(con: duckdb.DuckDBPyConnection) -> Stamp | None:
    """The stamp of the warehouse open on `con`; None before migration 060 (an older gpuplan)."""
    try:
        rows = con.execute("SELECT generation, written_at FROM warehouse_stamp").fetchall()
    except duckdb.CatalogException:
        return None
    return Stamp(int(rows[0][0]), rows[0][1]) if rows else None


def check_file(path: Path) -> FileCheck:
    """Check every block of `path` and open it read-only; never raises for a damaged file."""
    if not path.exists():
        return FileCheck(path, False, False, "missing", None, 0, 0)
    size = path.stat().st_size
    kind = describe(path)
    if kind != "a DuckDB file":
        return FileCheck(path, True, False, f"{kind}, not a DuckDB database", None, size, 0)
    checked, problem = blocks.check_blocks(path, size)
    if problem is not None:
        return FileCheck(path, True, False, problem, None, size, checked)
    stamp, problem = _open_and_read(path, scan_every_block=checked < 0)
    return FileCheck(path, True, problem is None, problem, stamp, size, abs(checked))


def _open_and_read(path: Path, *, scan_every_block: bool) -> tuple[Stamp | None, str | None]:
    """Open read-only, read the catalog, the stamp and every table's row count; with
    `scan_every_block`, read every column of every table too (DuckDB verifies each block read)."""
    try:
        con = duckdb.connect(str(path), read_only=True, config=SAFE_CONFIG)
    except duckdb.Error as exc:
        return None, f"DuckDB cannot open it: {first_line(exc)}"
    try:
        if scan_every_block:
            ((used, block_bytes),) = con.execute(
                "SELECT used_blocks, block_size FROM pragma_database_size() "
                "WHERE database_name = current_database()"
            ).fetchall()
            present = (path.stat().st_size - blocks.HEADER_BYTES) // block_bytes
            if present < used:
                return None, f"cut short: {present} blocks in the file, {used} in use"
        tables = con.execute(
            "SELECT schema_name, table_name FROM duckdb_tables() WHERE NOT temporary ORDER BY ALL"
        ).fetchall()
        for schema, table in tables:
            name = {"name": f"{schema}.{table}"}
            con.execute("SELECT count(*) FROM query_table($name)", name).fetchall()
            if scan_every_block:
                # hash reads every value of every column (count(column) may answer from statistics)
                con.execute("SELECT bit_xor(hash(COLUMNS(*))) FROM query_table($name)", name).fetchall()
        return read_stamp(con), None
    except duckdb.Error as exc:
        return None, f"a block is damaged: {first_line(exc)}"
    finally:
        con.close()


# No network, ever: a file that is not DuckDB's must not make DuckDB fetch an extension for it.
SAFE_CONFIG: dict[str, str | bool | int | float | list[str]] = {
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
}


def first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__

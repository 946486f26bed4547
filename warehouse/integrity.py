"""Is this file a whole, readable warehouse? Every block checked, without trusting a query to touch it.

Public API (stable):
    check_file(path, compare_with=None) -> FileCheck
        the verdict on one DuckDB file (published, writer, previous); with `compare_with`, also
        which of its blocks differ from that file's (what an in-place publish must write)
    describe(path) -> str              what a file that is not a DuckDB database is ("an empty file", ...)
    read_stamp(con) -> Stamp | None    the warehouse_stamp row of an open warehouse (migration 060)
    FileCheck, Stamp

Why the blocks are checked here: DuckDB opens a file with a damaged block and fails only when a
query reads that block (issue 14: a load that touched other blocks published the damage over the
only good snapshot). DuckDB stores an 8-byte checksum at the start of every block and of each
header page, and verifies it when it reads one; `check_file` computes the same checksum over the
whole file (every block of the active header's block count, free ones included, which keep the
checksum of their last write; when it compares the file with the previous snapshot, for an
in-place publish, only the blocks that differ from that verified file), then opens the file
read-only and reads its catalog and stamp. The
checksum is a multiply-xor over 64-bit words (DuckDB's `Checksum` in src/common/checksum.cpp),
~0.1 s for 300 MB with numpy; a DuckDB scan of every column of every table takes ~1 s. The layout
is DuckDB's storage format, so it is calibrated against a file the installed DuckDB writes itself
(`_layout`): another storage version falls back to the DuckDB scan, and a block the fast check
doubts is judged by that scan too, so the fast check can only ever make the verdict faster.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import mmap
import os
import struct
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, BinaryIO

import duckdb

HEADER_PAGE_BYTES = 4096  # DuckDB's file header: one main header, then two database headers
HEADER_BYTES = 3 * HEADER_PAGE_BYTES
_MAGIC = b"DUCK"
_MAGIC_OFFSET = 8  # after the main header's checksum
_CHECKSUM_SEED = 5381
_CHECKSUM_FACTOR = 0xBF58476D1CE4E5B9
_WORD = struct.Struct("<Q")
_DB_HEADER = struct.Struct("<5Q")  # iteration, meta block, free list, block count, block size
_CHUNK_BLOCKS = 64  # 16 MB read at a time: bounded memory, few system calls
_METADATA_SUB_BLOCKS = 64  # DuckDB's MetadataManager::METADATA_BLOCK_COUNT
_NO_BLOCK = 2**64 - 1  # an invalid block pointer
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
    differing: tuple[int, ...] | None = None  # blocks unlike `compare_with`'s; None: not compared

    @property
    def generation(self) -> int | None:
        return self.stamp.generation if self.stamp else None


@dataclass(frozen=True)
class _Layout:
    version: bytes  # the storage version field as the installed DuckDB writes it
    block_bytes: int


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
    if head[_MAGIC_OFFSET : _MAGIC_OFFSET + len(_MAGIC)] == _MAGIC:
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


def check_file(path: Path, compare_with: Path | None = None) -> FileCheck:
    """Check every block of `path` and open it read-only; never raises for a damaged file.

    `compare_with`: another file read alongside, block for block, to list the blocks of `path`
    that differ from it (`FileCheck.differing`; None when the fast check could not run). It must
    be a file verified before (the previous snapshot): blocks equal to its blocks are not
    checksummed again.
    """
    if not path.exists():
        return FileCheck(path, False, False, "missing", None, 0, 0)
    size = path.stat().st_size
    kind = describe(path)
    if kind != "a DuckDB file":
        return FileCheck(path, True, False, f"{kind}, not a DuckDB database", None, size, 0)
    differing: list[int] | None = [] if compare_with is not None else None
    blocks, problem = _check_blocks(path, size, compare_with, differing)
    if problem is not None:
        return FileCheck(path, True, False, problem, None, size, blocks)
    stamp, problem = _open_and_read(path, scan_every_block=blocks < 0)
    compared = tuple(differing) if differing is not None and blocks > 0 else None
    return FileCheck(path, True, problem is None, problem, stamp, size, abs(blocks), compared)


@cache
def _layout() -> _Layout:
    """The header version and block size of a file the installed DuckDB writes now."""
    with tempfile.TemporaryDirectory(prefix="gpuplan-layout-") as folder:
        probe = Path(folder) / "probe.duckdb"
        with duckdb.connect(str(probe)) as con:
            con.execute("CREATE TABLE probe AS SELECT 1 AS x")
        header = probe.read_bytes()[:HEADER_BYTES]
    _, block_bytes = _active_header(header)
    return _Layout(header[_MAGIC_OFFSET : _MAGIC_OFFSET + 12], block_bytes)


def _checksum(payload: bytes) -> int:
    """DuckDB's checksum of a header page's payload (a multiple of 8 bytes)."""
    result = _CHECKSUM_SEED
    for (word,) in _WORD.iter_unpack(payload):
        result ^= (word * _CHECKSUM_FACTOR) & 0xFFFFFFFFFFFFFFFF
    return result


def _active_header(header: bytes) -> tuple[int, int]:
    """(block count, block size) of the newer valid database header; raises ValueError if none."""
    block_count, block_bytes, _ = _active_header_fields(header)
    return block_count, block_bytes


def _active_header_fields(header: bytes) -> tuple[int, int, int]:
    """(block count, block size, free list pointer) of the newer valid database header."""
    best: tuple[int, int, int, int] | None = None
    for page in (1, 2):
        raw = header[page * HEADER_PAGE_BYTES : (page + 1) * HEADER_PAGE_BYTES]
        if len(raw) < HEADER_PAGE_BYTES or _WORD.unpack_from(raw)[0] != _checksum(raw[8:]):
            continue
        iteration, _, free_list, block_count, block_bytes = _DB_HEADER.unpack_from(raw, 8)
        if best is None or iteration > best[0]:
            best = (iteration, block_count, block_bytes, free_list)
    if best is None:
        raise ValueError("both database headers are damaged")
    return best[1], best[2], best[3]


def _free_blocks(handle: BinaryIO, free_list: int, block_count: int, block_bytes: int) -> set[int] | None:
    """The ids of the file's free blocks, read from its free list; None if it cannot be read.

    DuckDB trims free blocks off the end of the file at a checkpoint but keeps counting them in
    the header, so a file shorter than its block count is whole exactly when every block past its
    end is free. The free list is DuckDB's metadata (SingleFileBlockManager::LoadFreeList): at the
    header's pointer (block id in the low 56 bits, sub-block in the high 8), a chain of 64 metadata
    sub-blocks per block, each an 8-byte pointer to the next and then data, the data being a u64
    count and that many i64 block ids. Anything unexpected gives None: the DuckDB scan decides.
    """
    if free_list == _NO_BLOCK:
        return set()
    sub_block = (block_bytes - 8) // _METADATA_SUB_BLOCKS // 8 * 8
    data = b""
    pointer = free_list
    wanted = 8
    for _ in range(block_count * _METADATA_SUB_BLOCKS):  # bounded: a cycle cannot loop for ever
        block, index = pointer & (2**56 - 1), pointer >> 56
        if block >= block_count or index >= _METADATA_SUB_BLOCKS:
            return None
        handle.seek(HEADER_BYTES + block * block_bytes + 8 + index * sub_block)
        raw = handle.read(sub_block)
        if len(raw) < sub_block:
            return None
        data += raw[8:]
        if len(data) >= 8:
            wanted = 8 + 8 * _WORD.unpack_from(data)[0]
            if wanted > 8 + 8 * block_count:
                return None
        if len(data) >= wanted:
            ids = struct.unpack_from(f"<{(wanted - 8) // 8}q", data, 8)
            return set(ids) if all(0 <= block_id < block_count for block_id in ids) else None
        pointer = _WORD.unpack_from(raw)[0]
        if pointer == _NO_BLOCK:
            return None
    return None


def _check_blocks(
    path: Path, size: int, compare_with: Path | None = None, differing: list[int] | None = None
) -> tuple[int, str | None]:
    """(blocks checked, problem). A negative count: the fast check could not vouch for the file
    (another storage format, a block it doubts, or a file shorter than its header's block count,
    which DuckDB leaves when it trims free blocks off the end): the DuckDB scan must decide."""
    with path.open("rb") as handle:
        header = handle.read(HEADER_BYTES)
        if len(header) < HEADER_BYTES:
            return 0, f"cut short: {size} bytes, less than a DuckDB header"
        if _WORD.unpack_from(header)[0] != _checksum(header[8:HEADER_PAGE_BYTES]):
            return 0, "its main header is damaged"
        try:
            block_count, block_bytes, free_list = _active_header_fields(header)
        except ValueError as exc:
            return 0, str(exc)
        layout = _layout()
        if header[_MAGIC_OFFSET : _MAGIC_OFFSET + 12] != layout.version or block_bytes != layout.block_bytes:
            return -block_count, None
        present = min(block_count, (size - HEADER_BYTES) // block_bytes)
        if present < block_count:
            free = _free_blocks(handle, free_list, block_count, block_bytes)
            if free is not None and not set(range(present, block_count)) <= free:
                missing = sorted(set(range(present, block_count)) - free)
                return 0, f"cut short: {size:,} bytes, without blocks in use from {missing[0]} on"
            if free is not None:
                block_count = present  # what is past the end is free: trimmed by DuckDB
            handle.seek(HEADER_BYTES)
        if compare_with is not None and differing is not None:
            with compare_with.open("rb") as other:
                checked, problem = _compared_checksums(handle, other, present, block_bytes, differing)
        else:
            checked, problem = _block_checksums(handle, present, block_bytes)
        if problem is None and present < block_count:
            return -abs(checked) or -1, None
        return checked, problem


def _doubted(blocks: Any) -> int:
    """How many rows of `blocks` (a writable uint64 array, one block a row; overwritten) do not
    carry DuckDB's checksum of their payload in their first word."""
    import numpy as np

    stored = blocks[:, 0].copy()
    blocks[:, 0] = 0  # the stored checksum is not part of the payload; 0 * factor adds nothing
    with np.errstate(over="ignore"):
        np.multiply(blocks, np.uint64(_CHECKSUM_FACTOR), out=blocks)
    computed = np.bitwise_xor.reduce(blocks, axis=1) ^ np.uint64(_CHECKSUM_SEED)
    return int(np.count_nonzero(computed != stored))


def _block_checksums(handle: BinaryIO, block_count: int, block_bytes: int) -> tuple[int, str | None]:
    """Checksum `block_count` blocks from `handle`'s position."""
    import numpy as np  # only when a file is checked: commands that never write stay light

    chunk = np.empty((_CHUNK_BLOCKS, block_bytes // 8), dtype=np.uint64)
    doubted = 0
    done = 0
    while done < block_count:
        count = min(_CHUNK_BLOCKS, block_count - done)
        view = chunk[:count]
        read = handle.readinto(view.data.cast("B"))  # type: ignore[attr-defined]
        if read != count * block_bytes:
            return done, f"cut short at block {done}"
        doubted += _doubted(view)
        done += count
    return (-block_count if doubted else block_count), None


def _compared_checksums(
    handle: BinaryIO, other: BinaryIO, block_count: int, block_bytes: int, differing: list[int]
) -> tuple[int, str | None]:
    """Compare `block_count` blocks of `handle` with `other`'s, appending to `differing` each block
    whose bytes differ (or that `other` lacks), and checksum only those.

    A block byte for byte equal to one of `other`, a snapshot verified when it was published (the
    `.prev` an in-place publish writes over), has that block's checksum, already found good. The
    files are mapped a chunk at a time, not read: a publish reads the writer file and the `.prev`
    whole (the part of its cost that grows with history, issue 16), and a mapping spares copying
    both into buffers; one chunk at a time keeps the mapped pages, which count in the process's
    RSS, to 2 x _CHUNK_BLOCKS blocks. They are the writer's own files, under its locks, so neither
    is cut while it is mapped.
    """
    size = os.fstat(handle.fileno()).st_size
    if size < HEADER_BYTES + block_count * block_bytes:
        return 0, f"cut short at block {max(0, (size - HEADER_BYTES) // block_bytes)}"
    theirs = max(0, (os.fstat(other.fileno()).st_size - HEADER_BYTES) // block_bytes)
    doubted = 0
    for done in range(0, block_count, _CHUNK_BLOCKS):
        count = min(_CHUNK_BLOCKS, block_count - done)
        common = max(0, min(count, theirs - done))
        offset = HEADER_BYTES + done * block_bytes  # a multiple of the page size, as mmap needs
        with (
            _mapped(handle, offset, count * block_bytes) as mine,
            _mapped(other, offset, common * block_bytes) as yours,
        ):
            changed = _changed_blocks(mine, yours, count, common, block_bytes)
            differing.extend(done + index for index in changed)
            if changed and mine is not None:
                doubted += _doubted(_blocks(mine, block_bytes)[changed])  # a writable copy of those
    return (-block_count if doubted else block_count), None


@contextmanager
def _mapped(handle: BinaryIO, offset: int, length: int) -> Iterator[mmap.mmap | None]:
    """`length` bytes of `handle` from `offset`, mapped read-only (None for none)."""
    if length == 0:
        yield None
        return
    flags = mmap.MAP_SHARED | getattr(mmap, "MAP_POPULATE", 0)
    mapping = mmap.mmap(handle.fileno(), length, flags=flags, prot=mmap.PROT_READ, offset=offset)
    try:
        yield mapping
    finally:
        with contextlib.suppress(BufferError):  # an array still points into it (after an error)
            mapping.close()


def _blocks(mapping: mmap.mmap, block_bytes: int) -> Any:
    import numpy as np

    return np.frombuffer(mapping, dtype=np.uint64).reshape(-1, block_bytes // 8)


def _changed_blocks(
    mine: mmap.mmap | None, yours: mmap.mmap | None, count: int, common: int, block_bytes: int
) -> list[int]:
    """Indexes of the `count` blocks of `mine` that differ from `yours` (which has `common`)."""
    import numpy as np

    if mine is None:
        return []
    same = np.zeros(count, dtype=bool)
    if yours is not None:
        same[:common] = np.all(_blocks(mine, block_bytes)[:common] == _blocks(yours, block_bytes), axis=1)
    return [int(index) for index in np.flatnonzero(~same)]


def block_bytes() -> int:
    """The block size of the files the installed DuckDB writes (a file whose blocks `check_file`
    compared has this block size)."""
    return _layout().block_bytes


def open_check(path: Path) -> tuple[Stamp | None, str | None]:
    """(stamp, problem): open `path` read-only and read its catalog, stamp and row counts."""
    return _open_and_read(path, scan_every_block=False)


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
            present = (path.stat().st_size - HEADER_BYTES) // block_bytes
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

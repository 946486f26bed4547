"""DuckDB's file layout, read by us: the header, every block's checksum and the free list.
`warehouse.engine.integrity` gives the verdict on a file from what this finds.

Why we read it ourselves: DuckDB stores an 8-byte checksum at the start of every block and
verifies it when it reads one, but no query reads every block. A primary-key index is read
lazily, by the next insert, not by a scan: a damaged index block passes a read of every column of
every table (tests/warehouse/test_blocks.py) and DuckDB 2.0 offers no statement that verifies a
whole file. So `check_blocks` computes DuckDB's checksum (a multiply-xor over 64-bit words,
`Checksum` in src/common/checksum.cpp) over every block of the active header's block count, with
numpy: ~4x faster than DuckDB's scan of every column, which misses the index blocks anyway.
A block whose checksum fails is damage when it is in use, whatever it holds, and nothing when it
is free (DuckDB overwrites a free block whole). The layout is DuckDB's storage format, so it is
calibrated against a file the installed DuckDB writes itself (`layout`): another storage version,
a file shorter than its block count whose free list cannot be read, or a failed block with no
readable free list to judge it by, is left to the DuckDB scan (`integrity`).
"""

from __future__ import annotations

import struct
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, BinaryIO

import duckdb

HEADER_PAGE_BYTES = 4096  # DuckDB's file header: one main header, then two database headers
HEADER_BYTES = 3 * HEADER_PAGE_BYTES
MAGIC = b"DUCK"
MAGIC_OFFSET = 8  # after the main header's checksum
_CHECKSUM_SEED = 5381
_CHECKSUM_FACTOR = 0xBF58476D1CE4E5B9
_WORD = struct.Struct("<Q")
_DB_HEADER = struct.Struct("<5Q")  # iteration, meta block, free list, block count, block size
_CHUNK_BLOCKS = 64  # 16 MB read at a time: bounded memory, few system calls
_METADATA_SUB_BLOCKS = 64  # DuckDB's MetadataManager::METADATA_BLOCK_COUNT
_NO_BLOCK = 2**64 - 1  # an invalid block pointer


def is_duckdb(head: bytes) -> bool:
    """Whether the first bytes of a file are a DuckDB file's."""
    return head[MAGIC_OFFSET : MAGIC_OFFSET + len(MAGIC)] == MAGIC


@dataclass(frozen=True)
class Layout:
    version: bytes  # the storage version field as the installed DuckDB writes it
    block_bytes: int


@cache
def layout() -> Layout:
    """The header version and block size of a file the installed DuckDB writes now."""
    with tempfile.TemporaryDirectory(prefix="gpuplan-layout-") as folder:
        probe = Path(folder) / "probe.duckdb"
        with duckdb.connect(str(probe)) as con:
            con.execute("CREATE TABLE probe AS SELECT 1 AS x")
        header = probe.read_bytes()[:HEADER_BYTES]
    _, block_bytes = _active_header(header)
    return Layout(header[MAGIC_OFFSET : MAGIC_OFFSET + 12], block_bytes)


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


def _free_blocks(
    handle: BinaryIO, free_list: int, block_count: int, block_bytes: int
) -> tuple[set[int], set[int]] | None:
    """(the ids of the file's free blocks, the blocks its free list is stored in), read from its
    free list; None if it cannot be read.

    DuckDB trims free blocks off the end of the file at a checkpoint but keeps counting them in
    the header, so a file shorter than its block count is whole exactly when every block past its
    end is free. The free list is DuckDB's metadata (SingleFileBlockManager::LoadFreeList): at the
    header's pointer (block id in the low 56 bits, sub-block in the high 8), a chain of 64 metadata
    sub-blocks per block, each an 8-byte pointer to the next and then data, the data being a u64
    count and that many i64 block ids. Anything unexpected gives None: the DuckDB scan decides.
    """
    if free_list == _NO_BLOCK:
        return set(), set()
    holders: set[int] = set()
    sub_block = (block_bytes - 8) // _METADATA_SUB_BLOCKS // 8 * 8
    data = b""
    pointer = free_list
    wanted = 8
    for _ in range(block_count * _METADATA_SUB_BLOCKS):  # bounded: a cycle cannot loop for ever
        block, index = pointer & (2**56 - 1), pointer >> 56
        if block >= block_count or index >= _METADATA_SUB_BLOCKS:
            return None
        holders.add(block)
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
            return (set(ids), holders) if all(0 <= block_id < block_count for block_id in ids) else None
        pointer = _WORD.unpack_from(raw)[0]
        if pointer == _NO_BLOCK:
            return None
    return None


def check_blocks(path: Path, size: int) -> tuple[int, str | None]:
    """(blocks checked, problem). A negative count: the fast check could not vouch for the file
    (another storage format, a file shorter than its header's block count, which DuckDB leaves when
    it trims free blocks off the end, or a block it doubts, when the free list cannot say whether
    it is in use): the DuckDB scan must decide."""
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
        written = layout()
        if header[MAGIC_OFFSET : MAGIC_OFFSET + 12] != written.version or block_bytes != written.block_bytes:
            return -block_count, None
        present = min(block_count, (size - HEADER_BYTES) // block_bytes)
        found = _free_blocks(handle, free_list, block_count, block_bytes) if present < block_count else None
        if found is not None and not set(range(present, block_count)) <= found[0]:
            missing = sorted(set(range(present, block_count)) - found[0])
            return 0, f"cut short: {size:,} bytes, without blocks in use from {missing[0]} on"
        whole = present == block_count or found is not None  # what is past the end is free: trimmed
        handle.seek(HEADER_BYTES)
        doubted: list[int] = []
        checked, problem = _block_checksums(handle, present, block_bytes, doubted)
        if problem is not None:
            return checked, problem
        if doubted:
            return _judge(handle, doubted, checked, free_list, block_count, block_bytes)
        return (checked if whole else -checked or -1), None


def _judge(
    handle: BinaryIO, doubted: list[int], checked: int, free_list: int, block_count: int, block_bytes: int
) -> tuple[int, str | None]:
    """The verdict on blocks whose checksum does not match: damage when one is in use (DuckDB
    refuses to read it, and an index block is read by no scan, only by the next insert), nothing
    when all are free (DuckDB never reads a free block; it overwrites it whole). Without a readable
    free list, or with the free list itself in doubt, the DuckDB scan decides (a negative count)."""
    found = _free_blocks(handle, free_list, block_count, block_bytes)
    if found is None or found[1] & set(doubted):
        return -checked or -1, None
    in_use = sorted(set(doubted) - found[0])
    if in_use:
        return 0, f"block {in_use[0]} is damaged: {len(in_use)} block(s) in use fail DuckDB's checksum"
    return checked, None


def _doubted(blocks: Any) -> list[int]:
    """The rows of `blocks` (a writable uint64 array, one block a row; overwritten) that do not
    carry DuckDB's checksum of their payload in their first word."""
    import numpy as np

    stored = blocks[:, 0].copy()
    blocks[:, 0] = 0  # the stored checksum is not part of the payload; 0 * factor adds nothing
    with np.errstate(over="ignore"):
        np.multiply(blocks, np.uint64(_CHECKSUM_FACTOR), out=blocks)
    computed = np.bitwise_xor.reduce(blocks, axis=1) ^ np.uint64(_CHECKSUM_SEED)
    return [int(row) for row in np.flatnonzero(computed != stored)]


def _block_checksums(
    handle: BinaryIO, block_count: int, block_bytes: int, doubted: list[int]
) -> tuple[int, str | None]:
    """Checksum `block_count` blocks from `handle`'s position, appending to `doubted` each block
    whose checksum does not match."""
    import numpy as np  # only when a file is checked: commands that never write stay light

    chunk = np.empty((_CHUNK_BLOCKS, block_bytes // 8), dtype=np.uint64)
    done = 0
    while done < block_count:
        count = min(_CHUNK_BLOCKS, block_count - done)
        view = chunk[:count]
        read = handle.readinto(view.data.cast("B"))  # type: ignore[attr-defined]
        if read != count * block_bytes:
            return done, f"cut short at block {done}"
        doubted.extend(done + row for row in _doubted(view))
        done += count
    return block_count, None


def block_bytes() -> int:
    """The block size of the files the installed DuckDB writes."""
    return layout().block_bytes

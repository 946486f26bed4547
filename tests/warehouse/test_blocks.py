"""warehouse/engine/blocks.py: a block in use whose checksum fails is damage, whatever it holds; a free one
is not. A real migrated warehouse (the bundled ECB history gives fx_rates a primary-key index of a
few blocks), damaged with noise as a disk would damage it."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import duckdb
from warehouse_template import migrated

from config.settings import Settings
from warehouse.engine import blocks, connect, integrity


def _layout(path: Path) -> tuple[set[int], set[int], set[int]]:
    """(blocks holding column data or metadata, free blocks, blocks in the file) of `path`."""
    with duckdb.connect(str(path), read_only=True) as con:
        tables = [name for (name,) in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()]
        data = {
            block
            for table in tables
            for (block,) in con.execute(
                "SELECT DISTINCT block_id FROM pragma_storage_info($table) WHERE block_id >= 0",
                {"table": table},
            ).fetchall()
        }
        data |= {block for (block,) in con.execute("SELECT block_id FROM pragma_metadata_info()").fetchall()}
    header = path.read_bytes()[: blocks.HEADER_BYTES]
    count, size, free_list = blocks._active_header_fields(header)
    with path.open("rb") as handle:
        found = blocks._free_blocks(handle, free_list, count, size)
    assert found is not None
    present = (path.stat().st_size - blocks.HEADER_BYTES) // size
    return data, found[0], set(range(present))


def _damaged(path: Path, block: int, copy: Path) -> Path:
    shutil.copyfile(path, copy)
    with copy.open("r+b") as handle:
        handle.seek(blocks.HEADER_BYTES + block * blocks.block_bytes() + 512)
        handle.write(random.Random(block).randbytes(64))
    return copy


def test_a_damaged_index_block_is_refused_though_a_scan_of_every_column_passes(
    settings: Settings, tmp_path: Path
) -> None:
    with connect.writer(migrated(settings.warehouse)):
        pass  # migrated, with the ECB history in fx_rates (PRIMARY KEY)
    data, free, present = _layout(settings.warehouse)
    others = sorted(present - data - free)  # in use, but no column's and no metadata: indexes
    assert others, "no index blocks in the warehouse"
    for block in others:
        copy = _damaged(settings.warehouse, block, tmp_path / f"damaged-{block}.duckdb")
        check = integrity.check_file(copy)
        assert (
            not check.good
            and check.problem == f"block {block} is damaged: 1 block(s) in use fail DuckDB's checksum"
        )
        _, scanned = integrity._open_and_read(copy, scan_every_block=True)
        assert scanned is None  # what a DuckDB-only verification would have published


def test_a_damaged_free_block_is_no_damage(settings: Settings, tmp_path: Path, monkeypatch) -> None:
    with connect.writer(settings.warehouse) as con:
        con.execute("CREATE TABLE scratch AS SELECT range AS n, md5(range::VARCHAR) AS s FROM range(300000)")
        con.execute("CREATE TABLE kept AS SELECT 1 AS n")
    with connect.writer(settings.warehouse) as con:
        con.execute("DROP TABLE scratch")  # its blocks are free now, before kept's in the file
    _, free, present = _layout(settings.warehouse)
    inside = sorted(free & present)
    assert inside, "no free block left inside the file"
    copy = _damaged(settings.warehouse, inside[0], tmp_path / "free-damaged.duckdb")
    opened: list[bool] = []
    read = integrity._open_and_read

    def recorded(path: Path, *, scan_every_block: bool) -> tuple[integrity.Stamp | None, str | None]:
        opened.append(scan_every_block)
        return read(path, scan_every_block=scan_every_block)

    monkeypatch.setattr(integrity, "_open_and_read", recorded)
    assert integrity.check_file(copy).good
    assert opened == [False]  # vouched for by the block check, not left to a scan of every column

"""warehouse/engine/connect.py: one writer publishing a snapshot, readers beside it, with real processes."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb
import pytest
from synthetic_crawls import WriteCrawl, synthetic_offer
from warehouse_template import migrated

from config.settings import Settings
from warehouse.engine import blocks, connect, integrity
from warehouse.loading import load_crawl

ROOT = Path(__file__).resolve().parents[2]

# A reader process: holds the published file open and keeps counting offers until told to stop;
# every answer must be the one it first saw (a consistent snapshot). Exit 0 = never failed.
READER = """
import sys, time
from pathlib import Path
from config.settings import Settings
from warehouse.engine import connect, integrity
settings = Settings.from_env({"GPUPLAN_WAREHOUSE": sys.argv[1]})
with connect.reader(settings.warehouse) as con:
    first = con.execute("SELECT count(*), sum(price_amount) FROM offers").fetchall()
    print("ready", first[0][0], flush=True)
    reads = 0
    while not Path(sys.argv[2]).exists():
        assert con.execute("SELECT count(*), sum(price_amount) FROM offers").fetchall() == first
        reads += 1
        time.sleep(0.005)
    print("done", reads, first[0][0], flush=True)
"""

CLI = "from gpuplan.cli import run; run()"  # the `gpuplan` console script
# Someone opening the writer's own file with plain DuckDB, holding it until stdin closes.
HOLD_FILE = (
    "import duckdb, sys; con = duckdb.connect(sys.argv[1]); print('ready', flush=True); sys.stdin.read()"
)

# A process that holds the writer until told to stop.
WRITER = """
import sys, time
from pathlib import Path
from config.settings import Settings
from warehouse.engine import connect, integrity
settings = Settings.from_env({"GPUPLAN_WAREHOUSE": sys.argv[1]})
with connect.writer(settings.warehouse) as con:
    print("ready", flush=True)
    while not Path(sys.argv[2]).exists():
        time.sleep(0.01)
"""


@contextmanager
def _process(script: str, settings: Settings, tmp_path: Path) -> Iterator[subprocess.Popen[str]]:
    """Run `script` in another Python process; it stops when the test leaves the block."""
    stop = tmp_path / f"stop-{os.urandom(4).hex()}"
    process = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(script), str(settings.warehouse), str(stop)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        line = process.stdout.readline() if process.stdout else ""
        assert line.startswith("ready"), process.stderr.read() if process.stderr else line
        process.ready_line = line  # type: ignore[attr-defined]
        yield process
    finally:
        stop.touch()
        process.wait(timeout=60)


def _load(settings: Settings, write_crawl: WriteCrawl, name: str, count: int, day: str) -> None:
    offers = [synthetic_offer(n, observed_at=f"{day}T06:00:00Z") for n in range(count)]
    summary = write_crawl(offers, name=name, started_at=f"{day}T06:00:00Z", finished_at=f"{day}T06:05:00Z")
    with connect.writer(migrated(settings.warehouse)) as con:
        load_crawl(con, summary)


@pytest.mark.slow  # a second process
def test_a_reader_process_holding_the_warehouse_never_blocks_a_load(
    settings: Settings, write_crawl: WriteCrawl, tmp_path: Path
) -> None:
    _load(settings, write_crawl, "day1", 3, "2026-10-01")
    with _process(READER, settings, tmp_path) as reader:
        _load(settings, write_crawl, "day2", 5000, "2026-10-02")  # publishes while the reader reads
        _load(settings, write_crawl, "day3", 7, "2026-10-03")
    out, err = reader.communicate()
    assert reader.returncode == 0, err
    _, reads, seen = out.split()
    assert int(seen) == 3 and int(reads) > 0  # it kept its consistent snapshot throughout
    with connect.reader(settings.warehouse) as con:  # a new reader sees the new state
        assert con.execute("SELECT count(*) FROM offers").fetchall() == [(5010,)]


@pytest.mark.slow  # a second process
def test_a_load_in_another_process_while_this_one_reads(settings: Settings, write_crawl: WriteCrawl) -> None:
    _load(settings, write_crawl, "day1", 3, "2026-10-01")
    summary = write_crawl(
        [synthetic_offer(n) for n in range(100, 150)], name="day2", finished_at="2026-10-01T07:00:00Z"
    )
    with connect.reader(settings.warehouse) as con:
        loader = subprocess.run(
            [sys.executable, "-c", CLI, "--warehouse", str(settings.warehouse), "load", str(summary)],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=120,
        )
        assert loader.returncode == 0, loader.stderr
        assert con.execute("SELECT count(*) FROM offers").fetchall() == [(3,)]
    with connect.reader(settings.warehouse) as con:
        assert con.execute("SELECT count(*) FROM offers").fetchall() == [(53,)]


@pytest.mark.slow  # a second process
def test_a_second_writer_waits_then_fails_clearly(settings: Settings, tmp_path: Path) -> None:
    with _process(WRITER, settings, tmp_path) as holder:
        busy = pytest.raises(connect.WriterBusyError, match=rf"pid {holder.pid} .*gave up after 0.3 s")
        with busy, connect.writer(migrated(settings.warehouse), lock_timeout_s=0.3):
            pass
    # free again once the holder is gone
    with connect.writer(migrated(settings.warehouse), lock_timeout_s=5) as con:
        assert con.execute("SELECT 1").fetchall() == [(1,)]


def test_two_writers_in_one_process_exclude_each_other(settings: Settings) -> None:
    busy = pytest.raises(connect.WriterBusyError)
    warehouse = migrated(settings.warehouse)
    with connect.writer(warehouse), busy, connect.writer(warehouse, lock_timeout_s=0.1):
        pass


@pytest.mark.slow  # a second process
def test_the_writer_file_open_elsewhere_is_a_clear_error(settings: Settings) -> None:
    with connect.writer(migrated(settings.warehouse)):
        pass
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            HOLD_FILE,
            str(connect.writer_path(settings.warehouse)),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout and holder.stdout.readline().startswith("ready")
        # waited for like the lock (a writer whose lock file was deleted holds it the same way)
        busy = pytest.raises(connect.WriterBusyError, match=r"gave up after 0\.5 s\. Only gpuplan.s writer")
        with busy, connect.writer(migrated(settings.warehouse), lock_timeout_s=0.5):
            pass
    finally:
        holder.communicate("", timeout=30)


def test_nothing_is_published_when_the_block_fails(settings: Settings, write_crawl: WriteCrawl) -> None:
    _load(settings, write_crawl, "day1", 3, "2026-10-01")
    before = settings.warehouse.read_bytes()
    failure = pytest.raises(RuntimeError, match="synthetic failure")
    with failure, connect.writer(migrated(settings.warehouse)) as con:
        con.execute("BEGIN TRANSACTION")
        con.execute("DELETE FROM offers")
        raise RuntimeError("synthetic failure")
    assert settings.warehouse.read_bytes() == before
    with connect.writer(
        settings.warehouse, lock_timeout_s=1
    ) as con:  # lock released, open transaction rolled back
        assert con.execute("SELECT count(*) FROM offers").fetchall() == [(3,)]


def test_readers_cannot_write(settings: Settings) -> None:
    with connect.writer(migrated(settings.warehouse)):
        pass
    with connect.reader(settings.warehouse) as con, pytest.raises(duckdb.Error, match="read-only"):
        con.execute("DELETE FROM offers")


def test_reading_before_the_first_run_says_what_to_do(settings: Settings) -> None:
    with pytest.raises(connect.NoWarehouseError, match="run `gpuplan refresh` first"):
        connect.reader(settings.warehouse)


def test_a_lost_writer_file_starts_again_from_the_published_one(
    settings: Settings, write_crawl: WriteCrawl
) -> None:
    _load(settings, write_crawl, "day1", 3, "2026-10-01")
    connect.writer_path(settings.warehouse).unlink()
    with connect.writer(migrated(settings.warehouse)) as con:
        assert con.execute("SELECT count(*) FROM offers").fetchall() == [(3,)]


def test_publishing_clears_temp_files_a_dead_publisher_left(settings: Settings) -> None:
    settings.warehouse.parent.mkdir(parents=True, exist_ok=True)
    stale = settings.warehouse.with_name(f".{settings.warehouse.name}.publish-99999.tmp")
    stale.write_bytes(b"half a database")
    with connect.writer(migrated(settings.warehouse)):
        pass
    assert not stale.exists() and settings.warehouse.exists()
    assert list(settings.warehouse.parent.glob("*.tmp")) == []


def test_in_memory_is_migrated_with_fx_rates() -> None:
    with connect.in_memory() as con:
        ((rates,),) = con.execute("SELECT count(*) FROM fx_rates WHERE currency = 'CNY'").fetchall()
    assert rates > 5000  # the ECB has published CNY daily since 2005


def test_a_reader_on_a_snapshot_from_an_older_gpuplan_says_what_to_do(settings: Settings) -> None:
    with connect.writer(migrated(settings.warehouse)):
        pass
    with duckdb.connect(str(settings.warehouse)) as con:  # as if published before the newest migration
        con.execute(
            "DELETE FROM schema_migrations WHERE version = (SELECT max(version) FROM schema_migrations)"
        )
    with pytest.raises(connect.OutdatedWarehouseError, match="run `gpuplan refresh`"):
        connect.reader(settings.warehouse)


def test_each_publish_keeps_the_snapshot_it_replaces(settings: Settings, write_crawl: WriteCrawl) -> None:
    _load(settings, write_crawl, "day1", 3, "2026-10-01")
    assert not connect.previous_path(settings.warehouse).exists()
    _load(settings, write_crawl, "day2", 5, "2026-10-02")
    with duckdb.connect(str(connect.previous_path(settings.warehouse)), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM offers").fetchall() == [(3,)]
    with connect.reader(settings.warehouse) as con:
        assert con.execute("SELECT count(*) FROM offers").fetchall() == [(8,)]


def test_sessions_count_in_the_stamp_and_only_publishing_ones_publish(settings: Settings) -> None:
    with connect.writer(settings.warehouse):
        pass
    published = settings.warehouse.stat().st_ino
    with connect.writer(settings.warehouse, publish=False) as con:
        con.execute("CREATE TABLE synthetic_unpublished AS SELECT 1 AS x")
    assert settings.warehouse.stat().st_ino == published  # committed to the writer file only
    with connect.writer(settings.warehouse) as con:
        [(writer_generation,)] = con.execute("SELECT generation FROM warehouse_stamp").fetchall()
    with connect.reader(settings.warehouse) as con:
        assert con.execute("SELECT generation FROM warehouse_stamp").fetchall() == [(writer_generation,)]
        assert con.execute("SELECT count(*) FROM synthetic_unpublished").fetchall() == [(1,)]
    assert writer_generation == 3


def test_a_writer_of_this_code_skips_migrations_and_fx(settings: Settings, monkeypatch) -> None:
    with connect.writer(migrated(settings.warehouse)):
        pass
    from warehouse import fx

    def refuse(*_: object) -> None:
        raise AssertionError("migrated again")

    monkeypatch.setattr(connect, "migrate", refuse)
    monkeypatch.setattr(fx, "ensure_rates", refuse)
    with connect.writer(migrated(settings.warehouse)) as con:  # prepared for this code already: no work
        assert con.execute("SELECT count(*) FROM fx_rates").fetchall()[0][0] > 0


@pytest.mark.parametrize("damage", ["data block", "header", "cut short"])
def test_the_block_check_agrees_with_duckdb(settings: Settings, write_crawl: WriteCrawl, damage: str) -> None:
    _load(settings, write_crawl, "day1", 2000, "2026-10-01")
    copy = settings.warehouse.with_name("copy.duckdb")
    copy.write_bytes(settings.warehouse.read_bytes())
    assert integrity.check_file(copy).good
    with duckdb.connect(str(copy), read_only=True) as con:
        [(block,)] = con.execute(
            "SELECT min(block_id) FROM pragma_storage_info('offers') WHERE block_id >= 0"
        ).fetchall()
    with copy.open("r+b") as handle:
        if damage == "cut short":
            handle.truncate(blocks.HEADER_BYTES + block * 262144 + 100)
        else:
            # noise: a repeated pattern over zeros cancels out of DuckDB's xor checksum
            handle.seek(100 if damage == "header" else blocks.HEADER_BYTES + block * 262144 + 512)
            handle.write(random.Random(damage).randbytes(64))
    check = integrity.check_file(copy)
    assert not check.good and check.problem
    with pytest.raises(duckdb.Error), duckdb.connect(str(copy), read_only=True) as con:
        con.execute("SELECT bit_xor(hash(COLUMNS(*))) FROM offers").fetchall()


def test_a_storage_format_the_block_check_does_not_know_falls_back_to_duckdb(
    settings: Settings, write_crawl: WriteCrawl, monkeypatch
) -> None:
    _load(settings, write_crawl, "day1", 50, "2026-10-01")
    monkeypatch.setattr(blocks, "layout", lambda: blocks.Layout(b"DUCK-other-", 262144))
    check = integrity.check_file(settings.warehouse)
    assert check.good and check.generation is not None


def test_a_publish_renames_a_new_verified_copy_and_keeps_the_replaced_snapshot_as_prev(
    settings: Settings, write_crawl: WriteCrawl, tmp_path: Path
) -> None:
    """No file a reader may hold is ever written: each publish is a new file renamed into place, and
    the snapshot it replaces becomes `.prev` (its own inode, no copy); a reader holding a snapshot
    keeps its view across publishes."""
    for day, count in (("2026-10-01", 3), ("2026-10-02", 5)):
        _load(settings, write_crawl, f"day-{day}", count, day)
    previous = connect.previous_path(settings.warehouse)
    replaced = settings.warehouse.stat().st_ino
    _load(settings, write_crawl, "day3", 7, "2026-10-03")
    assert previous.stat().st_ino == replaced and previous.stat().st_nlink == 1
    assert settings.warehouse.stat().st_ino not in {
        replaced,
        connect.writer_path(settings.warehouse).stat().st_ino,
    }
    assert integrity.check_file(settings.warehouse).good and integrity.check_file(previous).good
    with connect.reader(settings.warehouse) as con:
        assert con.execute("SELECT count(*) FROM offers").fetchall() == [(15,)]
    with duckdb.connect(str(previous), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM offers").fetchall() == [(8,)]
    with _process(READER, settings, tmp_path) as held:  # holds the snapshot of 15
        _load(settings, write_crawl, "day4", 1, "2026-10-04")
        _load(settings, write_crawl, "day5", 1, "2026-10-05")
    out, err = held.communicate()
    assert held.returncode == 0, err
    assert out.split()[-1] == "15"

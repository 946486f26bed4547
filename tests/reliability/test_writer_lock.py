"""The writer's lock and folder, and the migrations it applies, each
reproduced on a small warehouse of SYNTHETIC crawls (warehouse_files.py).

- With the lock file deleted while a writer ran, the next writer failed at once ("cannot open the
  writer file") instead of waiting for the first. Now it waits, and both loads land.
- A migration changed after a warehouse applied it was run past silently (its checksum is
  recorded but was never read). Now the writer refuses, naming the file, before applying anything.
- In a read-only warehouse folder the error said "Read-only file system:" without the path. Now
  it is one line naming the folder and what could not be made there.
"""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import textwrap
import time
from dataclasses import replace
from pathlib import Path

import duckdb
import pytest

from reliability.warehouse_files import (
    THIRD_DAY,
    assert_one_clear_line,
    cli,
    crawl,
    history,
    offers_by_crawl,
    settings_in,
    sha256,
)
from warehouse.engine import connect
from warehouse.engine.migrate import MigrationError, available, migrate
from warehouse.loading import load_crawl

pytestmark = pytest.mark.faults

HOLD_S = 2.0  # how long the first writer keeps working after the lock file is deleted
# The first writer: loads a crawl, says so, keeps the session open HOLD_S more, then publishes.
FIRST_WRITER = f"""
import sys, time
from pathlib import Path
from warehouse.engine import connect
from warehouse.loading import load_crawl
with connect.writer(Path(sys.argv[1])) as con:
    load_crawl(con, Path(sys.argv[2]))
    print("loaded", flush=True)
    time.sleep({HOLD_S})
"""


def test_lock_file_deleted_the_next_writer_waits(tmp_path: Path) -> None:
    settings = settings_in(tmp_path)
    before = history(settings)
    first = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(FIRST_WRITER),
            str(settings.warehouse),
            str(crawl(settings, THIRD_DAY, 11, name="first")),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert first.stdout and first.stdout.readline().strip() == "loaded", first.stderr and first.stderr.read()
    lock = connect.writer_path(settings.warehouse).with_name(
        connect.writer_path(settings.warehouse).name + ".lock"
    )
    lock.unlink()  # someone "cleaning up" while the first writer runs
    started = time.monotonic()

    with connect.writer(settings.warehouse, lock_timeout_s=60) as con:
        waited_s = time.monotonic() - started
        second = load_crawl(con, crawl(settings, THIRD_DAY, 7, name="second"))

    assert first.wait(timeout=60) == 0, first.stderr and first.stderr.read()
    assert waited_s > HOLD_S / 2, f"the second writer went ahead after {waited_s:.2f} s"
    after = offers_by_crawl(settings.warehouse)
    assert {k: v for k, v in after.items() if k in before} == before
    assert sum(after.values()) == sum(before.values()) + 11 + 7 and after[second.crawl_id] == 7


def test_a_changed_applied_migration_is_refused(tmp_path: Path) -> None:
    shipped = {m.name: m.sql for m in available()}
    folder = tmp_path / "migrations"
    folder.mkdir()
    for name, sql in shipped.items():
        (folder / name).write_text(sql, encoding="utf-8")
    path = tmp_path / "warehouse.duckdb"
    with duckdb.connect(str(path)) as con:
        migrate(con, folder)
    edited = sorted(shipped)[0]
    (folder / edited).write_text(shipped[edited] + "\nCREATE TABLE sneaked_in (x INTEGER);\n", "utf-8")
    (folder / "999_later.sql").write_text("CREATE TABLE later (x INTEGER);\n", "utf-8")

    with duckdb.connect(str(path)) as con:
        with pytest.raises(
            MigrationError, match=rf"migration {edited} was changed after this warehouse applied"
        ):
            migrate(con, folder)
        tables = {row[0] for row in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
    assert not {"sneaked_in", "later"} & tables, "something was applied past the changed migration"


def _read_only_folder(tmp_path: Path) -> Path:
    """A tmpfs mounted read-only (EROFS, which holds for root too); skipped where mounting is not allowed."""
    folder = tmp_path / "read-only"
    folder.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(folder)], capture_output=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a read-only file system here: {mounted.stderr.decode().strip()}")
    return folder


def test_read_only_warehouse_folder_names_the_path(tmp_path: Path) -> None:
    folder = _read_only_folder(tmp_path)
    try:
        settings = settings_in(folder)
        history(settings)
        published = sha256(settings.warehouse)
        summary = crawl(settings_in(tmp_path), THIRD_DAY, 5)  # the crawl lands where it can
        subprocess.run(["mount", "-o", "remount,ro", str(folder)], check=True)
        with pytest.raises(OSError) as probe:
            (folder / "probe").touch()
        assert probe.value.errno == errno.EROFS

        result = cli(settings, "load", str(summary))
        refresh = cli(
            replace(settings, crawl_dir=tmp_path / "crawls"), "refresh", "--offline", "--platform", "vastai"
        )

        assert result.returncode == 1
        assert_one_clear_line(result.stderr, str(settings.warehouse.parent), "Read-only file system")
        assert refresh.returncode == 1
        failed = [line for line in refresh.stdout.splitlines() if line.startswith("step failed: offers")]
        assert failed and str(settings.warehouse.parent) in failed[0] and "Read-only file system" in failed[0]
        assert sha256(settings.warehouse) == published
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)
    assert not os.listdir(folder)

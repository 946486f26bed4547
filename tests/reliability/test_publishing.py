"""Publishing that cannot destroy history: each case reproduces the
report on a small warehouse of SYNTHETIC crawls (warehouse_files.py), through the real CLI.

- A damaged writer file (4 KiB overwritten inside a data block of `offers`, or the file cut to
  half) was published over the only good snapshot by a command whose queries never touched the
  damaged block (`gpuplan load` of a crawl already loaded). Now the copy is checked block by block
  first: the command fails in one line, the snapshot is byte for byte what it was, `gpuplan doctor`
  says which file is good, and `--fix` makes the warehouse whole with every offer.
- An older writer file (a backup put back) silently replaced a newer snapshot: one import's 64
  offers vanished with rc 0. Now the older file is set aside and the writer starts from the
  snapshot: every offer stays, and a later load adds to it.
- A writer file that is not DuckDB's was reported as "busy".
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from reliability.warehouse_files import (
    THIRD_DAY,
    assert_one_clear_line,
    cli,
    crawl,
    data_block_offset,
    history,
    load,
    offers_by_crawl,
    overwrite,
    settings_in,
    sha256,
)
from warehouse.engine import connect

pytestmark = pytest.mark.faults

IMPORTED_OFFERS = 64  # the import


def _damaged_then_reloaded(tmp_path: Path, damage: str) -> None:
    settings = settings_in(tmp_path)
    before = history(settings)
    published = sha256(settings.warehouse)
    private = connect.writer_path(settings.warehouse)
    if damage == "block":
        overwrite(private, data_block_offset(private, "offers") + 1024)
    else:
        with private.open("r+b") as handle:
            handle.truncate(private.stat().st_size // 2)
    already_loaded = next(settings.crawl_dir.rglob("*.summary.json"))

    result = cli(settings, "load", str(already_loaded), child=True)

    assert result.returncode == 1, result.stdout
    assert_one_clear_line(result.stderr, str(private), "gpuplan doctor")
    assert sha256(settings.warehouse) == published, "a damaged writer file replaced the snapshot"
    doctor = cli(settings, "doctor")
    assert doctor.returncode == 1
    assert f"{private}: DAMAGED" in doctor.stdout and f"{settings.warehouse}: good" in doctor.stdout
    assert "gpuplan doctor --fix" in doctor.stdout
    fixed = cli(settings, "doctor", "--fix")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "healthy" in fixed.stdout
    assert [path.name for path in private.parent.glob("*.damaged-*")], "the damaged file was not kept"
    new = crawl(settings, THIRD_DAY, 20)
    loaded = cli(settings, "load", str(new))
    assert loaded.returncode == 0, loaded.stderr
    after = offers_by_crawl(settings.warehouse)
    assert {k: v for k, v in after.items() if k in before} == before and sum(after.values()) == sum(
        before.values()
    ) + 20


def test_damaged_writer_block_is_never_published(tmp_path: Path) -> None:
    _damaged_then_reloaded(tmp_path, "block")


def test_writer_file_cut_to_half_is_never_published(tmp_path: Path) -> None:
    _damaged_then_reloaded(tmp_path, "truncated")


def test_older_writer_file_never_replaces_a_newer_snapshot(tmp_path: Path) -> None:
    settings = settings_in(tmp_path)
    before = history(settings)
    private = connect.writer_path(settings.warehouse)
    backup = tmp_path / "writer-backup.duckdb"
    shutil.copyfile(private, backup)
    load(settings, crawl(settings, THIRD_DAY, IMPORTED_OFFERS, name="imported"))
    newer = offers_by_crawl(settings.warehouse)
    assert sum(newer.values()) == sum(before.values()) + IMPORTED_OFFERS
    shutil.copyfile(backup, private)  # the backup put back: the writer is now older than the snapshot

    result = cli(settings, "load", str(crawl(settings, THIRD_DAY, 5, name="later")), child=True)

    assert result.returncode == 0, result.stderr
    assert "older than the published warehouse" in result.stderr
    after = offers_by_crawl(settings.warehouse)
    assert {k: v for k, v in after.items() if k in newer} == newer, "the snapshot's offers were lost"
    assert sum(after.values()) == sum(newer.values()) + 5
    (aside,) = private.parent.glob(f"{private.name}.older-gen*")
    assert offers_by_crawl(aside) == before  # nothing deleted: the old writer file is kept as it was
    assert offers_by_crawl(connect.previous_path(settings.warehouse)) == newer


def test_doctor_restores_the_previous_snapshot(tmp_path: Path) -> None:
    settings = settings_in(tmp_path)
    before = history(settings)
    load(settings, crawl(settings, THIRD_DAY, 9, name="regretted"))
    report = cli(settings, "doctor")
    assert report.returncode == 0 and "healthy" in report.stdout
    assert f"{connect.previous_path(settings.warehouse)}: good" in report.stdout

    restored = cli(settings, "doctor", "--restore")

    assert restored.returncode == 0, restored.stdout + restored.stderr
    assert (
        offers_by_crawl(settings.warehouse)
        == before
        == offers_by_crawl(connect.writer_path(settings.warehouse))
    )
    kept = sorted(path.name for path in settings.warehouse.parent.glob("*.replaced-*"))
    assert len(kept) == 2, kept  # the published and the writer file it replaced, both kept


@pytest.mark.parametrize(
    ("content", "kind"),
    [
        (b"", "an empty file"),
        (b"offer_id,price\nsynthetic-1,2.5\n", "a text file"),
        (b"SQLite format 3\x00" + bytes(4080), "a SQLite database"),
    ],
    ids=["empty", "text", "sqlite"],
)
def test_writer_file_not_duckdb_says_what_it_is(tmp_path: Path, content: bytes, kind: str) -> None:
    settings = settings_in(tmp_path)
    history(settings)
    private = connect.writer_path(settings.warehouse)
    private.write_bytes(content)
    published = sha256(settings.warehouse)
    started = time.monotonic()

    result = cli(settings, "load", str(crawl(settings, THIRD_DAY, 5)))

    assert result.returncode == 1
    assert_one_clear_line(result.stderr, str(private), kind, f"mv {private} {private}.bad")
    assert "busy" not in result.stderr and "another gpuplan writer" not in result.stderr
    assert time.monotonic() - started < 30, "it waited as if the file were busy (or went online)"
    assert sha256(settings.warehouse) == published
    private.rename(private.with_name(private.name + ".bad"))  # as the message says
    assert cli(settings, "load", str(crawl(settings, THIRD_DAY, 5))).returncode == 0


# A `gpuplan load` killed (SIGKILL) inside its publish: once the writer file is copied to the
# publish's temp file (before it is verified), or once `.prev` has been replaced by the snapshot
# about to be replaced (before the new one is renamed into place).
KILLED_IN_PUBLISH = """
import os, signal, sys
from warehouse.engine import publishing
step = getattr(publishing, sys.argv[2])
def killed(*args, **kwargs):
    step(*args, **kwargs)
    os.kill(os.getpid(), signal.SIGKILL)
setattr(publishing, sys.argv[2], killed)
from gpuplan.cli import run
sys.argv = ["gpuplan", "load", sys.argv[1]]
run()
"""


@pytest.mark.parametrize("after", ["copy_durably", "_keep_previous"])
def test_a_publish_killed_keeps_a_previous_snapshot(tmp_path: Path, after: str) -> None:
    """Before: an in-place publish renamed `.prev` to its temp name before rewriting its blocks, so a
    kill there left no previous snapshot until the next publish, and `gpuplan doctor` listed it
    missing yet said "healthy". Now a kill at either step leaves the snapshot and a good `.prev`."""
    settings = settings_in(tmp_path)
    history(settings)
    previous = connect.previous_path(settings.warehouse)
    assert previous.is_file() and previous.stat().st_nlink == 1
    published = offers_by_crawl(settings.warehouse)
    env = {
        **os.environ,
        "GPUPLAN_WAREHOUSE": str(settings.warehouse),
        "GPUPLAN_CRAWL_DIR": str(settings.crawl_dir),
    }
    killed = subprocess.run(
        [sys.executable, "-c", KILLED_IN_PUBLISH, str(crawl(settings, THIRD_DAY, 7, name="killed")), after],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert killed.returncode == -signal.SIGKILL, killed.stderr

    assert previous.is_file(), "the kill left no previous snapshot"
    assert offers_by_crawl(settings.warehouse) == published  # not replaced yet
    if after == "_keep_previous":
        assert offers_by_crawl(previous) == published  # the snapshot the publish was replacing
    report = cli(settings, "doctor")
    assert report.returncode == 0 and f"{previous}: good" in report.stdout, report.stdout
    assert cli(settings, "load", str(crawl(settings, THIRD_DAY, 3, name="after"))).returncode == 0
    assert sum(offers_by_crawl(settings.warehouse).values()) == sum(published.values()) + 7 + 3
    assert not list(settings.warehouse.parent.glob(".*.tmp")), "a dead publisher's temp file stayed"


def test_doctor_is_not_healthy_without_a_previous_snapshot(tmp_path: Path) -> None:
    settings = settings_in(tmp_path)
    history(settings)
    previous = connect.previous_path(settings.warehouse)
    previous.unlink()

    report = cli(settings, "doctor")

    assert report.returncode == 1, report.stdout
    assert f"{previous}: missing" in report.stdout
    verdict = report.stdout.splitlines()[-1]
    assert verdict.startswith("no copy to go back to: "), verdict
    fixed = cli(settings, "doctor", "--fix")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert fixed.stdout.splitlines()[-1].startswith("healthy: "), fixed.stdout
    assert offers_by_crawl(previous) == offers_by_crawl(settings.warehouse)

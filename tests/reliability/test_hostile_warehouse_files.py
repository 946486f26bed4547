"""Links and full disks where the warehouse's own files belong, and a failed
restore: each on a small warehouse of SYNTHETIC crawls (warehouse_files.py), through the real CLI.

Before the fix, a symbolic link `warehouse.duckdb.prev -> ~/backup.duckdb` made the next publish
write the new snapshot into the backup (its bytes gone) and turn `warehouse.duckdb` into a link to
it, and `gpuplan doctor` said "healthy"; a link in place of the writer file, its lock or the publish
record was written through the same way. A `doctor --restore` that ran out of space left its
half-written `.restore-*.tmp` copy in the warehouse folder.
"""

from __future__ import annotations

import resource
import shutil
from collections.abc import Callable
from pathlib import Path

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
from warehouse.engine import layout

pytestmark = pytest.mark.faults

# Each file of the warehouse a publish, a seed or the lock writes, by its name in the folder.
LINKED: dict[str, Callable[[Path], Path]] = {
    "previous": layout.previous_path,
    "published": lambda warehouse: warehouse,
    "writer": layout.writer_path,
    "lock": layout.lock_path,
    "record": layout.record_path,
}


@pytest.mark.parametrize("which", sorted(LINKED))
def test_a_linked_warehouse_file_is_never_written_through(tmp_path: Path, which: str) -> None:
    settings = settings_in(tmp_path)
    before = history(settings)
    linked = LINKED[which](settings.warehouse)
    backup = tmp_path / "backup" / "kept.duckdb"  # the user's own file the link points at
    backup.parent.mkdir()
    shutil.copyfile(linked, backup)
    kept = sha256(backup)
    linked.unlink()
    linked.symlink_to(backup)

    result = cli(settings, "load", str(crawl(settings, THIRD_DAY, 5)))

    assert result.returncode == 1, result.stderr
    assert_one_clear_line(result.stderr, str(linked), "symbolic link", str(backup), "gpuplan doctor --fix")
    assert sha256(backup) == kept, "the publish wrote through the link"
    assert linked.is_symlink(), "the link was replaced"
    assert which == "published" or not settings.warehouse.is_symlink(), "the snapshot became a link"
    doctor = cli(settings, "doctor")
    assert doctor.returncode == 1, doctor.stdout
    assert f"{linked}: a symbolic link to {backup}" in doctor.stdout
    assert "healthy" not in doctor.stdout

    fixed = cli(settings, "doctor", "--fix")

    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert f"set the symbolic link {linked}" in fixed.stdout and "healthy: " in fixed.stdout
    assert sha256(backup) == kept
    assert not any(path.is_symlink() for path in layout.files(settings.warehouse))
    loaded = cli(settings, "load", str(crawl(settings, THIRD_DAY, 5)))
    assert loaded.returncode == 0, loaded.stderr
    after = offers_by_crawl(settings.warehouse)
    assert {k: v for k, v in after.items() if k in before} == before
    assert sum(after.values()) == sum(before.values()) + 5
    assert sha256(backup) == kept


def test_a_restore_that_runs_out_of_space_leaves_no_copy(tmp_path: Path) -> None:
    settings = settings_in(tmp_path)
    history(settings)
    load = cli(settings, "load", str(crawl(settings, THIRD_DAY, 9, name="regretted")))
    assert load.returncode == 0, load.stderr
    folder = settings.warehouse.parent
    files = {path.name: sha256(path) for path in folder.iterdir() if path.is_file()}
    limit = layout.previous_path(settings.warehouse).stat().st_size // 2

    def full_disk() -> None:  # writes past half the snapshot fail with EFBIG, as a full quota's
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    result = cli(settings, "doctor", "--restore", child=True, preexec_fn=full_disk)

    assert result.returncode == 1
    left = {path.name: sha256(path) for path in folder.iterdir() if path.is_file()}
    assert left.keys() - files.keys() <= {layout.lock_path(settings.warehouse).name}, "a copy was left"
    assert_one_clear_line(result.stderr, "could not restore", "File too large", "no partial copy")
    assert {name: left[name] for name in files if name.endswith(".duckdb") or name.endswith(".prev")} == {
        name: digest for name, digest in files.items() if name.endswith(".duckdb") or name.endswith(".prev")
    }
    assert cli(settings, "doctor", "--restore").returncode == 0  # with room, it restores

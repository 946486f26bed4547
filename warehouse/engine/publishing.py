"""Publishing the writer's file as the read snapshot, so that publishing can never destroy history.

Public API (stable; `warehouse.engine.connect` calls it, `gpuplan doctor` too):
    publish(warehouse, generation, keep_previous=True)   copy, verify, keep the previous, replace
    seed_writer(warehouse), replace_older_writer(warehouse, writer_generation, published)
        before a writer session: a writer file exists and is never older than the published snapshot
    published_generation(warehouse) -> int | None
    restore(source, warehouse)          make `source` (a good file) the published and the writer file
    previous_path(warehouse), set_aside(path, why) -> Path   (from `warehouse.engine.layout`)
    PublishError, WarehouseDamagedError

The rules:
- The copy is verified before it replaces anything: every block checked and the catalog read
  (`warehouse.engine.integrity.check_file`), and it must carry the generation of the session that wrote
  it. A damaged writer file is never published; the published file stays as it was and the error
  says to run `gpuplan doctor`.
- The snapshot it replaces is kept as `<warehouse>.prev` (a hard link: no copy), unless that
  snapshot is itself damaged, in which case the last good previous one stays. Once there has been a
  previous snapshot there is always one: `.prev` is replaced, never removed, so a publish killed at
  any point leaves a good one (`gpuplan doctor` says the warehouse is not healthy without it).
- Publishing copies the writer file whole to a new temp file, verifies the copy, and renames it
  into place: DuckDB's own files are never written in place, so no reader can be holding a file
  that changes under it. `.prev` is a plain previous copy (the replaced snapshot's own inode).
- A writer file older than the published snapshot (a smaller generation: the writer restored from
  a backup, or the published file replaced by a newer copy) is never published over it: the writer
  session first sets the old writer file aside and starts from the snapshot (`replace_older_writer`).
  Nothing is deleted: files set aside keep their name plus why and when.
- No file of the warehouse is written through a symbolic link (`warehouse.engine.layout`): a
  publish, a seed and a restore refuse a link where one of the files belongs, naming it, before
  they write anything; every file made here is new (O_EXCL | O_NOFOLLOW), and files are only
  renamed over `.prev` and the snapshot, never written through them.
Files beside `warehouse.duckdb`: `warehouse.duckdb.prev`, `warehouse.writer.duckdb.published`
(what was last published: inode, size, mtime, generation; so a session need not open the
snapshot to know it is the one it published).
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import duckdb

from warehouse.engine import integrity
from warehouse.engine.layout import (
    copy_durably,
    create,
    fsync_dir,
    previous_path,
    record_path,
    refuse_links,
    set_aside,
    writer_path,
)

__all__ = [
    "PublishError",
    "WarehouseDamagedError",
    "previous_path",
    "publish",
    "published_generation",
    "replace_older_writer",
    "restore",
    "seed_writer",
    "set_aside",
    "writer_path",
]

log = logging.getLogger(__name__)


class PublishError(RuntimeError):
    """The snapshot could not be written next to the warehouse (disk full, not writable...)."""


class WarehouseDamagedError(PublishError):
    """A warehouse file failed verification: it is not published, nothing good is replaced."""


def _identity(path: Path) -> dict[str, int]:
    stat = path.stat()
    return {"inode": stat.st_ino, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


def _recorded(warehouse: Path) -> dict[str, int] | None:
    """What this writer last published, if the published file is still exactly that file."""
    try:
        record = json.loads(record_path(warehouse).read_text("utf-8"))
        unchanged = {key: record[key] for key in ("inode", "size", "mtime_ns")} == _identity(warehouse)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return record if unchanged else None


def published_generation(warehouse: Path) -> int | None:
    """The generation of the published snapshot; None if there is none, or it has no stamp or
    cannot be read (then it cannot be newer than anything)."""
    if not warehouse.exists():
        return None
    record = _recorded(warehouse)
    if record is not None:
        return int(record["generation"])
    if integrity.describe(warehouse) != "a DuckDB file":
        return None
    try:
        with duckdb.connect(str(warehouse), read_only=True, config=integrity.SAFE_CONFIG) as con:
            stamp = integrity.read_stamp(con)
    except duckdb.Error:
        return None
    return stamp.generation if stamp else None


def _write_record(warehouse: Path, generation: int) -> None:
    """Record what was published (inode, size, mtime, generation): a new file renamed into place."""
    record = record_path(warehouse)
    temp = record.with_name(f".{record.name}-{os.getpid()}.tmp")
    temp.unlink(missing_ok=True)
    fd = create(temp)
    try:
        os.write(fd, json.dumps({**_identity(warehouse), "generation": generation}).encode())
    finally:
        os.close(fd)
    os.replace(temp, record)


def seed_writer(warehouse: Path) -> None:
    """A missing writer file starts as a copy of the published snapshot (else the previous one),
    so no history is lost (first run after the writer file was deleted or set aside)."""
    refuse_links(warehouse)
    private = writer_path(warehouse)
    if private.exists():
        return
    source = _good_source(warehouse)
    if source is not None:
        temp = private.with_name(private.name + ".seed.tmp")
        temp.unlink(missing_ok=True)  # left by a seed that died; we hold the writer lock
        copy_durably(source, temp)
        os.replace(temp, private)


def replace_older_writer(warehouse: Path, writer_generation: int, published: int) -> Path:
    """The writer file is older than the snapshot: set it aside and start again from the snapshot.

    Call it holding the writer lock, with the writer file closed. Returns where the old file went.
    """
    aside = set_aside(writer_path(warehouse), f"older-gen{writer_generation}")
    log.warning(
        "the writer file (generation %s) was older than the published warehouse %s (generation %s): "
        "kept as %s, and the writer starts again from the published one",
        writer_generation,
        warehouse,
        published,
        aside,
    )
    seed_writer(warehouse)
    return aside


def _good_source(warehouse: Path) -> Path | None:
    """The file a missing writer file starts from: the published snapshot, else the previous one.

    None when neither exists (a new warehouse). Raises WarehouseDamagedError when they exist but
    neither is good: starting afresh would hide the history they hold.
    """
    candidates = [path for path in (warehouse, previous_path(warehouse)) if path.exists()]
    problems: list[str] = []
    for path in candidates:
        check = integrity.check_file(path)
        if check.good:
            if path != warehouse:
                log.warning(
                    "the published warehouse is damaged (%s): the writer starts from %s", problems, path
                )
            return path
        problems.append(f"{path}: {check.problem}")
    if problems:
        raise WarehouseDamagedError(
            f"no good copy of the warehouse to start the writer from ({'; '.join(problems)}): "
            "run `gpuplan doctor`"
        )
    return None


def publish(warehouse: Path, generation: int, *, keep_previous: bool = True) -> None:
    """Copy the (closed, checkpointed) writer file over the published one: verified, atomically,
    keeping the replaced snapshot as `<warehouse>.prev` (unless `keep_previous` is False: the
    caller knows it is damaged). Call it holding the writer lock.

    A reader sees the old file or the new one, never a half-written one, even across a crash:
    copy the writer file to a new temp file in the same folder, fsync, verify every block of the
    copy, link the snapshot it replaces as `.prev`, os.replace, fsync the folder. Killed at any
    instant, the published file and `.prev` are each a whole verified snapshot.
    """
    refuse_links(warehouse)
    private = writer_path(warehouse)
    published = published_generation(warehouse)
    if published is not None and published > generation:
        raise PublishError(
            f"the published warehouse {warehouse} (generation {published}) is newer than the writer "
            f"file {private} (generation {generation}): not published over it. Run `gpuplan doctor`"
        )
    for stale in (
        *warehouse.parent.glob(f".{warehouse.name}.publish-*.tmp"),
        *warehouse.parent.glob(f".{warehouse.name}.prev-*.tmp"),
    ):
        stale.unlink()  # left by a publisher that died; we hold the writer lock, so none is running
    temp = warehouse.with_name(f".{warehouse.name}.publish-{os.getpid()}.tmp")
    try:
        copy_durably(private, temp)
        _require_good(integrity.check_file(temp), warehouse, generation)
        if keep_previous:
            _keep_previous(warehouse)
        os.replace(temp, warehouse)
        fsync_dir(warehouse.parent)
    except OSError as exc:
        raise PublishError(
            f"could not publish the warehouse to {warehouse}: {exc.strerror or exc}; "
            f"the data is safe in {private} and is published on the next successful run"
        ) from exc
    finally:
        temp.unlink(missing_ok=True)
    _write_record(warehouse, generation)


def _require_good(check: integrity.FileCheck, warehouse: Path, generation: int) -> None:
    """Raise WarehouseDamagedError unless `check` is of a good file holding `generation`."""
    if not check.good or check.generation != generation:
        problem = check.problem or f"it holds generation {check.generation}, not {generation}"
        raise WarehouseDamagedError(
            f"the writer file {writer_path(warehouse)} is damaged ({problem}): not published, and the "
            f"published warehouse {warehouse} is left as it was. Run `gpuplan doctor`"
        )


def _keep_previous(warehouse: Path) -> None:
    """Link the snapshot about to be replaced as `<warehouse>.prev`, if it is a good one."""
    if not warehouse.is_file():
        return
    if _recorded(warehouse) is None:  # not the file this writer published: look before keeping it
        check = integrity.check_file(warehouse)
        if not check.good:
            log.warning(
                "the published warehouse %s is damaged (%s): replaced; %s keeps the last good snapshot",
                warehouse,
                check.problem,
                previous_path(warehouse),
            )
            return
    previous = previous_path(warehouse)
    if previous.exists() and os.path.samefile(previous, warehouse):
        return  # already kept (a publish killed after keeping it): a rename onto itself would do nothing
    link = warehouse.with_name(f".{warehouse.name}.prev-{os.getpid()}.tmp")
    link.unlink(missing_ok=True)
    os.link(warehouse, link)
    os.replace(link, previous)


def restore(source: Path, warehouse: Path) -> None:
    """Make the good file `source` both the published snapshot and the writer file.

    The files it replaces are set aside (`*.replaced-<time>`), never deleted. Call it holding the
    writer lock. Raises WarehouseDamagedError if `source` does not verify.
    """
    refuse_links(warehouse)
    check = integrity.check_file(source)
    if not check.good:
        raise WarehouseDamagedError(f"{source} cannot be restored: {check.problem}")
    targets = (writer_path(warehouse), warehouse)
    temps = [target.with_name(f".{target.name}.restore-{os.getpid()}.tmp") for target in targets]
    try:
        for temp in temps:  # both copies made before anything is replaced: a full disk replaces nothing
            temp.unlink(missing_ok=True)
            copy_durably(source, temp)
        for target, temp in zip(targets, temps, strict=True):
            if target.exists() and target != source:
                set_aside(target, "replaced", keep=True)
            os.replace(temp, target)
    except OSError as exc:
        raise PublishError(
            f"could not restore {source}: {exc.strerror or exc} ({exc.filename}); the files it was to "
            "replace are kept, and no partial copy is left behind"
        ) from exc
    finally:
        for temp in temps:
            temp.unlink(missing_ok=True)
    fsync_dir(warehouse.parent)
    _write_record(warehouse, check.generation or 0)

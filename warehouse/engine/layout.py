"""The files beside a published warehouse, and how gpuplan writes them: never through a link.

Public API (stable; `warehouse.engine.publishing`, `warehouse.engine.connect` and `gpuplan doctor` use it):
    writer_path(warehouse), previous_path(warehouse), record_path(warehouse), lock_path(warehouse, purpose)
    files(warehouse)
    links(warehouse) -> [(file, where it points)], refuse_links(warehouse), LinkedFileError
    create(path) -> fd, copy_durably(source, target), fsync_dir(folder), set_aside(path, why)

Why one home for the layout: a symbolic link where one of these files belongs
(`warehouse.duckdb.prev` pointing at the user's backup) was written through by the next publish:
the backup was overwritten with the new snapshot, and `warehouse.duckdb` became a link to it.
Now a writer session, a publish and a restore refuse, naming the link, before they write anything
(`refuse_links`); every file they make is new (`create`: O_EXCL | O_NOFOLLOW), so a link put in
place of a temporary meanwhile is an error, not a target; and `gpuplan doctor` lists the links.
"""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

# One sendfile call moves at most this much: a 300 MB warehouse is copied in ~20 calls.
_COPY_BYTES = 16 * 1024 * 1024


class LinkedFileError(RuntimeError):
    """A file of the warehouse is a symbolic link: nothing is written through it."""


def writer_path(warehouse: Path) -> Path:
    """The writer's private DuckDB file beside the published `warehouse`; only the single writer opens it."""
    return warehouse.with_name(warehouse.stem + ".writer" + warehouse.suffix)


def previous_path(warehouse: Path) -> Path:
    """The snapshot published before the current one (`gpuplan doctor --restore` brings it back)."""
    return warehouse.with_name(warehouse.name + ".prev")


def record_path(warehouse: Path) -> Path:
    """What the writer last published (`warehouse.engine.publishing`)."""
    private = writer_path(warehouse)
    return private.with_name(private.name + ".published")


def lock_path(warehouse: Path, purpose: str = "writer") -> Path:
    """The writer's lock beside its file; another purpose's (the digest sender's) beside the warehouse."""
    if purpose != "writer":
        return warehouse.with_name(f"{warehouse.name}.{purpose}.lock")
    private = writer_path(warehouse)
    return private.with_name(private.name + ".lock")


def files(warehouse: Path) -> tuple[Path, ...]:
    """Every file a writer session, a publish or a digest sender writes, beside `warehouse`."""
    private = writer_path(warehouse)
    return (
        warehouse,
        previous_path(warehouse),
        private,
        private.with_name(private.name + ".wal"),  # DuckDB's log of the writer file
        lock_path(warehouse),
        lock_path(warehouse, "digest"),
        record_path(warehouse),
    )


def links(warehouse: Path) -> list[tuple[Path, str]]:
    """The files of the warehouse that are symbolic links, each with where it points."""
    return [(path, os.readlink(path)) for path in files(warehouse) if path.is_symlink()]


def refuse_links(warehouse: Path) -> None:
    """Raise LinkedFileError naming the first file of the warehouse that is a symbolic link."""
    for path, target in links(warehouse):
        raise linked(path, target)


def linked(path: Path, target: str | None = None) -> LinkedFileError:
    """The error for the warehouse file `path`, found to be a link (to `target`)."""
    try:
        target = target if target is not None else os.readlink(path)
    except OSError:
        target = "?"
    return LinkedFileError(
        f"{path} is a symbolic link (to {target}): gpuplan never writes a warehouse file through a "
        "link, so nothing was written. `gpuplan doctor --fix` sets the link aside (its target is "
        "not touched)"
    )


def create(path: Path, mode: int = 0o644) -> int:
    """A new file at `path`, open for writing; a file or a link already there is an error
    (FileExistsError), never written through."""
    return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode)


def copy_durably(source: Path, target: Path) -> None:
    """Copy `source` to the new file `target` and fsync it. On any error (a full disk) nothing is
    left at `target`."""
    fd = create(target)
    try:
        with source.open("rb") as original:
            offset = 0  # a kernel-side copy, as shutil.copyfile makes on Linux
            while sent := os.sendfile(fd, original.fileno(), offset, _COPY_BYTES):
                offset += sent
        os.fsync(fd)
    except BaseException:
        target.unlink(missing_ok=True)
        raise
    finally:
        os.close(fd)


def fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def set_aside(path: Path, why: str, *, keep: bool = False) -> Path:
    """Rename `path` to `<path>.<why>-<UTC time>` (never overwriting) and return the new name;
    `keep`: hard-link it there instead, so `path` stays in place until it is replaced. A link is
    renamed itself, never its target."""
    now = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    target = path.with_name(f"{path.name}.{why}-{now}")
    suffix = 1
    while target.exists() or target.is_symlink():
        suffix += 1
        target = path.with_name(f"{path.name}.{why}-{now}-{suffix}")
    if keep:
        os.link(path, target, follow_symlinks=False)
    else:
        os.rename(path, target)
    return target

"""Connections: one writer that publishes a snapshot, any number of readers of that snapshot.

Public API (stable):
    writer(warehouse, lock_timeout_s=DEFAULT_LOCK_TIMEOUT_S)   context manager -> connection
        The only read-write connection. Opens `writer_path(warehouse)` (a private file) under an
        exclusive OS lock, migrates it and loads the bundled FX rates if missing. On a clean
        exit it CHECKPOINTs, closes, and publishes a copy to `warehouse` atomically.
        On an exception nothing is published and an open transaction is rolled back; work
        already committed stays in the writer file and goes out with the next clean publish.
    reader(warehouse) -> connection
        Read-only connection on the published file `warehouse`. Usable as a context manager
        (`with reader(path) as con:` closes it).
    writer_path(warehouse) -> Path
        The writer's private file beside the published one.
    in_memory() -> connection
        A migrated in-memory database with the bundled FX rates: tests and scratch work.
    WriterBusyError, NoWarehouseError, PublishError

Why: DuckDB lets one process write a file or many read it, never both, and a reader that
holds the file makes the writer's open fail. So the writer never shares its file: readers
(`gpuplan sql`, notebooks, the digest) open the published copy, which the writer replaces
with `os.replace` (a new inode). A reader that has the old copy open keeps a consistent view
of it; the next reader sees the new one. Neither blocks the other. Within one Python process
DuckDB caches a database by path, so a process that keeps a reader open keeps seeing the
copy it opened until all its connections to it are closed.

Layout next to the published file (e.g. warehouse.duckdb):
    warehouse.duckdb             the published snapshot (read-only for everyone)
    warehouse.writer.duckdb      the writer's file (+ .wal while it runs)
    warehouse.writer.duckdb.lock the writer lock (flock); holds the holder's pid
"""

from __future__ import annotations

import datetime as dt
import fcntl
import os
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

from warehouse import fx
from warehouse.migrate import available, migrate

# How long a second writer waits for the first before giving up. A whole daily load takes
# seconds to a minute; a manual `gpuplan load` started during it should wait, not fail, but
# a stuck holder must not hang the caller forever.
DEFAULT_LOCK_TIMEOUT_S = 120.0
_LOCK_POLL_S = 0.1  # short enough to feel immediate, long enough not to spin a core


class WriterBusyError(RuntimeError):
    """Another process holds the writer lock (or has the writer file open) past the timeout."""


class NoWarehouseError(RuntimeError):
    """No published warehouse file exists yet."""


class OutdatedWarehouseError(RuntimeError):
    """The published snapshot predates migrations this code has: a writer must migrate it first."""


class PublishError(RuntimeError):
    """The snapshot could not be written next to the warehouse (disk full, not writable...)."""


def writer_path(warehouse: Path) -> Path:
    """The writer's private DuckDB file beside the published `warehouse`; only the single writer opens it."""
    return warehouse.with_name(warehouse.stem + ".writer" + warehouse.suffix)


def _lock_path(warehouse: Path) -> Path:
    private = writer_path(warehouse)
    return private.with_name(private.name + ".lock")


def _holder(fd: int) -> str:
    os.lseek(fd, 0, os.SEEK_SET)
    return os.read(fd, 200).decode("utf-8", "replace").strip() or "unknown process"


@contextmanager
def _exclusive_lock(path: Path, timeout_s: float) -> Iterator[None]:
    """flock(LOCK_EX) on `path`, polling up to `timeout_s`; released when the fd closes.

    flock (not lockf) so that two writers in one process also exclude each other, and the
    kernel drops the lock if the holder dies (SIGKILL included): no stale locks to clean.
    """
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise WriterBusyError(
                        f"another gpuplan writer ({_holder(fd)}) holds {path}; gave up after "
                        f"{timeout_s:g} s. Let it finish and retry (readers never block the writer)."
                    ) from None
                time.sleep(_LOCK_POLL_S)
        os.ftruncate(fd, 0)
        since = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        os.write(fd, f"pid {os.getpid()} since {since}\n".encode())
        yield
    finally:
        os.close(fd)


def _prepare(con: duckdb.DuckDBPyConnection) -> None:
    # Timestamps in the warehouse are UTC; naive ISO strings in feeds are read as UTC too.
    con.execute("SET TimeZone = 'UTC'")
    migrate(con)
    fx.ensure_rates(con)


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _publish(warehouse: Path) -> None:
    """Copy the (closed, checkpointed) writer file over the published one, atomically.

    Copy to a temp file in the same folder, fsync, os.replace, fsync the folder: a reader
    sees the old file or the new one, never a half-written one, even across a crash.
    """
    published = warehouse
    for stale in published.parent.glob(f".{published.name}.publish-*.tmp"):
        stale.unlink()  # left by a publisher that died; we hold the writer lock, so none is running
    temp = published.with_name(f".{published.name}.publish-{os.getpid()}.tmp")
    try:
        shutil.copyfile(writer_path(warehouse), temp)  # a kernel-side copy (sendfile) on Linux
        with temp.open("rb+") as copied:
            os.fsync(copied.fileno())
        os.replace(temp, published)
        _fsync_dir(published.parent)
    except OSError as exc:
        temp.unlink(missing_ok=True)
        raise PublishError(
            f"could not publish the warehouse to {published}: {exc.strerror or exc}; "
            f"the data is safe in {writer_path(warehouse)} and is published on the next successful run"
        ) from exc


def _seed_from_published(warehouse: Path) -> None:
    """A missing writer file starts as a copy of the published one, so no history is lost
    (first run after the writer file was deleted or a published file was restored)."""
    private = writer_path(warehouse)
    if private.exists() or not warehouse.exists():
        return
    temp = private.with_name(private.name + ".seed.tmp")
    shutil.copyfile(warehouse, temp)
    os.replace(temp, private)


@contextmanager
def writer(
    warehouse: Path, lock_timeout_s: float = DEFAULT_LOCK_TIMEOUT_S
) -> Iterator[duckdb.DuckDBPyConnection]:
    """The single read-write connection; publishes `warehouse` on a clean exit."""
    private = writer_path(warehouse)
    private.parent.mkdir(parents=True, exist_ok=True)
    with _exclusive_lock(_lock_path(warehouse), lock_timeout_s):
        _seed_from_published(warehouse)
        try:
            con = duckdb.connect(str(private))
        except duckdb.IOException as exc:
            raise WriterBusyError(
                f"cannot open the writer file {private}: {exc}. Only gpuplan's writer "
                f"may open it; read {warehouse} instead"
            ) from exc
        try:
            _prepare(con)
            yield con
            con.execute("CHECKPOINT")
        finally:
            con.close()
        _publish(warehouse)


def reader(warehouse: Path) -> duckdb.DuckDBPyConnection:
    """A read-only connection on the published warehouse; writes fail with a DuckDB error."""
    path = warehouse
    if not path.exists():
        raise NoWarehouseError(f"no warehouse at {path} yet: run `gpuplan refresh` first")
    con = duckdb.connect(str(path), read_only=True)
    con.execute("SET TimeZone = 'UTC'")
    _require_current_schema(con, path)
    return con


def _require_current_schema(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    """A snapshot published by an older gpuplan lacks newer tables: say so instead of a SQL error."""
    done = {row[0] for row in con.execute("SELECT version FROM schema_migrations").fetchall()}
    missing = [m.name for m in available() if m.version not in done]
    if missing:
        con.close()
        raise OutdatedWarehouseError(
            f"the warehouse at {path} was published by an older gpuplan (missing {', '.join(missing)}): "
            "run `gpuplan refresh` (or any command that writes) to migrate it"
        )


def in_memory() -> duckdb.DuckDBPyConnection:
    """A fresh, migrated in-memory warehouse with the bundled FX rates (nothing on disk)."""
    con = duckdb.connect(":memory:")
    _prepare(con)
    return con

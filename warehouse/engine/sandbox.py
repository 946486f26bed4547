"""Bounded, read-only SQL on the published warehouse: what `gpuplan sql` (and a shell on it) runs in.

Public API:
    sandbox(warehouse, *, memory_limit=None, spill_root=None) -> context manager -> Sandbox
    Sandbox.rows(query, *, timeout_s, max_rows=None) -> Answer (columns, types, an iterator of row batches)
    writes_files(con, statement) -> why a statement writes files (itself or what it runs), or None
    default_memory_limit() -> str;  SqlRefused, SqlTimeout, SqlOutOfMemory (SqlError, one-line messages)

What a query cannot do, set before it runs and locked (`lock_configuration`):
- write: the connection is read-only (`connect.reader`), external access is off (no COPY TO a
  path, ATTACH, reading other files, installing extensions), and settings cannot be changed back;
- run forever: `Sandbox.rows` interrupts it after `timeout_s`, fetching included (SqlTimeout);
- take the machine's memory: DuckDB's `memory_limit` (default `default_memory_limit()`), past
  which DuckDB spills and then stops with SqlOutOfMemory; Python holds one batch of rows at a time;
- write beside the warehouse: DuckDB's spill folder would be `warehouse.duckdb.tmp/`, up to 90% of
  the free disk. Here it is a private folder (mode 0700) under the system temp folder, named for
  the process, capped at `SPILL_SHARE_OF_FREE_DISK` of the free space there, and removed on exit;
  one left by a killed process is removed by the next sandbox. DuckDB exempts its temp folder from
  the external-access switch, and its cap counts only its own spill: a `COPY ... TO` or `EXPORT`
  into the folder wrote without bound (32 MB past a 10 MiB cap). So a statement that writes
  files (COPY, EXPORT) is refused before it runs, wherever it writes, and so
  is one that runs such a statement: `PREPARE p AS COPY ...` (refused at PREPARE, and a prepared
  statement is judged again by what it runs at EXECUTE) and `EXPLAIN ANALYZE COPY ...` (which
  runs the COPY). The statements of a query run one at a time, each judged just before it runs,
  so an EXECUTE is judged against the statements prepared before it. The other ways DuckDB lets a
  statement run another take no COPY: `query()` takes one SELECT, table macros are SELECTs,
  `query_table()` reads tables, and the table functions that write (`enable_logging`'s file
  storage, `checkpoint`) are stopped by the locked configuration and the read-only file;
  `COPY FROM DATABASE` copies between databases, and none but the temporary one can be attached.
  Only DuckDB's spill fills the folder, within the cap.
- fetch what is not shown: `max_rows` stops fetching there.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from warehouse.engine import connect

# DuckDB's own default is 80% of RAM, for one process owning the machine. `gpuplan sql` shares it
# with the daily run (whose writer uses DuckDB's default) and with other readers: a quarter keeps
# a runaway question from pushing the load into swap or the OOM killer.
MEMORY_SHARE = 0.25
# DuckDB's default spill cap is 90% of the free disk; a question must never fill the disk the
# daily run writes its crawls and snapshots to.
SPILL_SHARE_OF_FREE_DISK = 0.25
BATCH_ROWS = 10_000  # rows held in Python at once while streaming csv or json
# How DuckDB words a refusal: the read-only file, external access off, the locked configuration.
_REFUSALS = (
    "read-only mode",
    "file system operations are disabled",
    "disabled by configuration",
    "disabled through configuration",
    "has been locked",
)
# Statements that write files: DuckDB lets them write into its temp folder (the spill) unbounded.
_WRITES_FILES = frozenset({duckdb.StatementType.COPY, duckdb.StatementType.EXPORT})
# Statements that run another statement, judged by the one they run.
_RUNS_ANOTHER = frozenset(
    {duckdb.StatementType.PREPARE, duckdb.StatementType.EXECUTE, duckdb.StatementType.EXPLAIN}
)
# DuckDB prepares neither PREPARE nor EXPLAIN: one wrapper in another is as deep as it goes.
_MAX_NESTING = 3
_SPILL_PREFIX = "gpuplan-sql-"
_SPILL_NAME = re.compile(rf"^{_SPILL_PREFIX}(\d+)-")


class SqlError(RuntimeError):
    """A query the sandbox refused or stopped; the message is one line for the user."""


class SqlRefused(SqlError):
    """The query tried to write, leave the warehouse or change a setting."""


class SqlTimeout(SqlError):
    """The query ran past its time limit and was interrupted."""


class SqlOutOfMemory(SqlError):
    """The query needed more memory than its limit (and the spill folder) allow."""


@dataclass(frozen=True)
class Answer:
    """A query's columns, and its rows in batches (`max_rows` in all at most); `more` is True
    after the batches are read when `max_rows` cut the answer short. `types`: each column's type
    as DuckDB names it (`BIGINT`, `DECIMAL(18,3)`, `VARCHAR[]`)."""

    columns: list[str]
    batches: Iterator[list[tuple[Any, ...]]]
    _cut: list[bool]
    types: list[str] = field(default_factory=list)

    @property
    def more(self) -> bool:
        return self._cut[0]


def default_memory_limit() -> str:
    """MEMORY_SHARE of the memory this process may use (RAM, or the cgroup's limit if lower), in MiB."""
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    with suppress(OSError, ValueError):
        cgroup = Path("/sys/fs/cgroup/memory.max").read_text().strip()
        if cgroup.isdigit():
            total = min(total, int(cgroup))
    return f"{int(total * MEMORY_SHARE) // 2**20}MiB"


class Sandbox:
    """A locked-down reader connection; see the module docstring for what it bounds."""

    def __init__(self, con: duckdb.DuckDBPyConnection, memory_limit: str) -> None:
        self.con = con
        self.memory_limit = memory_limit

    def rows(self, query: str, *, timeout_s: float, max_rows: int | None = None) -> Answer:
        """Run `query`; its rows stream in batches through `Answer.batches` within `timeout_s` seconds
        from now. Raises SqlError (or a subclass) with a one-line message, also while iterating."""
        timer = threading.Timer(timeout_s, self.con.interrupt)
        timer.daemon = True
        timer.start()
        try:
            result = self._execute(query, timeout_s)
        except BaseException:
            timer.cancel()
            raise
        columns = [column[0] for column in result.description or []] if result is not None else []
        cut = [False]
        if result is None or not columns:  # no statement, or one without rows: nothing left to time
            timer.cancel()
            return Answer(columns, iter(()), cut)
        types = [str(column[1]) for column in result.description or []]
        return Answer(columns, self._batches(result, timer, timeout_s, max_rows, cut), cut, types)

    def _execute(self, query: str, timeout_s: float) -> duckdb.DuckDBPyConnection | None:
        """Run the statements of `query` one at a time, each judged just before it runs (an
        EXECUTE against what was prepared before it); the last one's result, None for no statement."""
        result = None
        try:
            for statement in self.con.extract_statements(query):
                refusal = writes_files(self.con, statement)
                if refusal is not None:
                    raise SqlRefused(
                        f"gpuplan sql is read-only: {refusal}, refused in read-only mode (into the spill "
                        "folder too); to keep an answer, use --format csv > FILE"
                    )
                result = self.con.execute(statement)
        except (duckdb.Error, MemoryError) as error:
            raise self._error(error, timeout_s) from None
        return result

    def _batches(
        self,
        result: duckdb.DuckDBPyConnection,
        timer: threading.Timer,
        timeout_s: float,
        max_rows: int | None,
        cut: list[bool],
    ) -> Iterator[list[tuple[Any, ...]]]:
        left = max_rows
        try:
            while left is None or left > 0:
                size = BATCH_ROWS if left is None else min(BATCH_ROWS, left)
                try:
                    batch = result.fetchmany(size)
                except (duckdb.Error, MemoryError) as error:
                    raise self._error(error, timeout_s) from None
                if not batch:
                    return
                if left is not None:
                    left -= len(batch)
                yield batch
            with suppress(duckdb.Error):  # one row more says whether the answer was cut
                cut[0] = bool(result.fetchmany(1))
        finally:
            timer.cancel()

    def _error(self, error: BaseException, timeout_s: float) -> SqlError:
        if isinstance(error, duckdb.InterruptException):
            return SqlTimeout(
                f"the query ran past its {timeout_s:g} s limit and was stopped "
                "(--timeout or GPUPLAN_SQL_TIMEOUT_S to allow more; add WHERE or LIMIT to ask less)"
            )
        if isinstance(error, duckdb.OutOfMemoryException | MemoryError):
            return SqlOutOfMemory(
                f"the query needs more memory than its limit of {self.memory_limit} "
                "(--memory-limit or GPUPLAN_SQL_MEMORY_LIMIT; or aggregate, filter or LIMIT it)"
            )
        first = (str(error).strip().splitlines() or [type(error).__name__])[0]
        if any(refusal in first for refusal in _REFUSALS):
            return SqlRefused(f"gpuplan sql is read-only: {first}")
        return SqlError(first)


def writes_files(con: duckdb.DuckDBPyConnection, statement: duckdb.Statement, depth: int = 0) -> str | None:
    """Why `statement` writes files ("COPY writes files", "COPY writes files (in EXECUTE)"),
    or None when it writes none. A statement that runs another (PREPARE, EXECUTE, EXPLAIN) is
    judged by the one it runs; one whose inner statement cannot be told writes, to be safe."""
    kind = statement.type
    if kind in _WRITES_FILES:
        return f"{kind.name} writes files"
    if kind not in _RUNS_ANOTHER:
        return None
    if depth >= _MAX_NESTING:
        return f"{kind.name} nested {depth} deep cannot be checked, and writes files to be safe"
    if kind is duckdb.StatementType.EXECUTE:
        inner = _prepared_text(con, statement.query)
        if inner is None:  # no such prepared statement: DuckDB says so when it runs
            return None
    else:
        inner = _wrapped_text(statement.query, kind)
    try:
        statements = con.extract_statements(inner) if inner is not None else None
    except duckdb.Error:
        statements = None
    if not statements:
        return f"what this {kind.name} runs cannot be checked, so it is taken to write files"
    for each in statements:
        why = writes_files(con, each, depth + 1)
        if why is not None:
            return why if why.endswith(")") else f"{why} (in {kind.name})"
    return None


def _words(query: str) -> list[tuple[int, str]]:
    """The tokens of `query` as (position, text), comments left out (DuckDB's own tokenizer)."""
    tokens = [(position, kind) for position, kind in duckdb.tokenize(query)]
    ends = [position for position, _ in tokens[1:]] + [len(query)]
    return [
        (position, query[position:end].strip())
        for (position, kind), end in zip(tokens, ends, strict=True)
        if kind != duckdb.token_type.comment
    ]


def _wrapped_text(query: str, kind: duckdb.StatementType) -> str | None:
    """The statement a PREPARE (`PREPARE name [(types)] AS statement`) or an EXPLAIN
    (`EXPLAIN [ANALYZE] [(options)] statement`) wraps, as text; None if it cannot be found."""
    words = _words(query)
    depth, bracket = 0, None
    for index, (position, text) in enumerate(words[1:], start=1):
        upper = text.upper()
        if upper[:1] in ("(", ")"):  # DuckDB's tokenizer may join brackets into one operator
            bracket = position if bracket is None and not depth else bracket
            depth += upper.count("(") - upper.count(")")
        elif depth:
            continue
        elif kind is duckdb.StatementType.PREPARE and upper == "AS" and index >= 2:
            return query[position + len(text) :]
        elif kind is duckdb.StatementType.EXPLAIN and upper not in ("ANALYZE", "ANALYSE"):
            return query[position:]
    # `EXPLAIN ANALYZE (SELECT ...)`: the bracket held the statement, not options
    return query[bracket:] if kind is duckdb.StatementType.EXPLAIN and bracket is not None else None


def _prepared_text(con: duckdb.DuckDBPyConnection, query: str) -> str | None:
    """The statement an `EXECUTE name [(values)]` runs, as DuckDB keeps it; None when there is none.
    DuckDB matches prepared names without regard to case, quoted or not."""
    words = _words(query)
    if len(words) < 2:
        return None
    name = words[1][1]
    if name.startswith('"') and name.endswith('"') and len(name) >= 2:
        name = name[1:-1].replace('""', '"')
    found = con.execute(
        "SELECT statement FROM duckdb_prepared_statements() WHERE lower(name) = lower($name)",
        {"name": name},
    ).fetchall()
    return "; ".join(text for (text,) in found) if found else None


@contextmanager
def sandbox(
    warehouse: Path, *, memory_limit: str | None = None, spill_root: Path | None = None
) -> Iterator[Sandbox]:
    """A Sandbox on the published `warehouse`; its spill folder (under `spill_root`, default the
    system temp folder) is removed when the block ends, and any left by dead processes first."""
    root = Path(spill_root or tempfile.gettempdir())
    remove_stale_spill(root)
    limit = memory_limit or default_memory_limit()
    spill = Path(tempfile.mkdtemp(prefix=f"{_SPILL_PREFIX}{os.getpid()}-", dir=root))
    try:
        with connect.reader(warehouse) as con:
            settings: Sequence[tuple[str, Any]] = (
                ("SET memory_limit = $value", limit),
                ("SET temp_directory = $value", str(spill)),
                ("SET max_temp_directory_size = $value", f"{_spill_cap_mib(root)}MiB"),
            )
            for statement, value in settings:
                try:
                    con.execute(statement, {"value": value})
                except duckdb.Error as error:
                    raise SqlError(f"cannot set up the SQL sandbox: {str(error).splitlines()[0]}") from None
            con.execute("SET enable_progress_bar = false")  # DuckDB would draw it on stderr, even into a pipe
            con.execute("SET enable_external_access = false")
            con.execute("SET lock_configuration = true")
            yield Sandbox(con, limit)
    finally:
        shutil.rmtree(spill, ignore_errors=True)


def _spill_cap_mib(root: Path) -> int:
    return max(int(shutil.disk_usage(root).free * SPILL_SHARE_OF_FREE_DISK) // 2**20, 1)


def remove_stale_spill(root: Path) -> list[Path]:
    """Remove the spill folders under `root` that belong to this user's dead processes (a query
    killed with SIGKILL leaves its folder); returns those removed."""
    removed = []
    for folder in root.glob(f"{_SPILL_PREFIX}*"):
        match = _SPILL_NAME.match(folder.name)
        try:
            if match is None or not folder.is_dir() or folder.stat().st_uid != os.getuid():
                continue
        except OSError:
            continue
        if not _alive(int(match.group(1))):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: alive
    return True

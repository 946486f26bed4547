"""A fresh migrated warehouse in milliseconds: one template per test session, copied for each test.

Migrating a warehouse from nothing (every migration, every definition, the bundled FX rates) takes
about 0.4 s. The session does it once, by the real path: `connect.writer` on an empty folder, the
first time a test asks for a fresh warehouse (under pytest-xdist, once per worker). Then:

    migrated(warehouse, source=None) -> warehouse
        Puts a copy of the template where `connect.writer(warehouse)` finds its writer file, when
        that folder holds no warehouse yet, so that the first writer migrates nothing. A folder
        that has one (writer file, published snapshot or `.prev`) is left as it is.
        `with connect.writer(migrated(settings.warehouse)) as con:`. With `source`, a copy of that
        writer file instead: data a session fixture loaded once (tests/cli/conftest.py).
    published_copy(warehouse, source) -> warehouse
        A copy of `source`, a warehouse a session fixture published once (snapshot and writer file):
        for tests that read a published warehouse (tests/cli/conftest.py).
    scratch() -> connection
        What `connect.in_memory()` gives (a migrated warehouse of one's own, with the session
        settings `connect` sets), as a connection on a copy of the template file: the copy is the
        file `connect.writer` made, byte for byte. Copies go when the session ends.
    template() -> Path
        The template writer file itself (read it, never write it).
    opened(warehouse) -> connection
        A connection on `warehouse`'s writer file as the writer opens it, without a writer session
        (`writer_con`: `opened(migrated(settings.warehouse))`).
    insert_rows(con, table, rows)
        SYNTHETIC rows (dicts) into a table by column name, in one bound INSERT.

Tests of what a first writer does on an empty folder (migrating, seeding, publishing the first
snapshot) and of `connect.in_memory()` itself must not use these. `tests/conftest.py` gives this
module the session's folder (`use`); outside a pytest session it refuses with a clear error.
tests/test_warehouse_template.py checks that a copy is what migrating from nothing makes.
"""

from __future__ import annotations

import itertools
import shutil
from pathlib import Path
from typing import Any

import duckdb

from warehouse.engine import connect, integrity

# The session setting connect._prepare gives every connection: timestamps are UTC, and naive
# ISO strings are read as UTC. (The test of this module fails if connect sets another one.)
SESSION = "SET TimeZone = 'UTC'"

_folder: Path | None = None
_template: Path | None = None
_copies = itertools.count()


def use(folder: Path | None) -> None:
    """Keep the template in `folder` (an empty folder of this test session; built on first use), or
    forget it (None) at the session's end."""
    global _folder, _template
    _folder, _template = folder, None


def template() -> Path:
    """The session's migrated writer file, made by `connect.writer` the first time it is asked for."""
    global _template
    if _template is None:
        if _folder is None:
            raise RuntimeError("warehouse_template.use(folder) was not called: run it under pytest")
        warehouse = _folder / "template" / "warehouse.duckdb"
        with connect.writer(warehouse, publish=False):
            pass
        _template = connect.writer_path(warehouse)
    return _template


def migrated(warehouse: Path, source: Path | None = None) -> Path:
    """`warehouse`, whose writer file is a copy of the template (or of `source`, a writer file a
    session fixture filled from the template) if its folder held no warehouse yet."""
    if _holds_none(warehouse):
        shutil.copyfile(source or template(), connect.writer_path(warehouse))
    return warehouse


def _holds_none(warehouse: Path) -> bool:
    """No writer file, published snapshot or `.prev` of `warehouse` yet (its folder is then made)."""
    existing = (warehouse, connect.writer_path(warehouse), connect.previous_path(warehouse))
    if any(path.exists() for path in existing):
        return False
    warehouse.parent.mkdir(parents=True, exist_ok=True)
    return True


def published_copy(warehouse: Path, source: Path) -> Path:
    """`warehouse` as a copy of `source`, a warehouse a session fixture published once (its snapshot
    and its writer file), if its folder held no warehouse yet: what a writer session that publishes
    gives, without one per test. The record of what was published names the snapshot's inode, so it
    stays behind; a writer then reads the copy's stamp instead."""
    if _holds_none(warehouse):
        shutil.copyfile(source, warehouse)
        shutil.copyfile(connect.writer_path(source), connect.writer_path(warehouse))
    return warehouse


def opened(warehouse: Path) -> duckdb.DuckDBPyConnection:
    """A read-write connection on `warehouse`'s writer file, opened as the writer opens it
    (`integrity.SAFE_CONFIG`, DuckDB's threads, UTC) but without a writer session (lock, stamp,
    checkpoint, publish): for the tests of the warehouse's rules on a copy they throw away."""
    return _thrown_away(connect.writer_path(warehouse), integrity.SAFE_CONFIG)


def _thrown_away(path: Path, config: dict[str, Any]) -> duckdb.DuckDBPyConnection:
    """A connection on a copy no one keeps, with connect's session setting: closing it need not
    write its log into the file (~10-25 ms a test)."""
    con = duckdb.connect(str(path), config=config)
    con.execute(SESSION)
    con.execute("PRAGMA disable_checkpoint_on_shutdown")
    return con


def scratch_folder() -> Path:
    """Where `scratch()` puts its copies (the session removes it at its end)."""
    if _folder is None:
        raise RuntimeError("warehouse_template.use(folder) was not called: run it under pytest")
    return _folder / "scratch"


def scratch() -> duckdb.DuckDBPyConnection:
    """A fresh migrated warehouse of one's own: a connection on a new copy of the template."""
    source = template()
    copy = scratch_folder() / f"{next(_copies)}.duckdb"
    copy.parent.mkdir(exist_ok=True)
    shutil.copyfile(source, copy)
    return _thrown_away(copy, {"threads": 1})


def insert_rows(con: duckdb.DuckDBPyConnection, table: str, rows: list[dict[str, Any]]) -> None:
    """SYNTHETIC `rows` into `table` (a name the test writes) by column name; a key a row lacks is
    NULL. Bound values in one statement: a DataFrame registered per insert cost ~4 ms each."""
    if not rows:
        return
    columns = list(dict.fromkeys(key for row in rows for key in row))
    values = ", ".join("(" + ", ".join("?" * len(columns)) + ")" for _ in rows)
    con.execute(
        f"INSERT INTO {table} ({', '.join(columns)}) VALUES {values}",
        [row.get(column) for row in rows for column in columns],
    )

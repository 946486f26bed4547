"""tests/warehouse_template.py: a copy of the session's template is the warehouse a migration makes."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import duckdb
import warehouse_template

from warehouse.engine import connect

# What differs by construction between two warehouses prepared apart: when each migration was
# applied (TIMESTAMP columns) and how many writer sessions the file has counted (the template's one).
_COUNTED = {("warehouse_stamp", "generation")}


_EXCLUDE = re.compile(r"EXCLUDE \(([^()]*)\)")


def _excludes_sorted(value: Any) -> Any:
    """DuckDB keeps a `* EXCLUDE (a, b, c)` as a set and writes it back in no fixed order, so two
    instances of one definition can differ in that order alone: compare the names sorted."""
    if not isinstance(value, str):
        return value
    return _EXCLUDE.sub(lambda m: "EXCLUDE (" + ", ".join(sorted(m.group(1).split(", "))) + ")", value)


def _catalog(con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
    """Every object's definition and every table's rows, less what differs by construction."""
    described = {
        "views": "SELECT view_name, sql FROM duckdb_views() WHERE NOT internal",
        "macros": "SELECT function_name, function_type, parameters, macro_definition FROM duckdb_functions() "
        "WHERE NOT internal AND function_type LIKE '%macro'",
        "tables": "SELECT table_name, sql FROM duckdb_tables()",
        "constraints": "SELECT table_name, constraint_type, constraint_text FROM duckdb_constraints()",
        "indexes": "SELECT index_name, sql FROM duckdb_indexes()",
        "sequences": "SELECT sequence_name, start_value, last_value FROM duckdb_sequences()",
        "types": "SELECT type_name, logical_type FROM duckdb_types() WHERE NOT internal",
    }
    catalog: dict[str, Any] = {
        name: sorted(tuple(_excludes_sorted(value) for value in row) for row in con.execute(sql).fetchall())
        for name, sql in described.items()
    }
    for (table,) in con.execute("SELECT table_name FROM duckdb_tables()").fetchall():
        columns = [
            name
            for name, kind in con.execute(
                "SELECT column_name, data_type FROM duckdb_columns() WHERE table_name = $table",
                {"table": table},
            ).fetchall()
            if not kind.startswith("TIMESTAMP") and (table, name) not in _COUNTED
        ]
        listed = ", ".join(f'"{name}"' for name in columns)
        catalog[f"rows of {table}"] = sorted(con.execute(f'SELECT {listed} FROM "{table}"').fetchall())
    return catalog


def test_a_copy_of_the_template_is_what_migrating_from_nothing_makes() -> None:
    with connect.in_memory() as migrated, warehouse_template.scratch() as copied:
        expected = _catalog(migrated)
        assert expected["views"] and expected["macros"] and expected["rows of fx_rates"]
        assert _catalog(copied) == expected


def test_a_copy_has_the_session_settings_connect_gives() -> None:
    def settings(con: duckdb.DuckDBPyConnection) -> set[tuple[str, str]]:
        return set(con.execute("SELECT name, value FROM duckdb_settings()").fetchall())

    with duckdb.connect(":memory:") as bare, connect.in_memory() as prepared:
        given = settings(prepared) - settings(bare)  # TimeZone, unless the host's zone is UTC already
    with warehouse_template.scratch() as copy:
        assert given <= settings(copy)


def test_the_first_writer_on_a_copy_migrates_nothing_and_publishes_it(tmp_path: Path) -> None:
    warehouse = warehouse_template.migrated(tmp_path / "warehouse.duckdb")
    with duckdb.connect(str(warehouse_template.template()), read_only=True) as con:
        applied = con.execute("SELECT * FROM schema_migrations ORDER BY version").fetchall()
    with connect.writer(warehouse) as con:
        assert con.execute("SELECT * FROM schema_migrations ORDER BY version").fetchall() == applied
    with connect.reader(warehouse) as con:
        assert con.execute("SELECT * FROM schema_migrations ORDER BY version").fetchall() == applied


def test_a_folder_that_has_a_warehouse_keeps_it(tmp_path: Path) -> None:
    published = tmp_path / "published" / "warehouse.duckdb"
    with connect.writer(warehouse_template.migrated(published)) as con:
        con.execute("INSERT INTO fx_rates VALUES ('2030-01-01', 'XTS', 7.0, 'synthetic')")
    lost = tmp_path / "lost" / "warehouse.duckdb"  # a published snapshot whose writer file is gone
    lost.parent.mkdir()
    shutil.copyfile(published, lost)
    for warehouse in (published, lost):
        before = {path.name: path.read_bytes() for path in warehouse.parent.iterdir()}
        warehouse_template.migrated(warehouse)
        assert {path.name: path.read_bytes() for path in warehouse.parent.iterdir()} == before

"""warehouse/engine/migrate.py on real DuckDB files: idempotent, recorded, never drops data silently.

The definitions step (views and macros) has its own tests: test_migrate_definitions.py.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from warehouse.engine.migrate import MigrationError, available, current, fingerprint, migrate


def test_migrations_apply_once_and_are_recorded(tmp_path: Path) -> None:
    path = tmp_path / "w.duckdb"
    with duckdb.connect(str(path)) as con:
        applied = migrate(con)
        assert applied == [m.name for m in available()] + [d.name for d in current()]
        con.execute("INSERT INTO fx_rates VALUES ('2030-01-01', 'CNY', 7.0, 'synthetic')")
        assert migrate(con) == []
    with duckdb.connect(str(path)) as con:  # a new process opening the same file
        assert migrate(con) == []
        recorded = con.execute("SELECT version, name FROM schema_migrations ORDER BY version").fetchall()
        assert recorded == [(migration.version, migration.name) for migration in available()]
        assert con.execute("SELECT count(*) FROM fx_rates").fetchall() == [(1,)]


def test_core_schema_and_warehouse_additions_exist(tmp_path: Path) -> None:
    with duckdb.connect(str(tmp_path / "w.duckdb")) as con:
        migrate(con)
        tables = {
            row[0] for row in con.execute("SELECT table_name FROM information_schema.tables").fetchall()
        }
        gpu_columns = {row[0] for row in con.execute("DESCRIBE gpus").fetchall()}
    assert {"crawl_runs", "offers", "rejected_offers", "fx_rates", "gpus"} <= tables
    assert {"latest_offers", "price_history_daily"} <= tables  # views
    assert "gpus_per_node" in gpu_columns


def _folder(tmp_path: Path, files: dict[str, str]) -> Path:
    folder = tmp_path / "migrations"
    folder.mkdir()
    for name, sql in files.items():
        (folder / name).write_text(sql, encoding="utf-8")
    return folder


def test_a_failing_migration_leaves_the_previous_version(tmp_path: Path) -> None:
    folder = _folder(
        tmp_path,
        {
            "001_a.sql": "CREATE TABLE a (x INTEGER);",
            "002_b.sql": "CREATE TABLE b (x INTEGER); SELECT * FROM no_such_table;",
        },
    )
    with duckdb.connect(str(tmp_path / "w.duckdb")) as con:
        with pytest.raises(MigrationError, match=r"002_b\.sql"):
            migrate(con, folder)
        tables = {
            row[0] for row in con.execute("SELECT table_name FROM information_schema.tables").fetchall()
        }
        assert "a" in tables and "b" not in tables
        assert con.execute("SELECT name FROM schema_migrations").fetchall() == [("001_a.sql",)]


@pytest.mark.parametrize(
    "sql",
    [
        "DROP TABLE a;",
        "ALTER TABLE a DROP COLUMN x;",
        "DELETE FROM a WHERE x > 0;",
        "CREATE OR REPLACE TABLE a (y INTEGER);",
    ],
)
def test_a_migration_that_drops_data_must_say_so(tmp_path: Path, sql: str) -> None:
    folder = _folder(tmp_path, {"001_a.sql": "CREATE TABLE a (x INTEGER, y INTEGER);", "002_drop.sql": sql})
    with pytest.raises(MigrationError, match="drops data"):
        available(folder)
    (folder / "002_drop.sql").write_text(f"-- drops data: synthetic test of a declared drop\n{sql}")
    with duckdb.connect(str(tmp_path / "w.duckdb")) as con:
        assert migrate(con, folder) == ["001_a.sql", "002_drop.sql"]


def test_a_comment_mentioning_a_drop_is_not_a_drop(tmp_path: Path) -> None:
    folder = _folder(tmp_path, {"001_a.sql": "-- never DROP TABLE here\nCREATE TABLE a (x INTEGER);"})
    assert [migration.name for migration in available(folder)] == ["001_a.sql"]


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ({"1_a.sql": "SELECT 1;"}, "NNN_name.sql"),
        ({"001_a.sql": "SELECT 1;", "001_b.sql": "SELECT 1;"}, "two migrations numbered 001"),
    ],
)
def test_badly_named_migrations_are_refused(tmp_path: Path, files: dict[str, str], message: str) -> None:
    with pytest.raises(MigrationError, match=message):
        available(_folder(tmp_path, files))


def test_an_edited_applied_migration_is_refused_and_the_fingerprint_moves(tmp_path: Path) -> None:
    folder = _folder(tmp_path, {"001_a.sql": "CREATE TABLE a (x INTEGER);"})
    before = fingerprint(folder)
    with duckdb.connect(str(tmp_path / "w.duckdb")) as con:
        migrate(con, folder)
        (folder / "001_a.sql").write_text("CREATE TABLE a (x INTEGER, y INTEGER);", "utf-8")
        assert fingerprint(folder) != before
        with pytest.raises(MigrationError, match=r"001_a\.sql was changed after this warehouse applied it"):
            migrate(con, folder)
        (folder / "001_a.sql").write_text("CREATE TABLE a (x INTEGER);", "utf-8")  # put back: fine again
        assert migrate(con, folder) == []
        assert fingerprint(folder) == before


def test_an_edit_of_the_same_size_at_once_moves_the_fingerprint(tmp_path: Path) -> None:
    # The files are read once per content (warehouse.engine.migrate keeps what it parsed): an edit that keeps
    # the size, made within the same clock tick as the last read, must still be seen.
    folder = _folder(tmp_path, {"001_a.sql": "CREATE TABLE a (x INTEGER);"})
    before = fingerprint(folder)
    (folder / "001_a.sql").write_text("CREATE TABLE b (x INTEGER);", "utf-8")
    assert fingerprint(folder) != before
    assert [m.sql for m in available(folder)] == ["CREATE TABLE b (x INTEGER);"]

"""warehouse/schema.py: warehouse/schema.sql is every table as the migrations leave it, and current."""

from __future__ import annotations

import duckdb
import pytest

from warehouse import schema


@pytest.fixture(scope="module")
def generated() -> str:
    """What `schema.generated()` makes (a warehouse migrated from nothing, ~0.2 s), once for the module."""
    return schema.generated()


def test_schema_sql_is_current(generated: str) -> None:
    """Fails when a migration changed a table and schema.sql was not generated again."""
    assert schema.PATH.read_text(encoding="utf-8") == generated, (
        "warehouse/schema.sql is stale: run `python -m warehouse.schema`"
    )


def test_schema_sql_makes_the_tables_the_migrations_make(generated: str) -> None:
    """The file is real DDL: run on an empty database it makes the same tables, columns and keys."""
    with duckdb.connect() as con:
        con.execute(schema.PATH.read_text(encoding="utf-8"))
        assert schema.render(con) == generated


def test_check_says_when_the_file_is_stale(tmp_path, monkeypatch, capsys, generated: str) -> None:
    stale = tmp_path / "schema.sql"
    stale.write_text(generated.replace("NOT NULL", "", 1), encoding="utf-8")
    monkeypatch.setattr(schema, "PATH", stale)
    monkeypatch.setattr(schema, "generated", lambda: generated)  # main's logic; generated() is tested above
    assert schema.main(["--check"]) == 1
    assert "is stale: run `python -m warehouse.schema`" in capsys.readouterr().err
    assert schema.main([]) == 0
    assert schema.main(["--check"]) == 0
    assert stale.read_text(encoding="utf-8") == generated

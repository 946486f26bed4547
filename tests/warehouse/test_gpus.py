"""warehouse/gpus.py: the gpus table mirrors sizing.catalog.load_gpus()."""

from __future__ import annotations

import dataclasses

import duckdb
import pytest

from sizing.catalog import load_gpus
from warehouse import gpus


def test_the_table_mirrors_the_catalog(writer_con: duckdb.DuckDBPyConnection) -> None:
    catalog = load_gpus()
    assert gpus.sync_catalog(writer_con) == len(catalog)
    assert gpus.sync_catalog(writer_con) == len(catalog)  # again: same rows, no duplicates
    columns = [field.name for field in dataclasses.fields(catalog[0])]
    rows = writer_con.execute(f"SELECT {', '.join(columns)} FROM gpus ORDER BY gpu_model").fetchall()
    expected = sorted(tuple(dataclasses.asdict(gpu).values()) for gpu in catalog)
    assert rows == expected


def test_a_model_dropped_from_the_catalog_leaves_the_table(
    writer_con: duckdb.DuckDBPyConnection, monkeypatch: pytest.MonkeyPatch
) -> None:
    gpus.sync_catalog(writer_con)
    monkeypatch.setattr(gpus, "load_gpus", lambda: load_gpus()[1:])
    gpus.sync_catalog(writer_con)
    remaining = {row[0] for row in writer_con.execute("SELECT gpu_model FROM gpus").fetchall()}
    assert load_gpus()[0].gpu_model not in remaining and len(remaining) == len(load_gpus()) - 1

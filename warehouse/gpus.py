"""The GPU catalog for SQL users: the `gpus` table mirrors `sizing.catalog.load_gpus()`.

Public API (stable):
    sync_catalog(con) -> int   make `gpus` equal to the catalog (one transaction); returns its rows

The sizing package owns the catalog (`sizing/data/gpus.csv`); the table is a copy, so a model
removed from the catalog leaves the table too. Offers keep their `gpu_model` string either way.
"""

from __future__ import annotations

import dataclasses

import duckdb
import pandas as pd

from sizing.catalog import load_gpus
from warehouse import queries


def sync_catalog(con: duckdb.DuckDBPyConnection) -> int:
    """Replace the rows of `gpus` with the current catalog; returns the number of GPU models."""
    catalog = pd.DataFrame([dataclasses.asdict(gpu) for gpu in load_gpus()])
    con.register("gpu_catalog", catalog)
    con.execute("BEGIN TRANSACTION")
    try:
        queries.execute(con, "gpus/sync")
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    finally:
        con.unregister("gpu_catalog")
    return len(catalog)

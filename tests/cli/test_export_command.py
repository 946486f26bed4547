"""`gpuplan export`: the offline demo's days as an open dataset, read back without gpuplan.

The dataset must hold what the warehouse holds (row counts and price sums per table and day), every
hash must verify, a second export must change nothing, a file damaged on purpose must be caught by
`--verify`, and a changed day must come out as a new version beside the old one.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from gpuplan.cli import app
from warehouse import export
from warehouse.engine import connect

pytestmark = pytest.mark.slow  # one offline refresh for the module

DAY = dt.date(2026, 11, 30)
# Each table's day column and the price columns whose sums must match.
SUMS = {
    "offers": ("observed_date", ["price_amount", "price_usd_per_gpu_hour", "price_cny_per_gpu_hour"]),
    "price_history_daily": ("observed_date", ["min_usd_per_gpu_hour", "median_cny_per_gpu_hour"]),
    "cheapest_plans": ("plan_date", ["rent_usd_per_month", "total_usd", "total_cny"]),
    "plan_changes": ("change_date", ["old_measure_usd", "new_measure_usd", "pct_change"]),
}


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("demo")
    env = {"GPUPLAN_WAREHOUSE": str(root / "warehouse.duckdb"), "GPUPLAN_CRAWL_DIR": str(root / "crawls")}
    result = CliRunner().invoke(app, ["refresh", "--offline", "--date", DAY.isoformat()], env=env)
    assert result.exit_code == 0, result.output
    return env


def _export(env: dict[str, str], *args: str) -> str:
    result = CliRunner().invoke(app, ["export", *args], env=env)
    assert result.exit_code == 0, result.output
    return result.output


def _sums(con: duckdb.DuckDBPyConnection, source: str, day_column: str, columns: list[str]) -> list[tuple]:
    measures = ", ".join(f"round(sum({c}), 6)" for c in columns)
    return con.execute(
        f"SELECT {day_column}, count(*), {measures} FROM {source} GROUP BY ALL ORDER BY 1"
    ).fetchall()


def test_the_dataset_holds_what_the_warehouse_holds_and_reads_without_gpuplan(
    demo: dict[str, str], tmp_path: Path
) -> None:
    folder = tmp_path / "dataset"
    _export(demo, str(folder))
    with connect.reader(Path(demo["GPUPLAN_WAREHOUSE"])) as con:
        days = export.dataset_days(con)
        assert DAY in days
        expected = {table: _sums(con, table, column, prices) for table, (column, prices) in SUMS.items()}
    for table, (column, prices) in SUMS.items():
        with duckdb.connect() as con:
            con.execute(
                f"CREATE VIEW exported AS SELECT * EXCLUDE (day) FROM read_parquet("
                f"'{folder}/{table}/*/*.parquet', hive_partitioning = true)"
            )
            assert _sums(con, "exported", column, prices) == expected[table], table
    assert expected["offers"] and expected["cheapest_plans"] and expected["plan_changes"]

    # pandas and polars read the same files (the README's queries), and the CSV holds the same offers
    import pandas as pd
    import polars as pl

    offers = pd.read_parquet(folder / "offers")
    assert len(offers) == sum(row[1] for row in expected["offers"])
    plans = pl.read_parquet(f"{folder}/cheapest_plans/*/*.parquet", hive_partitioning=True)
    assert plans.height == sum(row[1] for row in expected["cheapest_plans"])
    with duckdb.connect() as con:
        (csv_rows,) = con.execute(f"SELECT count(*) FROM read_csv('{folder}/offers_csv/*/*.csv')").fetchone()  # type: ignore[misc]
    assert csv_rows == len(offers)

    manifest = json.loads((folder / "manifests" / f"day={DAY}" / "manifest.json").read_text())
    assert manifest["version"] == 1 and manifest["day"] == DAY.isoformat()
    assert {p["platform"] for p in manifest["platforms"]} >= {"vastai", "runpod", "autodl"}
    columns = {c["name"]: c for f in manifest["files"] if f["table"] == "offers" for c in f["columns"]}
    assert columns["price_usd_per_gpu_hour"]["unit"] == {"currency": "USD", "per": "gpu hour"}
    assert columns["price_cny_per_gpu_hour"]["unit"]["currency"] == "CNY"
    assert "price_currency" in columns["price_amount"]["unit"]["currency"]


def test_verify_passes_a_second_export_changes_nothing_and_damage_is_caught(
    demo: dict[str, str], tmp_path: Path
) -> None:
    folder = tmp_path / "dataset"
    _export(demo, str(folder))
    files = {p: (p.stat().st_ino, p.stat().st_mtime_ns) for p in folder.rglob("*") if p.is_file()}
    assert "every file matches its manifest" in _export(demo, "--verify", str(folder))

    again = _export(demo, str(folder))
    assert "written" not in again and "unchanged (v1)" in again
    assert {p: (p.stat().st_ino, p.stat().st_mtime_ns) for p in folder.rglob("*") if p.is_file()} == files

    damaged = folder / "offers" / f"day={DAY}" / "offers.parquet"
    data = bytearray(damaged.read_bytes())
    data[len(data) // 2] ^= 0xFF
    damaged.write_bytes(bytes(data))  # the current file and its version share the bytes (a hard link)
    result = CliRunner().invoke(app, ["export", "--verify", str(folder)], env=demo)
    assert result.exit_code == 1
    assert f"day={DAY}/offers.parquet: sha256 differs from its manifest's" in result.output


def test_a_changed_day_is_a_new_version_and_the_old_one_stays(demo: dict[str, str], tmp_path: Path) -> None:
    folder = tmp_path / "dataset"
    warehouse = tmp_path / "copy" / "warehouse.duckdb"
    warehouse.parent.mkdir()
    warehouse.write_bytes(Path(demo["GPUPLAN_WAREHOUSE"]).read_bytes())
    env = {**demo, "GPUPLAN_WAREHOUSE": str(warehouse)}
    _export(env, str(folder), "--day", DAY.isoformat())
    with duckdb.connect(str(warehouse)) as con:  # a later crawl of the same day: one more offer
        con.execute(
            "INSERT INTO offers SELECT * REPLACE (offer_id || '-again' AS offer_id) FROM offers "
            "WHERE observed_date = $day LIMIT 1",
            {"day": DAY},
        )
    assert f"{DAY}: v2 written" in _export(env, str(folder), "--day", DAY.isoformat())
    v1 = folder / "versions" / f"day={DAY}" / "v1" / "offers.parquet"
    v2 = folder / "versions" / f"day={DAY}" / "v2" / "offers.parquet"
    with duckdb.connect() as con:
        old, new, current = (
            con.execute(f"SELECT count(*) FROM read_parquet('{path}')").fetchone()[0]  # type: ignore[index]
            for path in (v1, v2, folder / "offers" / f"day={DAY}" / "offers.parquet")
        )
    assert new == old + 1 and current == new
    manifest = json.loads((folder / "manifests" / f"day={DAY}" / "manifest.json").read_text())
    assert (manifest["version"], manifest["supersedes"]) == (2, 1)
    assert "every file matches its manifest" in _export(env, "--verify", str(folder))


def test_every_price_column_of_the_dataset_states_its_unit(demo: dict[str, str]) -> None:
    with connect.reader(Path(demo["GPUPLAN_WAREHOUSE"])) as con:
        for table in export.TABLES:
            for name, kind, *_ in con.execute(f"DESCRIBE {table}").fetchall():
                pricey = kind == "DOUBLE" and any(
                    w in name for w in ("price", "usd", "cny", "rent", "cost", "total")
                )
                if pricey and "tokens" not in name.replace("per_billion_tokens", ""):
                    assert export.price_unit(name), f"{table}.{name} has no unit in the dataset's manifest"


def test_every_table_has_its_named_query() -> None:
    assert set(export.QUERIES) == set(export.TABLES)

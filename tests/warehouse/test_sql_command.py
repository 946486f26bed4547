"""`gpuplan sql`: read-only queries on the published warehouse, as table, csv or json."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from synthetic_crawls import crawl_writer, synthetic_offer
from typer.testing import CliRunner, Result
from warehouse_template import migrated, published_copy

from config.settings import Settings
from config.shown_text import visible
from gpuplan.cli import app
from gpuplan.commands.sql import MAX_QUERY_BYTES
from gpuplan.sql_answers import _csv_cell
from warehouse.engine import connect
from warehouse.loading import load_crawl


@pytest.fixture(scope="module")
def published_once(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A published warehouse with two SYNTHETIC offers, made once for the module."""
    folder = tmp_path_factory.mktemp("published")
    write_crawl = crawl_writer(folder / "crawls")
    with connect.writer(migrated(folder / "warehouse.duckdb")) as con:
        load_crawl(
            con, write_crawl([synthetic_offer(1, price_amount=2.5), synthetic_offer(2, region="[U] ok")])
        )
    return folder / "warehouse.duckdb"


@pytest.fixture
def published(settings: Settings, published_once: Path) -> Settings:
    """A copy of the module's published warehouse, of the test's own."""
    published_copy(settings.warehouse, published_once)
    return settings


def _sql(settings: Settings, *args: str) -> Result:
    return CliRunner(env={"COLUMNS": "200"}).invoke(
        app, ["--warehouse", str(settings.warehouse), "sql", *args]
    )


QUERY = "SELECT offer_id, price_amount, observed_date, region FROM offers ORDER BY offer_id"


def test_table_output(published: Settings) -> None:
    result = _sql(published, QUERY)
    assert result.exit_code == 0, result.output
    assert "synthetic-1" in result.stdout and "2.5" in result.stdout
    assert "[U] ok" in result.stdout  # data is printed as text, never read as rich markup
    lines = result.stdout.splitlines()
    # DuckDB's box: names, then types; every row and column shown, so no footer
    cells = [[cell.strip() for cell in line.split("│")[1:-1]] for line in lines]
    assert cells[1] == ["offer_id", "price_amount", "observed_date", "region"]
    assert cells[2] == ["varchar", "double", "date", "varchar"]
    assert len(lines) == 7 and lines[-1].startswith("└")


def test_csv_output(published: Settings) -> None:
    result = _sql(published, QUERY, "--format", "csv")
    assert result.exit_code == 0, result.output
    rows = list(csv.reader(io.StringIO(result.stdout)))
    assert rows[0] == ["offer_id", "price_amount", "observed_date", "region"]
    assert rows[1] == ["synthetic-1", "2.5", "2026-10-01", "synthetic-region"]


def test_json_output(published: Settings) -> None:
    result = _sql(published, QUERY + " LIMIT 1", "--format", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == [
        {
            "offer_id": "synthetic-1",
            "price_amount": 2.5,
            "observed_date": "2026-10-01",
            "region": "synthetic-region",
        }
    ]


@pytest.mark.parametrize(
    "statement",
    [
        "DELETE FROM offers",
        "CREATE TABLE sneaky AS SELECT 1",
        "COPY offers TO 'offers.csv'",
        "ATTACH 'other.duckdb' AS other",
    ],
)
def test_writing_is_one_clear_error(published: Settings, statement: str) -> None:
    before = published.warehouse.read_bytes()
    result = _sql(published, statement)
    assert result.exit_code == 1
    assert result.stderr.startswith("error: gpuplan sql is read-only") and result.stderr.count("\n") == 1
    assert published.warehouse.read_bytes() == before


def test_bad_sql_is_one_line(published: Settings) -> None:
    result = _sql(published, "SELEC nonsense")
    assert result.exit_code == 1
    assert result.stderr.startswith("error: Parser Error") and result.stderr.count("\n") == 1


def test_no_warehouse_yet(settings: Settings) -> None:
    result = _sql(settings, "SELECT 1")
    assert result.exit_code != 0
    assert isinstance(result.exception, connect.NoWarehouseError)  # gpuplan.cli.run prints it as one line


def test_control_and_bidi_characters_are_shown_as_escapes() -> None:
    assert visible("a\x1b[31mb\rc\u202ed\ne\tf") == "a\\x1b[31mb\\x0dc\\u202ed\ne\\x09f"


@pytest.mark.parametrize(
    ("value", "cell"),
    [
        ("=1+1", "'=1+1"),
        ("+cmd|' /C calc'!A0", "'+cmd|' /C calc'!A0"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("-1.5", "-1.5"),  # a number as text is no formula
        ("two\nlines", "two\nlines"),  # a quoted CSV field holds a line break fine
        ("\x1b[2J", "\\x1b[2J"),
        (-1.5, -1.5),
    ],
)
def test_csv_cells_cannot_run_as_formulas(value: object, cell: object) -> None:
    assert _csv_cell(value) == cell


def test_a_query_and_a_file_at_once_is_refused(published: Settings, tmp_path: Path) -> None:
    path = tmp_path / "q.sql"
    path.write_text("SELECT 1", "utf-8")
    result = _sql(published, "SELECT 2", "-f", str(path))
    assert result.exit_code == 2 and "give the query or -f FILE, not both" in result.stderr


def test_a_query_file_over_the_limit_is_refused(published: Settings, tmp_path: Path) -> None:
    path = tmp_path / "huge.sql"
    with path.open("wb") as sparse:
        sparse.truncate(MAX_QUERY_BYTES + 1)
    result = _sql(published, "-f", str(path))
    assert result.exit_code == 2 and "is over 16,777,216 bytes" in " ".join(result.stderr.split())

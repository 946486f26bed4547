"""What `gpuplan sql` shows people at 80 columns: DuckDB's own box (the columns that fit, the middle
elided, a footer saying what was left out), floats to 4 figures in the box and exact in csv and
json, and the shell's `.tables`, `.schema`, `.mode line` and `.columns`.

Before: `SELECT * FROM latest_offers LIMIT 5` at 80 columns printed 33 empty one-character columns,
no header and no value; at 120 columns every cell was "…".
"""

from __future__ import annotations

import csv
import io
import json

from rich.cells import cell_len
from typer.testing import CliRunner, Result

from config.settings import Settings
from gpuplan.cli import app
from gpuplan.sql_tables import WIDE_HINT, round_figure

WIDE = "SELECT * FROM latest_offers ORDER BY platform, offer_id, pricing_type LIMIT 5"
FIGURES = "SELECT 3.14159265::DOUBLE AS pi, 12345.678::DECIMAL(10, 3) AS big, 0.000123456::DOUBLE AS small"


def _sql(settings: Settings, *args: str, columns: int = 80, stdin: str | None = None) -> Result:
    return CliRunner(env={"COLUMNS": str(columns)}).invoke(
        app, ["--warehouse", str(settings.warehouse), "sql", *args], input=stdin
    )


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.split("│")[1:-1]]


def test_a_wide_table_at_80_columns_keeps_the_columns_that_fit(recorded: Settings) -> None:
    result = _sql(recorded, WIDE)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert max(cell_len(line) for line in lines) <= 80
    names, types = _cells(lines[1]), _cells(lines[2])
    assert names[0] == "crawl_id" and "platform" in names and "…" in names  # the middle elided
    assert len([name for name in names if name != "…"]) >= 3 and all(names)
    assert types[names.index("platform")] == "varchar"
    rows = [_cells(line) for line in lines[4:9]]
    assert [row[names.index("platform")] for row in rows] == ["alicloud"] * 5  # values, not "…"
    shown = len(names) - 1
    footer = " ".join(lines[10].split())
    assert footer == f"5 rows {len(recorded_columns(recorded))} columns ({shown} shown)"
    assert lines[11] == WIDE_HINT and "`.mode line`" in WIDE_HINT


def recorded_columns(settings: Settings) -> list[str]:
    described = _sql(settings, "SELECT * FROM latest_offers LIMIT 0", "--format", "csv")
    return described.stdout.strip().split(",")


def test_at_120_columns_more_columns_show_whole(recorded: Settings) -> None:
    narrow = _cells(_sql(recorded, WIDE).stdout.splitlines()[1])
    lines = _sql(recorded, WIDE, columns=120).stdout.splitlines()
    assert max(cell_len(line) for line in lines) <= 120
    wide = _cells(lines[1])
    assert len(wide) > len(narrow)
    assert all(
        cell not in ("", "…")
        for line in lines[4:9]
        for cell, name in zip(_cells(line), wide, strict=True)
        if name != "…"
    )


def test_floats_are_rounded_in_the_box_and_exact_in_csv_and_json(recorded: Settings) -> None:
    box = _sql(recorded, FIGURES).stdout.splitlines()
    assert _cells(box[2]) == ["double", "double", "double"]  # a rounded decimal is a double
    assert _cells(box[4]) == ["3.142", "12350.0", "0.0001235"]
    (row,) = list(csv.DictReader(io.StringIO(_sql(recorded, FIGURES, "--format", "csv").stdout)))
    assert row == {"pi": "3.14159265", "big": "12345.678", "small": "0.000123456"}
    assert json.loads(_sql(recorded, FIGURES, "--format", "json").stdout) == [
        {"pi": 3.14159265, "big": 12345.678, "small": 0.000123456}
    ]
    assert [round_figure(value) for value in (2.675, 99999.0, -0.00012345, float("inf"))] == [
        2.675,
        1e5,
        -0.0001234,
        float("inf"),
    ]


def test_line_mode_shows_every_column_of_a_wide_row(recorded: Settings) -> None:
    one_row = WIDE.replace("LIMIT 5", "LIMIT 1")
    result = _sql(recorded, stdin=f".mode line\n{one_row};\n")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    names = recorded_columns(recorded)
    assert [line.split(" = ", 1)[0].strip() for line in lines] == names
    assert len({line.index(" = ") for line in lines}) == 1  # names right-aligned
    assert _sql(recorded, one_row, "--format", "line").stdout == result.stdout


def test_the_box_on_its_side(recorded: Settings) -> None:
    result = _sql(recorded, stdin=f".columns\n{FIGURES};\n.rows\n{FIGURES};\n")
    lines = result.stdout.splitlines()
    assert _cells(lines[1]) == ["Column", "Type", "Row 1"]
    assert _cells(lines[3]) == ["pi", "double", "3.142"]
    assert _cells(lines[-4]) == ["double", "double", "double"]  # .rows: back to rows


def test_tables_puts_views_and_the_internal_ones_apart(recorded: Settings) -> None:
    result = _sql(recorded, stdin=".tables\n")
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert max(cell_len(line) for line in text.splitlines()) <= 80
    tables, views, internal = (text.split(heading, 1)[1] for heading in ("tables:", "views:", "internal:"))
    tables, views = tables.split("views:")[0].split(), views.split("internal:")[0].split()
    assert {"offers", "crawl_runs", "fx_rates", "gpus"} <= set(tables)
    assert {"latest_offers", "price_history_daily"} <= set(views) and not set(views) & set(tables)
    hidden = {"schema_migrations", "warehouse_stamp", "day_runs", "usable_runs"}
    assert hidden <= set(internal.split()) and not hidden & (set(tables) | set(views))


def test_schema_shows_how_a_table_or_view_is_made(recorded: Settings) -> None:
    result = _sql(recorded, stdin=".schema gpus\n.schema LATEST_OFFERS\n.schema nonesuch\n")
    assert result.exit_code == 1  # the last one
    assert result.stdout.startswith("CREATE TABLE gpus(gpu_model VARCHAR PRIMARY KEY")
    assert "CREATE VIEW latest_offers" in result.stdout
    assert result.stderr == "error: no table or view 'nonesuch'; .tables lists them\n"
    every = _sql(recorded, stdin=".schema\n").stdout
    assert every.count("CREATE TABLE") >= 10 and every.count("CREATE VIEW") >= 5


def test_help_fits_80_columns(recorded: Settings) -> None:
    lines = _sql(recorded, stdin=".help\n").stdout.splitlines()
    assert max(cell_len(line) for line in lines) <= 80
    assert {".tables", ".schema", ".mode", ".columns,", ".quit"} <= {line.split()[0] for line in lines}

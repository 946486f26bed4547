"""`gpuplan gpus`: the catalog with names and the cheapest price now, fitted to the terminal."""

from __future__ import annotations

import json

from typer.testing import CliRunner, Result

from config.settings import Settings
from gpuplan.cli import app
from sizing import gpu_names
from sizing.catalog import load_gpus


def _gpus(settings: Settings, *args: str, columns: int = 80) -> Result:
    return CliRunner(env={"COLUMNS": str(columns)}).invoke(
        app, ["--warehouse", str(settings.warehouse), "gpus", *args]
    )


def test_every_card_is_one_line_within_80_columns(recorded: Settings) -> None:
    result = _gpus(recorded)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert max(len(line.rstrip()) for line in lines) <= 80
    for gpu in load_gpus():
        assert sum(line.startswith(f"{gpu.gpu_model} ") for line in lines) == 1, gpu.gpu_model
    assert "--wide shows all" in result.output  # what did not fit is said


def test_json_has_every_card_its_names_and_the_cheapest_plannable_price(recorded: Settings) -> None:
    result = _gpus(recorded, "--json")
    assert result.exit_code == 0, result.output
    records = {record["gpu_model"]: record for record in json.loads(result.stdout)}
    assert set(records) == {gpu.gpu_model for gpu in load_gpus()}
    h100 = records["H100 SXM 80GB"]
    assert h100["aliases"] == list(gpu_names.aliases("H100 SXM 80GB"))
    assert "H100" in h100["aliases"]
    # the recorded crawls price the H100 SXM on several platforms; the cheapest is at least the floor
    assert h100["platforms"] >= 2 and h100["min_usd_per_gpu_hour"] > 0.5
    assert h100["cheapest_platform"] and h100["cheapest_run_day"]


def test_wide_shows_every_column_and_name(recorded: Settings) -> None:
    result = _gpus(recorded, "--wide")
    assert result.exit_code == 0, result.output
    header = next(line for line in result.output.splitlines() if line.startswith("GPU "))
    assert header.split() == ["GPU", "GB", "form", "names", "all", "free", "USD/h", "platform", "crawled"]
    row = next(line for line in result.output.splitlines() if line.startswith("H100 SXM 80GB "))
    assert all(name in row for name in gpu_names.aliases("H100 SXM 80GB"))


def test_without_a_warehouse_the_catalog_is_listed_and_says_how_to_get_prices(settings: Settings) -> None:
    result = _gpus(settings)
    assert result.exit_code == 0, result.output
    assert "A100 SXM 80GB" in result.output
    assert "no prices: no warehouse at" in result.output and "gpuplan refresh" in result.output

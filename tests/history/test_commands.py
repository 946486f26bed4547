"""`gpuplan import`, `history` and `backfill` on a published warehouse file, as a user runs them."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from typer.testing import CliRunner, Result

from config.settings import Settings
from gpuplan.cli import app

pytestmark = pytest.mark.slow  # imports and backfills real history


def _run(settings: Settings, *args: str, columns: int = 200) -> Result:
    return CliRunner(env={"COLUMNS": str(columns)}).invoke(
        app, ["--warehouse", str(settings.warehouse), *args]
    )


def _cells(line: str) -> list[str]:
    """A table row's cells: columns are set apart by two or more spaces (gpuplan.display)."""
    return re.split(r"\s{2,}", line.strip())


def _fits(output: str, width: int = 80) -> None:
    too_long = [line for line in output.splitlines() if len(line.rstrip()) > width]
    assert not too_long, too_long


def test_import_history_and_backfill(settings: Settings, lambda_catalogs, sample, tmp_path) -> None:
    header_only = sample("skypilot_catalog_format/lambda_vms_2026-05-07_header_only.csv")
    imported = _run(settings, "import", "skypilot", *map(str, lambda_catalogs), str(header_only))
    # the header-only catalog fails visibly (exit 1, its reason); the other four load
    assert imported.exit_code == 1
    assert "header and no rows" in imported.output and "not a sold-out cloud" in imported.output
    table = {
        cells[0]: cells[1:]
        for line in imported.output.splitlines()
        if (cells := _cells(line))[0].startswith("lambda_vms")
    }
    # file: runs ok, failed, loaded before, offers, refused, not GPU
    assert table["lambda_vms_2026-04-02.csv"] == ["1", "0", "0", "255", "0", "17"]
    assert table["lambda_vms_2026-05-07.csv"] == ["1", "0", "0", "391", "0", "34"]
    assert table["lambda_vms_2026-05-07_header_only.csv"] == ["0", "1", "0", "0", "0", "0"]

    # at 80 columns: one line per file, none longer than 80, the file name cut and what is hidden said
    again = _run(settings, "import", "skypilot", *map(str, lambda_catalogs), columns=80)
    _fits(again.output)
    rows = [_cells(line) for line in again.output.splitlines() if line.startswith("lambda_vms")]
    assert [row[1:] for row in rows] == [  # every run loaded before; the same offers stand
        ["1", "0", "1", "255", "0", "17"],
        ["1", "0", "1", "255", "0", "17"],
        ["1", "0", "1", "272", "0", "17"],
        ["1", "0", "1", "391", "0", "34"],
    ]

    # --days counts back from today: reach the April 2026 catalogs whenever the test runs
    days = max(400, (dt.datetime.now(dt.UTC).date() - dt.date(2026, 4, 2)).days + 1)
    chart = tmp_path / "x.png"
    shown = _run(settings, "history", "H100 SXM 80GB", "--days", str(days), "--chart", str(chart))
    assert shown.exit_code == 0, shown.output
    assert chart.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    # beside a chart, a row per week (Monday first): the chart has the days
    weeks = [_cells(line) for line in shown.output.splitlines() if line.startswith("2026-")]
    assert "USD per GPU-hour, by week" in shown.output and "--daily shows every day" in shown.output
    assert weeks[0][:3] == ["2026-03-30", "3.44", "04-02"]  # the lowest of any platform that week
    one_gpu = _run(
        settings, "history", "h100 sxm", "--platform", "lambda", "--gpus", "1", "--days", str(days)
    )
    rows = [_cells(line) for line in one_gpu.output.splitlines() if line.startswith("2026-")]
    assert [row[:2] for row in rows] == [
        ["2026-04-02", "3.78"],
        ["2026-04-06", "4.29"],
        ["2026-04-20", "4.29"],
        ["2026-05-07", "4.29"],
    ]

    # a family name answers for each of its cards with prices: Lambda sells H100 SXM and PCIe
    family = _run(settings, "history", "H100", "--days", str(days), columns=80)
    assert family.exit_code == 0, family.output
    _fits(family.output)
    assert "'H100' is 3 cards; one table each (no prices for H100 NVL 94GB)" in family.output
    titles = [line.split(":")[0] for line in family.output.splitlines() if "USD per GPU-hour" in line]
    assert titles == ["H100 SXM 80GB on-demand", "H100 PCIe 80GB on-demand"]
    day_rows = [line for line in family.output.splitlines() if line.startswith("2026-")]
    assert len(day_rows) == 2 * len(lambda_catalogs)  # one line per day and card
    chart.unlink()
    assert _run(settings, "history", "H100", "--days", str(days), "--chart", str(chart)).exit_code == 0
    assert chart.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")  # both cards' lines
    # as SkyPilot writes it: one card, no family note
    skypilot = _run(settings, "history", "A100-80GB", "--days", str(days))
    assert skypilot.exit_code in (0, 1), skypilot.output
    assert "A100 SXM 80GB" in skypilot.output

    backfilled = _run(settings, "backfill", "--from", "2026-04-01", "--to", "2026-04-30")
    assert backfilled.exit_code == 0, backfilled.output
    assert "3 day(s) from 2026-04-02 to 2026-04-20" in backfilled.output


def test_user_errors_are_one_line(settings: Settings, lambda_catalogs) -> None:
    assert _run(settings, "import", "skypilot", str(lambda_catalogs[0])).exit_code == 0
    unknown_format = _run(settings, "import", "nope", str(lambda_catalogs[0]))
    assert unknown_format.exit_code == 2 and "unknown import format 'nope'" in unknown_format.output
    unknown_gpu = _run(settings, "history", "H999")
    assert unknown_gpu.exit_code == 2 and "unknown GPU 'H999'" in unknown_gpu.output
    too_recent = _run(settings, "history", "H100 SXM 80GB", "--days", "1")
    assert too_recent.exit_code == 1 and "no H100 SXM 80GB on-demand prices" in too_recent.output
    backwards = _run(settings, "backfill", "--from", "2026-05-01", "--to", "2026-04-01")
    assert backwards.exit_code == 2 and "is after --to" in backwards.output


def test_backfill_and_plans_say_which_offers_were_left_out(settings: Settings, sample) -> None:
    observations = sample("price_history/cherielilili_observations_2026-02-11_to_2026-07-20.csv")
    assert _run(settings, "import", "observations", str(observations)).exit_code == 0
    backfilled = _run(settings, "backfill", "--from", "2026-04-16", "--to", "2026-04-16")
    assert backfilled.exit_code == 0, backfilled.output
    assert "7 offer(s) left out of plans as implausibly cheap" in backfilled.output
    shown = _run(settings, "plans", "--date", "2026-04-16")
    assert shown.exit_code == 0, shown.output
    note = " ".join(shown.output.split())  # rich wraps long lines
    assert "7 offer(s) left out as implausibly cheap" in note
    assert "runpod MI300X 192GB at 0.50 USD/GPU-h (median 3.45)" in note

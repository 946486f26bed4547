"""`gpuplan import`, `history` and `backfill` on a published warehouse file, as a user runs them."""

from __future__ import annotations

import datetime as dt

from typer.testing import CliRunner, Result

from gpuplan.cli import app
from gpuplan.settings import Settings


def _run(settings: Settings, *args: str) -> Result:
    return CliRunner(env={"COLUMNS": "200"}).invoke(app, ["--warehouse", str(settings.warehouse), *args])


def test_import_history_and_backfill(settings: Settings, lambda_catalogs, sample, tmp_path) -> None:
    header_only = sample("skypilot_catalog_format/lambda_vms_2026-05-07_header_only.csv")
    imported = _run(settings, "import", "skypilot", *map(str, lambda_catalogs), str(header_only))
    # the header-only catalog fails visibly (exit 1, its reason); the other four load
    assert imported.exit_code == 1
    assert "header and no rows" in imported.output and "not a sold-out cloud" in imported.output
    table = {
        cells[0]: cells[1:]
        for line in imported.output.splitlines()
        if (cells := [cell.strip() for cell in line.split("│")[1:-1]]) and cells[0].startswith("lambda_vms")
    }
    # file: runs ok, failed, loaded before, offers, refused, not GPU
    assert table["lambda_vms_2026-04-02.csv"] == ["1", "0", "0", "255", "0", "17"]
    assert table["lambda_vms_2026-05-07.csv"] == ["1", "0", "0", "391", "0", "34"]
    assert table["lambda_vms_2026-05-07_header_only.csv"] == ["0", "1", "0", "0", "0", "0"]

    # --days counts back from today: reach the April 2026 catalogs whenever the test runs
    days = max(400, (dt.datetime.now(dt.UTC).date() - dt.date(2026, 4, 2)).days + 1)
    chart = tmp_path / "x.png"
    shown = _run(settings, "history", "H100 SXM 80GB", "--days", str(days), "--chart", str(chart))
    assert shown.exit_code == 0, shown.output
    assert chart.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    one_gpu = _run(
        settings, "history", "h100 sxm", "--platform", "lambda", "--gpus", "1", "--days", str(days)
    )
    rows = [line for line in one_gpu.output.splitlines() if line.startswith("│ 2026-")]
    assert [row.split("│")[1:3] for row in rows] == [
        [" 2026-04-02 ", " 3.78 "],
        [" 2026-04-06 ", " 4.29 "],
        [" 2026-04-20 ", " 4.29 "],
        [" 2026-05-07 ", " 4.29 "],
    ]

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

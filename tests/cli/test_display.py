"""gpuplan.display: tables fit the console (drop, then shrink names, legend below; --wide shows all),
and progress is live on a terminal, plain lines otherwise."""

from __future__ import annotations

import io

import pandas as pd
from rich.console import Console
from typer.testing import CliRunner

from gpuplan import display
from gpuplan.cli import app
from sizing.catalog import load_gpus

COLUMNS = (
    display.Column("name", shrink=True),
    display.Column("count", "right"),
    display.Column("detail", drop=1, legend="what the detail is"),
    display.Column("extra", drop=2),
)
ROWS = [
    ["a-rather-long-name-that-has-to-give-way-somewhere", "1", "detail text here", "extra text"],
    ["short", "12345", "more detail", "more extra"],
]


def _printed(width: int, **options: bool) -> list[str]:
    buffer = io.StringIO()
    out = Console(file=buffer, width=width, force_terminal=False)
    display.print_table(out, COLUMNS, ROWS, title="things", **options)
    return [line.rstrip() for line in buffer.getvalue().splitlines()]


def _row(lines: list[str], start: str) -> list[str]:
    return next(line for line in lines if line.startswith(start)).split()


def test_a_wide_console_shows_every_column_at_full_width() -> None:
    lines = _printed(200)
    assert lines[0] == "things"
    assert _row(lines, "a-rather")[1:] == ["1", "detail", "text", "here", "extra", "text"]
    assert "detail: what the detail is" in lines
    assert not any("hidden" in line for line in lines)


def test_narrow_consoles_drop_columns_in_order_then_shrink_names_never_numbers() -> None:
    lines = _printed(60)
    assert all(len(line) <= 60 for line in lines)
    assert _row(lines, "name") == ["name", "count", "detail"]  # extra went first
    assert "hidden at this width: extra; --wide shows all" in lines
    narrow = _printed(30)
    assert all(len(line) <= 30 for line in narrow)
    assert _row(narrow, "name") == ["name", "count"]
    assert _row(narrow, "short") == ["short", "12345"]  # the number whole
    assert _row(narrow, "a-rather")[0].endswith("…")  # the name cut
    assert "hidden at this width: detail, extra; --wide shows all" in " ".join(narrow)  # wrapped
    assert not any("what the detail is" in line for line in narrow)  # no legend for a hidden column


def test_wide_ignores_the_console_width() -> None:
    lines = _printed(30, wide=True)
    assert _row(lines, "a-rather")[0] == ROWS[0][0]
    assert "extra" in _row(lines, "name")


def test_numbers_read_one_way_and_missing_ones_are_blank() -> None:
    assert display.number(12345.4) == "12,345"
    assert display.number(4.26, 1) == "4.3"
    assert [display.number(value) for value in (None, float("nan"), pd.NA)] == ["", "", ""]


def test_plain_progress_is_a_line_every_tenth_and_at_the_end() -> None:
    buffer = io.StringIO()
    out = Console(file=buffer, width=80, force_terminal=False)
    assert not display.is_live(out)
    assert list(display.track(range(25), 25, "backfilling plans", out, unit="days")) == list(range(25))
    lines = buffer.getvalue().splitlines()
    assert lines[0] == "backfilling plans: 3/25 days" and lines[-1] == "backfilling plans: 25/25 days"
    assert len(lines) == 9


def test_size_tables_fit_80_columns_one_line_per_gpu() -> None:
    result = CliRunner(env={"COLUMNS": "80"}).invoke(app, ["size", "7B", "--method", "lora", "--all"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert max(len(line.rstrip()) for line in lines) <= 80
    for gpu in load_gpus():  # 7B LoRA fits every card
        assert sum(line.startswith(f"{gpu.gpu_model} ") for line in lines) == 1, gpu.gpu_model
    wide = CliRunner(env={"COLUMNS": "80"}).invoke(app, ["size", "7B", "--method", "lora", "--wide"])
    header = next(line for line in wide.output.splitlines() if line.startswith("GPU  "))
    assert header.split() == ["GPU", "count", "ZeRO", "TPxPP", "nodes", "GB/GPU", "usable", "Mtok/d", "MFU"]


def test_a_log_gets_whole_lines_and_a_table_that_still_fits(capsys, monkeypatch) -> None:
    sentence = "a sentence of a log that is longer than eighty columns, " * 3
    monkeypatch.delenv("COLUMNS", raising=False)
    out = display.console()  # stdout is captured here: not a terminal
    out.print(sentence)
    display.print_table(out, COLUMNS, ROWS, title="things")
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].rstrip() == sentence.rstrip()
    assert max(len(line.rstrip()) for line in lines[1:]) <= 80
    # COLUMNS asks for a width, as a terminal of that width would
    monkeypatch.setenv("COLUMNS", "80")
    display.console().print(sentence)
    assert max(len(line) for line in capsys.readouterr().out.splitlines()) <= 80

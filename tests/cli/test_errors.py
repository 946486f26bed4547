"""User errors from the `gpuplan` command itself (its console entry point): one line, with what to do."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # each test starts `gpuplan` in a child process


def _gpuplan(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(Path(sys.executable).with_name("gpuplan")), "--warehouse", str(tmp_path / "none.duckdb"), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "", "COLUMNS": "80", "HOME": str(tmp_path)},
        check=False,
    )


def test_a_usage_error_is_one_line_saying_where_help_is(tmp_path: Path) -> None:
    result = _gpuplan(tmp_path, "history", "H100", "--days", "many")
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "error: Invalid value for '--days': Input should be a valid integer, unable to parse string as "
        "an integer (`gpuplan history --help` says more)"
    ]


def test_an_unknown_gpu_is_one_line_naming_the_nearest_and_the_list(tmp_path: Path) -> None:
    result = _gpuplan(tmp_path, "history", "H10")
    assert result.returncode == 2
    [line] = result.stderr.splitlines()
    assert "unknown GPU 'H10'; did you mean" in line and "`gpuplan gpus`" in line


def test_an_unknown_platform_is_one_line_naming_the_nearest(tmp_path: Path) -> None:
    """Refused before any warehouse is read: a typo is not "no offers from nosuch"."""
    result = _gpuplan(
        tmp_path, "plans", "-p", "nosuch", "--model", "7B", "--method", "lora", "--tokens", "1B"
    )
    assert result.returncode == 1
    assert result.stderr.splitlines() == ["error: unknown platform 'nosuch'; did you mean 'oci'?"]


def test_no_warehouse_yet_names_the_command_that_makes_one(tmp_path: Path) -> None:
    result = _gpuplan(tmp_path, "history", "H100", "--days", "30")
    assert result.returncode == 1
    [line] = result.stderr.splitlines()
    assert line.startswith("error: no warehouse at ") and "run `gpuplan refresh`" in line


def test_a_mistyped_method_gets_the_same_answer_and_status_in_every_command(tmp_path: Path) -> None:
    answers = [
        _gpuplan(tmp_path, *args) for args in (("plans", "--method", "lorra"), ("size", "7B", "-m", "lorra"))
    ]
    for result in answers:
        assert result.returncode == 2, result.stderr
        [line] = result.stderr.splitlines()
        assert "got 'lorra'; did you mean 'lora'" in line and "gpuplan refresh" not in line


def test_a_model_is_read_as_the_daily_tables_name_it_or_pointed_to_tokens(tmp_path: Path) -> None:
    # 7b is 7B: the answer is about the warehouse (none yet), not the name
    lower = _gpuplan(tmp_path, "plans", "--model", "7b")
    assert lower.returncode == 1 and "no warehouse at" in lower.stderr and "7b" not in lower.stderr
    # a model sizing knows that the daily tables do not plan: a job of one's own plans it
    other = _gpuplan(tmp_path, "plans", "--model", "8B")
    assert other.returncode == 2
    [line] = other.stderr.splitlines()
    assert "'8B' is not one of the daily sizes (7B, 13B, 30B, 70B" in line and "--tokens" in line
    typo = _gpuplan(tmp_path, "plans", "--model", "7x")
    assert typo.returncode == 2 and "did you mean '7B'" in typo.stderr

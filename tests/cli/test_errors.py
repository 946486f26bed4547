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

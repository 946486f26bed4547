"""`gpuplan watch` (gpuplan/commands/watch.py): what it refuses, in one line, before crawling anything."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # each test starts `gpuplan` in a child process


def _watch(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            str(Path(sys.executable).with_name("gpuplan")),
            "--warehouse",
            str(tmp_path / "w.duckdb"),
            "watch",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "", "COLUMNS": "80", "HOME": str(tmp_path), **env},
        check=False,
    )


def test_a_bad_period_is_one_line(tmp_path: Path) -> None:
    result = _watch(tmp_path, "--every", "soon", "--once")
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "error: Invalid value: --every takes whole minutes (10, 10m, 1h), not 'soon' "
        "(`gpuplan watch --help` says more)"
    ]


def test_without_watches_it_says_how_to_set_them(tmp_path: Path) -> None:
    result = _watch(tmp_path, "--once")
    assert result.returncode == 2
    assert "set GPUPLAN_WATCHES" in result.stderr and not (tmp_path / "w.duckdb").exists()


def test_a_bad_watches_file_names_its_line(tmp_path: Path) -> None:
    watches = tmp_path / "watches.yaml"
    watches.write_text("- gpu: H100\n  below_usd_per_gpu_hour: 2\n  platfrom: [vastai]\n", "utf-8")
    result = _watch(tmp_path, "--once", GPUPLAN_WATCHES=str(watches))
    assert result.returncode == 2
    assert "line 3: unknown key 'platfrom'" in result.stderr

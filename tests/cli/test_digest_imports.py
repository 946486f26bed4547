"""`gpuplan digest` reads the watches file without Dagster: the file is config's, not the pipeline's."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from warehouse_template import migrated

from config.settings import Settings
from warehouse.engine import connect

GOOD = "- gpu: H100\n  below_usd_per_gpu_hour: 2.0\n  platforms: [vastai]\n"
BAD = "- gpu: H100\n  below_usd_per_gpu_hour: 2.0\n  platforms: [vast]\n"  # no such platform


@pytest.mark.parametrize(
    ("watches", "exit_code"),
    [
        (BAD, 1),  # the watches error: the file was read, its platforms checked against Scrapy's
        (GOOD, 2),  # past the watches: the warehouse has no plans for the day (a usage error)
    ],
)
def test_the_digest_reads_watches_without_dagster(
    watches: str, exit_code: int, settings: Settings, tmp_path: Path, probe_gpuplan: Callable[..., Any]
) -> None:
    with connect.writer(migrated(settings.warehouse)):
        pass  # a published warehouse, without plans
    file = tmp_path / "watches.yaml"
    file.write_text(watches, encoding="utf-8")
    env = {
        "PATH": "",
        "GPUPLAN_WAREHOUSE": str(settings.warehouse),
        "GPUPLAN_WATCHES": str(file),
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    probed = probe_gpuplan(env, "digest", "--json", "--date", "2026-12-01")
    assert probed.exit_code == exit_code
    assert "dagster" not in probed.imported

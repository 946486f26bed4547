"""Fixtures for the pipeline tests: Settings pointing at a temporary warehouse and crawl folder.

The crawls replay the spiders' bundled snapshots (offline), so these tests use the real spiders,
loader, sizing model and plan SQL end to end, without network.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from config.settings import Settings


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """The environment of a gpuplan run whose warehouse and crawls live under `tmp_path`."""
    return {
        "GPUPLAN_WAREHOUSE": str(tmp_path / "warehouse.duckdb"),
        "GPUPLAN_CRAWL_DIR": str(tmp_path / "crawls"),
    }


@pytest.fixture
def settings(env: dict[str, str]) -> Settings:
    return Settings.from_env(env)

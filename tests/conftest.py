"""Fixtures every test folder may use: settings on a temporary folder and a real writer connection.

Folders add their own fixtures in their own conftest.py (and may override these).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from gpuplan.settings import Settings
from warehouse import connect


def _settings(folder: Path) -> Settings:
    return Settings.from_env(
        {"GPUPLAN_WAREHOUSE": str(folder / "warehouse.duckdb"), "GPUPLAN_CRAWL_DIR": str(folder / "crawls")}
    )


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """Settings whose warehouse (`tmp_path/warehouse.duckdb`) and crawl folder live in `tmp_path`."""
    return _settings(tmp_path)


@pytest.fixture(scope="session")
def migrated_writer_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A writer file migrated and filled with the bundled FX rates once per session, to copy."""
    template = _settings(tmp_path_factory.mktemp("template"))
    with connect.writer(template):
        pass
    return template.writer_path


@pytest.fixture
def writer_con(settings: Settings, migrated_writer_file: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """The single writer on a real, migrated DuckDB file; publishes `settings.warehouse` at teardown."""
    settings.writer_path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(migrated_writer_file, settings.writer_path)
    with connect.writer(settings) as con:
        yield con

"""Fixtures every test folder may use: settings on a temporary folder and a real writer connection.

Folders add their own fixtures in their own conftest.py (and may override these).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import duckdb
import pytest

from gpuplan.settings import Settings
from warehouse import connect

# The real samples beside the project (`../shared/samples/`): read from there, never copied in.
SAMPLES = Path(__file__).resolve().parents[1].parent / "shared" / "samples"


@pytest.fixture(scope="session")
def sample() -> Callable[[str], Path]:
    """`sample("price_history/x.csv")`: a file of ../shared/samples/, or skip saying which is missing."""

    def find(relative: str) -> Path:
        path = SAMPLES / relative
        if not path.is_file():
            pytest.skip(
                f"real sample {relative} not found under {SAMPLES} (the shared samples are not there)"
            )
        return path

    return find


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
    with connect.writer(template.warehouse):
        pass
    return connect.writer_path(template.warehouse)


@pytest.fixture
def writer_con(settings: Settings, migrated_writer_file: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """The single writer on a real, migrated DuckDB file; publishes `settings.warehouse` at teardown."""
    connect.writer_path(settings.warehouse).parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(migrated_writer_file, connect.writer_path(settings.warehouse))
    with connect.writer(settings.warehouse) as con:
        yield con

"""Fixtures every test folder may use: settings on a temporary folder and a real writer connection.

Folders add their own fixtures in their own conftest.py (and may override these).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NamedTuple

import duckdb
import pytest

from config.settings import Settings
from warehouse import connect

# Runs `gpuplan ARGS` as the console script does and says, at exit, which packages it imported.
IMPORT_PROBE = """
import sys
sys.argv = ["gpuplan", *sys.argv[1:]]
from gpuplan.cli import run
code = 0
try:
    run()
except SystemExit as exit:
    code = exit.code
print("EXIT", code, file=sys.stderr)
print("IMPORTED", *sorted({name.split(".")[0] for name in sys.modules}), file=sys.stderr)
"""

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


class Probed(NamedTuple):
    """What a probed `gpuplan ARGS` process did: its exit code, its stdout and the top-level
    packages it had imported at exit."""

    exit_code: int | str | None
    stdout: str
    imported: set[str]


@pytest.fixture(scope="session")
def probe_gpuplan() -> Callable[..., Probed]:
    """`probe_gpuplan(env, *args)`: run `gpuplan ARGS` in a child process with environment `env`
    and say what it imported (what a command costs to start is mostly its imports)."""

    def probe(env: dict[str, str], *args: str) -> Probed:
        done = subprocess.run(
            [sys.executable, "-c", IMPORT_PROBE, *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
            check=False,
        )
        lines = [line.split() for line in done.stderr.splitlines() if line.startswith(("EXIT ", "IMPORTED "))]
        assert [line[0] for line in lines] == ["EXIT", "IMPORTED"], done.stderr
        code = lines[0][1]
        return Probed(int(code) if code.isdigit() else code, done.stdout, set(lines[1][1:]))

    return probe

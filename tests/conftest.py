"""Fixtures every test folder may use: settings on a temporary folder and a connection on a migrated
warehouse file (`writer_con`).

Folders add their own fixtures in their own conftest.py (and may override these). A fresh migrated
warehouse is a copy of one template per session (`warehouse_template.py`): `writer_con`, or
`connect.writer(migrated(settings.warehouse))`, or `warehouse_template.scratch()`.

`slow` marks a test whose time goes to child processes (crawls, `scrapy`, `gpuplan`, a second
writer), a refresh or a Dagster job, or a backfill of the real history; every test of the
fault-injection suite (`-m faults`) and every one that uses `probe_gpuplan` is `slow` too.
`-m "not slow"` is the fast loop (README, "Tests and benchmarks"); the full suite is what CI runs.
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
import warehouse_template

from config.settings import Settings

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


RELIABILITY = Path(__file__).parent / "reliability"


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """The fast loop (`-m "not slow"`) does not even import tests/reliability: every test there is
    slow (each module is marked `faults`), and its fault schedule costs each worker ~4 s to build."""
    if config.getoption("markexpr", "") == "not slow" and (
        collection_path == RELIABILITY or RELIABILITY in collection_path.parents
    ):
        return True
    return None


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by mark
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Slow by what they do: the fault-injection suite (real crawls, child processes, kills) and
    every test that starts `gpuplan` in a child process (`probe_gpuplan`)."""
    for item in items:
        if item.get_closest_marker("faults") or "probe_gpuplan" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.slow)
    # Modules of only slow tests first: `--dist loadfile` hands modules out in this order, so the
    # long ones (refreshes, daemon runs, the fault days) start early and do not end the run alone.
    quick_modules = {item.path for item in items if item.get_closest_marker("slow") is None}
    items.sort(key=lambda item: item.path in quick_modules)


@pytest.fixture(scope="session", autouse=True)
def _warehouse_template(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The session's folder for the migrated template (made on first use, per xdist worker); the
    scratch copies go at the end."""
    warehouse_template.use(tmp_path_factory.mktemp("warehouse_template"))
    yield
    shutil.rmtree(warehouse_template.scratch_folder(), ignore_errors=True)
    warehouse_template.use(None)


@pytest.fixture
def writer_con(settings: Settings) -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-write connection on a real, migrated DuckDB file (a copy of the session's template,
    where the writer keeps its file), opened as the writer opens it (`integrity.SAFE_CONFIG`, DuckDB's
    threads, UTC), for the warehouse's rules. Not a writer session: no lock, stamp, checkpoint or
    publish (~45 ms a test); the tests of the session itself use `connect.writer`."""
    with warehouse_template.opened(warehouse_template.migrated(settings.warehouse)) as con:
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

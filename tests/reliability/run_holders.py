"""Helpers of the run cases (test_run_exclusion.py, test_daemon_run.py): a seeded warehouse, the
real `gpuplan` in child processes on a DAGSTER_HOME made from the project's dagster.yaml, and a
run made to hold the warehouse writer for as long as a test likes.

A run holds the writer while the test holds the writer *file* open with DuckDB: the run's first
writing step takes the writer lock (the flock beside the warehouse), then waits to open the file.
The lock file then names the run (`Dagster run ID (JOB, step STEP) in COMMAND, pid N since T`).
Offline, one platform (quotes: a local file, the fastest crawl), one model and method: a refresh
takes seconds.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import dagster as dg
import duckdb

from config.settings import Settings
from warehouse.engine import connect

ROOT = Path(__file__).parents[2]
CLI = "from gpuplan.cli import run; run()"
DAY, OTHER_DAY = date(2026, 11, 30), date(2026, 11, 29)
# A warehouse with an earlier day already planned: a refresh of DAY is then one run, as on any day
# after a warehouse's first (a first offline refresh also replays the recorded day before).
SEED_DAY = date(2026, 11, 1)
SETTLE_S = 120.0  # the most any of these runs may take on a loaded CI machine
STOP_S = 15.0  # "stops within seconds": a signalled process must be gone by then
HOLDER = re.compile(
    r"Dagster run (?P<run>[0-9a-f-]{36}) \((?P<job>\w+), step (?P<step>\w+)\).*pid (?P<pid>\d+)"
)


@dataclass(frozen=True)
class Home:
    settings: Settings
    env: dict[str, str]
    dagster_home: Path

    def instance(self) -> dg.DagsterInstance:
        return dg.DagsterInstance.from_config(str(self.dagster_home))


def values(root: Path) -> dict[str, str]:
    return {
        "GPUPLAN_WAREHOUSE": str(root / "warehouse.duckdb"),
        "GPUPLAN_CRAWL_DIR": str(root / "crawls"),
        "GPUPLAN_MODELS": "7B",
        "GPUPLAN_METHODS": "qlora",
    }


def seed_warehouse(root: Path) -> Path:
    """A warehouse folder whose warehouse has SEED_DAY planned (quotes only)."""
    env = {k: v for k, v in os.environ.items() if k not in ("DAGSTER_HOME", "GPUPLAN_DEBUG")}
    env |= values(root)
    command = [sys.executable, "-c", CLI, "refresh", "--offline", "--platform", "quotes"]
    done = subprocess.run(
        [*command, "--date", SEED_DAY.isoformat()], env=env, capture_output=True, text=True, timeout=SETTLE_S
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return root


def copy_warehouse(seed: Path, root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    for path in seed.glob("warehouse.*"):  # the snapshot, the writer file and its records
        if not path.name.endswith(".lock"):
            shutil.copy2(path, root / path.name)


def home_in(root: Path, seed: Path) -> Home:
    copy_warehouse(seed, root)
    dagster_home = root / "dagster_home"
    dagster_home.mkdir(parents=True)
    shutil.copy2(ROOT / "config" / "dagster.yaml", dagster_home / "dagster.yaml")
    env = {**os.environ, **values(root), "DAGSTER_HOME": str(dagster_home)}
    env.pop("GPUPLAN_DEBUG", None)
    return Home(Settings.from_env(values(root)), env, dagster_home)


def gpuplan(home: Home, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", CLI, *args],
        env=home.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # signals reach this process (group) only
    )


def refresh(home: Home, day: date, *args: str) -> subprocess.Popen[str]:
    return gpuplan(home, "refresh", "--offline", "--platform", "quotes", "--date", day.isoformat(), *args)


def until(condition: Callable[[], object], what: str, timeout_s: float = SETTLE_S) -> object:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if value := condition():
            return value
        time.sleep(0.2)
    raise AssertionError(f"gave up waiting for {what}")


def finish(process: subprocess.Popen[str], timeout_s: float = SETTLE_S) -> tuple[int, str, str]:
    out, err = process.communicate(timeout=timeout_s)
    return process.returncode, out, err


def run_of(home: Home, run_id: str) -> dg.DagsterRun:
    with home.instance() as instance:
        run = instance.get_run_by_id(run_id)
    assert run is not None
    return run


def lock_file(settings: Settings) -> Path:
    private = connect.writer_path(settings.warehouse)
    return private.with_name(private.name + ".lock")


def writer_holder(settings: Settings) -> re.Match[str] | None:
    """Who holds the writer lock now, if a Dagster run does: its run id, job, step and pid."""
    path = lock_file(settings)
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:  # held: the file says by whom
            return HOLDER.search(path.read_text("utf-8"))
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


@contextmanager
def writer_file_held(settings: Settings) -> Iterator[None]:
    """The test holds the writer file open (DuckDB's own lock): a run that takes the writer lock
    then waits for the file, holding the lock, until the block ends."""
    con = duckdb.connect(str(connect.writer_path(settings.warehouse)))
    try:
        yield
    finally:
        con.close()


def alive(pid: int) -> bool:
    """The process exists and is not a zombie nobody reaped."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def logged(home: Home, run_id: str, text: str) -> list[str]:
    """The messages of `run_id`'s event log that contain `text` (what the UI's run page shows)."""
    with home.instance() as instance:
        return [log.user_message for log in instance.all_logs(run_id) if text in log.user_message]

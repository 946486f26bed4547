"""Runs that meet: a killed run's writer slot, a live one's, two runs of one day, a signalled crawl.

Each case runs the real `gpuplan` in child processes, on a DAGSTER_HOME set up as the README says
(the project's dagster.yaml, SQLite storage), offline with one platform (quotes: a local file,
the fastest crawl) and one model and method, so a run takes seconds:

- A run is made to hold the `duckdb_writer` slot for as long as the test likes: the test holds
  the warehouse writer (`warehouse.connect.writer`), so the run's first writing step claims the
  slot and then waits for the DuckDB lock.
- A run is killed with SIGKILL while it holds the slot, as the OOM killer or a reboot would.
- A run is made to wait inside Dagster's executor: the test gives the slot to a stand-in run of
  its own once the refresh has started (past the refresh's own check).
- `gpuplan crawl` is held mid-download by a proxy that accepts connections and never answers
  (the crawl process reads HTTPS_PROXY like any client; nothing leaves the machine).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import dagster as dg
import pytest

from gpuplan.settings import Settings
from pipelines.slot_watch import PROCESS_TAG, process_identity
from scrapers.crawl.summary import CrawlSummary
from warehouse import connect, plans

pytestmark = pytest.mark.faults

ROOT = Path(__file__).parents[2]
CLI = "from gpuplan.cli import run; run()"
POOL = "duckdb_writer"
DAY, OTHER_DAY = date(2026, 11, 30), date(2026, 11, 29)
# A warehouse with an earlier day already planned: a refresh of DAY is then one run, as on any day
# after a warehouse's first (a first offline refresh also replays the recorded day before).
SEED_DAY = date(2026, 11, 1)
SETTLE_S = 120.0  # the most any of these runs may take on a loaded CI machine
STOP_S = 15.0  # "stops within seconds": a signalled process must be gone by then


@dataclass(frozen=True)
class Home:
    settings: Settings
    env: dict[str, str]
    dagster_home: Path

    def instance(self) -> dg.DagsterInstance:
        return dg.DagsterInstance.from_config(str(self.dagster_home))


@pytest.fixture(scope="module")
def seed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A warehouse folder whose warehouse has SEED_DAY planned (quotes only), made once a module."""
    root = tmp_path_factory.mktemp("seed")
    env = {k: v for k, v in os.environ.items() if k not in ("DAGSTER_HOME", "GPUPLAN_DEBUG")}
    env |= {**_values(root), "GPUPLAN_CRAWL_DIR": str(root / "crawls")}
    command = [sys.executable, "-c", CLI, "refresh", "--offline", "--platform", "quotes"]
    done = subprocess.run(
        [*command, "--date", SEED_DAY.isoformat()], env=env, capture_output=True, text=True, timeout=SETTLE_S
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return root


def _values(root: Path) -> dict[str, str]:
    return {
        "GPUPLAN_WAREHOUSE": str(root / "warehouse.duckdb"),
        "GPUPLAN_CRAWL_DIR": str(root / "crawls"),
        "GPUPLAN_MODELS": "7B",
        "GPUPLAN_METHODS": "qlora",
    }


def _home(root: Path, seed: Path) -> Home:
    for path in seed.glob("warehouse.*"):  # the snapshot, the writer file and its records
        shutil.copy2(path, root / path.name)
    dagster_home = root / "dagster_home"
    dagster_home.mkdir(parents=True)
    shutil.copy2(ROOT / "dagster.yaml", dagster_home / "dagster.yaml")
    values = _values(root)
    env = {**os.environ, **values, "DAGSTER_HOME": str(dagster_home)}
    env.pop("GPUPLAN_DEBUG", None)
    with dg.DagsterInstance.from_config(str(dagster_home)) as instance:
        instance.event_log_storage.set_concurrency_slots(POOL, 1)  # as the first run would
    return Home(Settings.from_env(values), env, dagster_home)


def _gpuplan(home: Home, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", CLI, *args],
        env=home.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # signals reach this process only
    )


def _refresh(home: Home, day: date, *args: str) -> subprocess.Popen[str]:
    return _gpuplan(home, "refresh", "--offline", "--platform", "quotes", "--date", day.isoformat(), *args)


def _until(condition: Callable[[], object], what: str, timeout_s: float = SETTLE_S) -> object:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if value := condition():
            return value
        time.sleep(0.2)
    raise AssertionError(f"gave up waiting for {what}")


def _slot_holders(home: Home) -> set[str]:
    with home.instance() as instance:
        return instance.event_log_storage.get_concurrency_info(POOL).active_run_ids


def _waiting_runs(home: Home) -> set[str]:
    with home.instance() as instance:
        return instance.event_log_storage.get_concurrency_info(POOL).pending_run_ids


def _run(home: Home, run_id: str) -> dg.DagsterRun:
    with home.instance() as instance:
        run = instance.get_run_by_id(run_id)
    assert run is not None
    return run


def _only_run_since(home: Home, known: set[str]) -> str:
    with home.instance() as instance:
        new = {run.run_id for run in instance.get_runs()} - known
    return str(_single(new))


def _single(values: set[str]) -> str:
    assert len(values) == 1, values
    return next(iter(values))


def _run_ids(home: Home) -> set[str]:
    with home.instance() as instance:
        return {run.run_id for run in instance.get_runs()}


def _finish(process: subprocess.Popen[str], timeout_s: float = SETTLE_S) -> tuple[int, str, str]:
    out, err = process.communicate(timeout=timeout_s)
    return process.returncode, out, err


@contextmanager
def _writer_held(home: Home) -> Iterator[None]:
    """The test holds the warehouse writer: a run's writing step claims the slot, then waits."""
    with connect.writer(home.settings.warehouse):
        yield


@dataclass(frozen=True)
class KilledHolder:
    home: Home
    killed_run: str
    stuck: tuple[str, set[str]]  # the killed run's status and the slot holders, right after the kill
    bounded: tuple[int, str, float]  # a second refresh while the live run held the slot: rc, stderr, s
    recovered: tuple[int, str]  # a third refresh after the kill: rc, stderr
    recovered_run: str


@pytest.fixture(scope="module")
def killed_holder(tmp_path_factory: pytest.TempPathFactory, seed: Path) -> KilledHolder:
    home = _home(tmp_path_factory.mktemp("killed-holder"), seed)
    with _writer_held(home):
        holder = _refresh(home, DAY)
        run_id = str(_until(lambda: _slot_holders(home), "the first refresh to claim the writer slot").pop())
        started = time.monotonic()
        waiter = _refresh(home, OTHER_DAY, "--wait", "3")
        returncode, _, err = _finish(waiter)
        bounded = (returncode, err, time.monotonic() - started)
        os.killpg(holder.pid, signal.SIGKILL)  # the OOM killer, a reboot: no clean-up at all
        holder.wait(timeout=STOP_S)
    stuck = (_run(home, run_id).status.value, _slot_holders(home))
    known = _run_ids(home)
    returncode, _, err = _finish(_refresh(home, DAY, "--wait", "30"))
    return KilledHolder(home, run_id, stuck, bounded, (returncode, err), _only_run_since(home, known))


def test_a_live_run_holding_the_writer_slot_bounds_the_wait(killed_holder: KilledHolder) -> None:
    returncode, err, seconds = killed_holder.bounded
    assert returncode == 1
    (line,) = err.strip().splitlines()  # one line, naming the run that holds the slot
    assert line.startswith("error: the warehouse writer slot (Dagster pool duckdb_writer) is held by run ")
    assert f"run {killed_holder.killed_run} (daily_refresh, STARTED)" in line
    assert 3 <= seconds < SETTLE_S


def test_a_killed_runs_writer_slot_is_freed_by_the_next_refresh(killed_holder: KilledHolder) -> None:
    home = killed_holder.home
    assert killed_holder.stuck == ("STARTED", {killed_holder.killed_run}), "the kill left the slot held"
    returncode, err = killed_holder.recovered
    assert returncode == 0, err
    dead = _run(home, killed_holder.killed_run)
    assert dead.status == dg.DagsterRunStatus.FAILURE
    assert _run(home, killed_holder.recovered_run).status == dg.DagsterRunStatus.SUCCESS
    assert _slot_holders(home) == set()
    with connect.reader(home.settings.warehouse) as con:
        assert set(plans.day_crawls(con, DAY)["status"]) == {"ok"}


@contextmanager
def _stand_in_holder(home: Home) -> Iterator[str]:
    """A live run of the test's own (this process, alive) holding the writer slot."""
    run_id = str(uuid.uuid4())
    with home.instance() as instance:
        tags = {PROCESS_TAG: process_identity(os.getpid()) or ""}
        stand_in = dg.DagsterRun(
            job_name="stand_in", run_id=run_id, status=dg.DagsterRunStatus.STARTED, tags=tags
        )
        instance.add_run(stand_in)
        claim = instance.event_log_storage.claim_concurrency_slot(POOL, run_id, "stand_in_step")
        assert claim.is_claimed
    try:
        yield run_id
    finally:
        with home.instance() as instance:
            instance.event_log_storage.free_concurrency_slots_for_run(run_id)
            instance.report_run_failed(instance.get_run_by_id(run_id))


@pytest.mark.parametrize("stop", ["sigterm", "bound"])
def test_a_refresh_waiting_inside_dagster_for_the_slot_stops(stop: str, tmp_path: Path, seed: Path) -> None:
    home = _home(tmp_path, seed)
    known = _run_ids(home)
    waiter = _refresh(home, DAY, "--wait", "4" if stop == "bound" else "600")
    # past its own check of the slot: its run has started, and its crawl takes a few seconds
    run_id = str(_until(lambda: _run_ids(home) - known, "the refresh's run to start").pop())
    with _stand_in_holder(home) as holder:
        _until(lambda: run_id in _waiting_runs(home), "the refresh to wait for the slot in Dagster")
        asked = time.monotonic()
        if stop == "sigterm":
            os.killpg(waiter.pid, signal.SIGTERM)
        returncode, _, err = _finish(waiter)
        seconds = time.monotonic() - asked
    run = _run(home, run_id)
    if stop == "sigterm":
        assert returncode == 128 + signal.SIGTERM, err
        assert seconds < STOP_S
        assert run.status == dg.DagsterRunStatus.CANCELED
    else:
        assert returncode == 1
        (line,) = err.strip().splitlines()
        assert f"held by run {holder} (stand_in, STARTED)" in line
        assert run.status == dg.DagsterRunStatus.FAILURE
    assert run_id not in _slot_holders(home) | _waiting_runs(home)


def test_two_refreshes_of_one_day_never_share_its_crawls(tmp_path: Path, seed: Path) -> None:
    home = _home(tmp_path, seed)
    folder = home.settings.crawl_dir / "offline" / DAY.isoformat()
    with _writer_held(home):
        first = _refresh(home, DAY)
        reached = _until(lambda: _slot_holders(home), "the first refresh to crawl and reach the writer")
        first_run = _single(set(reached))  # type: ignore[arg-type]
        crawled = {path.name: path.read_bytes() for path in folder.iterdir() if path.is_file()}
        refused = _finish(_refresh(home, DAY, "--wait", "2"))
        assert {path.name: path.read_bytes() for path in folder.iterdir() if path.is_file()} == crawled
        waiting = _refresh(home, DAY, "--wait", str(SETTLE_S))
        time.sleep(3)  # the third one waits for the folder while the first holds it
        assert waiting.poll() is None
    assert _finish(first)[0] == 0
    returncode, _, err = _finish(waiting)
    assert returncode == 0, err
    returncode, _, err = refused
    assert returncode == 1
    (line,) = err.strip().splitlines()
    assert f"crawl folder {folder} is in use by gpuplan refresh (Dagster run {first_run})" in line
    with connect.reader(home.settings.warehouse) as con:
        runs = con.execute("SELECT status, count(*) FROM crawl_runs GROUP BY ALL").fetchall()
        recorded = plans.day_crawls(con, DAY)
    with connect.reader(seed / "warehouse.duckdb") as con:
        (seeded,) = con.execute("SELECT count(*) FROM crawl_runs").fetchone() or (0,)
    # the same snapshot crawled twice, whole: one crawl by content (its feed's hash; the seed's day
    # crawled it already), never a failed one
    assert runs == [("ok", seeded)]
    latest = CrawlSummary.read(folder / "quotes.summary.json")
    assert list(recorded["status"]) == ["ok"] and latest.status == "ok"
    assert list(recorded["offers_loaded"]) == [latest.items_yielded]


class _SilentProxy:
    """Accepts connections and never answers: a crawl through it hangs mid-download."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.connections: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.getsockname()[1]}"

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self.server.accept()
            except OSError:
                return
            self.connections.append(connection)

    def close(self) -> None:
        self.server.close()
        for connection in self.connections:
            connection.close()


def _crawl_child_of(pid: int) -> int | None:
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
                command = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid and b"scrapers.crawl.child" in command:
                return int(entry.name)
    return None


def _alive(pid: int) -> bool:
    return process_identity(pid) is not None  # gone, or a zombie nobody reaped


@pytest.mark.parametrize("sent", [signal.SIGTERM, signal.SIGKILL])
def test_a_signal_to_gpuplan_crawl_ends_its_crawl_process(sent: int, tmp_path: Path) -> None:
    proxy = _SilentProxy()
    env = {key: value for key, value in os.environ.items() if key.lower() != "no_proxy"}
    env |= {"HTTPS_PROXY": proxy.url, "https_proxy": proxy.url, "GPUPLAN_CRAWL_DIR": str(tmp_path)}
    home = Home(Settings.from_env(env), env, tmp_path)
    try:
        crawl = _gpuplan(home, "crawl", "vastai", "--out-dir", str(tmp_path / "out"))
        child = int(str(_until(lambda: _crawl_child_of(crawl.pid), "the crawl process")))
        _until(lambda: proxy.connections, "the crawl to hang on its download")
        os.kill(crawl.pid, sent)  # to gpuplan alone: its crawl process must follow by itself
        returncode = crawl.wait(timeout=STOP_S)
        _until(lambda: not _alive(child), "the crawl process to end", STOP_S)
    finally:
        proxy.close()
    assert returncode == (128 + signal.SIGTERM if sent == signal.SIGTERM else -signal.SIGKILL)

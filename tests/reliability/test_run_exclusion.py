"""Runs that meet at the warehouse writer and the day's crawl folder, and a signalled crawl.

Both are file locks (flock) the kernel frees when their holder dies, whatever kills it. Each case
runs the real `gpuplan` in child processes on a DAGSTER_HOME made from the project's dagster.yaml
(run_holders.py says how a run is made to hold the writer):

- A live run holding the writer bounds another refresh's wait, which names it.
- A run killed with SIGKILL while it holds the writer (as the OOM killer or a reboot would)
  blocks no later run: nothing has to notice it died (its run stays STARTED in the instance).
  The same with the daemon's runs: test_daemon_run.py.
- A refresh waiting for the writer says so in its run's log, naming the holder; it stops on
  SIGTERM within seconds, or at its `--wait` with one line naming the holder; when the holder
  lets go, the step's metadata says for whom and how long it waited.
- `gpuplan crawl` is held mid-download by a proxy that accepts connections and never answers
  (the crawl process reads HTTPS_PROXY like any client; nothing leaves the machine).
"""

from __future__ import annotations

import os
import signal
import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import dagster as dg
import pytest
from crawl_processes import crawl_children

from config.settings import Settings
from reliability.run_holders import (
    DAY,
    OTHER_DAY,
    SETTLE_S,
    STOP_S,
    Home,
    alive,
    finish,
    gpuplan,
    home_in,
    logged,
    refresh,
    run_of,
    seed_warehouse,
    until,
    writer_file_held,
    writer_holder,
)
from scrapers.crawl.summary import CrawlSummary
from warehouse import daily_plans
from warehouse.engine import connect

pytestmark = pytest.mark.faults

WAITING = "waiting for the warehouse writer, held by"


@pytest.fixture(scope="module")
def seed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A warehouse folder whose warehouse has an earlier day planned, made once a module."""
    return seed_warehouse(tmp_path_factory.mktemp("seed"))


@dataclass(frozen=True)
class KilledHolder:
    home: Home
    killed_run: str
    killed_step: str
    bounded: tuple[int, str, float]  # a second refresh while the live run held the writer: rc, stderr, s
    recovered: tuple[int, str, float]  # a third refresh after the kill: rc, stderr, seconds


@pytest.fixture(scope="module")
def killed_holder(tmp_path_factory: pytest.TempPathFactory, seed: Path) -> KilledHolder:
    home = home_in(tmp_path_factory.mktemp("killed-holder"), seed)
    with writer_file_held(home.settings):
        holder = refresh(home, DAY)
        held = until(lambda: writer_holder(home.settings), "the first refresh to hold the writer")
        started = time.monotonic()
        returncode, _, err = finish(refresh(home, OTHER_DAY, "--wait", "3"))
        bounded = (returncode, err, time.monotonic() - started)
        os.killpg(holder.pid, signal.SIGKILL)  # the OOM killer, a reboot: no clean-up at all
        holder.wait(timeout=STOP_S)
    started = time.monotonic()
    returncode, _, err = finish(refresh(home, DAY, "--wait", "30"))
    recovered = (returncode, err, time.monotonic() - started)
    return KilledHolder(home, held["run"], held["step"], bounded, recovered)  # type: ignore[index]


def test_a_live_run_holding_the_writer_bounds_the_wait(killed_holder: KilledHolder) -> None:
    returncode, err, seconds = killed_holder.bounded
    assert returncode == 1
    (line,) = err.strip().splitlines()  # one line, naming the run that holds the writer
    assert line.startswith("error: another gpuplan writer (Dagster run "), line
    assert f"Dagster run {killed_holder.killed_run} (daily_refresh, step {killed_holder.killed_step})" in line
    assert "gave up after 3 s" in line
    assert 3 <= seconds < SETTLE_S


def test_a_run_killed_holding_the_writer_blocks_no_later_run(killed_holder: KilledHolder) -> None:
    home = killed_holder.home
    returncode, err, seconds = killed_holder.recovered
    assert returncode == 0, err
    assert seconds < SETTLE_S
    # nothing had to find out that it died: the kernel dropped its locks with its process
    assert run_of(home, killed_holder.killed_run).status == dg.DagsterRunStatus.STARTED
    assert writer_holder(home.settings) is None
    with connect.reader(home.settings.warehouse) as con:
        assert set(daily_plans.day_crawls(con, DAY)["status"]) == {"ok"}


def _new_run(home: Home, known: set[str]) -> str | None:
    with home.instance() as instance:
        new = {run.run_id for run in instance.get_runs()} - known
    return new.pop() if new else None


def _run_ids(home: Home) -> set[str]:
    with home.instance() as instance:
        return {run.run_id for run in instance.get_runs()}


@pytest.mark.parametrize("stop", ["sigterm", "bound", "released"])
def test_a_refresh_waiting_for_the_writer_names_the_holder_and_stops(
    stop: str, tmp_path: Path, seed: Path
) -> None:
    home = home_in(tmp_path, seed)
    known = _run_ids(home)
    holder = f"the test's own writer, pid {os.getpid()}"
    with connect.writer(home.settings.warehouse, holder=holder):
        waiter = refresh(home, DAY, "--wait", "4" if stop == "bound" else "600")
        run_id = str(until(lambda: _new_run(home, known), "the refresh's run to start"))
        (said,) = until(lambda: logged(home, run_id, WAITING), "the refresh to wait for the writer")
        assert f"{WAITING} {holder} since " in said  # what the run's page in the UI shows
        asked = time.monotonic()
        if stop == "sigterm":
            os.killpg(waiter.pid, signal.SIGTERM)
        if stop == "released":
            time.sleep(2)
        else:
            returncode, _, err = finish(waiter)
            seconds = time.monotonic() - asked
    if stop == "released":
        returncode, _, err = finish(waiter)
    run = run_of(home, run_id)
    if stop == "sigterm":
        assert returncode == 128 + signal.SIGTERM, err
        assert seconds < STOP_S
        assert run.status == dg.DagsterRunStatus.FAILURE  # Dagster stops an interrupted run so
    elif stop == "bound":
        assert returncode == 1
        (line,) = err.strip().splitlines()
        assert line.startswith(f"error: another gpuplan writer ({holder} since ") and "after 4 s" in line
        assert run.status == dg.DagsterRunStatus.FAILURE
    else:
        assert returncode == 0, err
        assert run.status == dg.DagsterRunStatus.SUCCESS
        with home.instance() as instance:
            materialized = [
                log.dagster_event.event_specific_data.materialization  # type: ignore[union-attr]
                for log in instance.all_logs(run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION)
            ]
        (waited,) = [m.metadata for m in materialized if "writer_waited_s" in m.metadata]
        assert waited["writer_held_by"].value.startswith(f"{holder} since ")  # type: ignore[union-attr]
        assert waited["writer_waited_s"].value >= 2  # type: ignore[operator]
    assert writer_holder(home.settings) is None


def test_two_refreshes_of_one_day_never_share_its_crawls(tmp_path: Path, seed: Path) -> None:
    home = home_in(tmp_path, seed)
    folder = home.settings.crawl_dir / "offline" / DAY.isoformat()
    with writer_file_held(home.settings):
        first = refresh(home, DAY)
        reached = until(lambda: writer_holder(home.settings), "the first refresh to reach the writer")
        first_run = reached["run"]  # type: ignore[index]
        crawled = {path.name: path.read_bytes() for path in folder.iterdir() if path.is_file()}
        refused = finish(refresh(home, DAY, "--wait", "2"))
        assert {path.name: path.read_bytes() for path in folder.iterdir() if path.is_file()} == crawled
        waiting = refresh(home, DAY, "--wait", str(SETTLE_S))
        time.sleep(3)  # the third one waits for the folder while the first holds it
        assert waiting.poll() is None
    assert finish(first)[0] == 0
    returncode, _, err = finish(waiting)
    assert returncode == 0, err
    returncode, _, err = refused
    assert returncode == 1
    (line,) = err.strip().splitlines()
    assert f"crawl folder {folder} is in use by gpuplan refresh (Dagster run {first_run})" in line
    with connect.reader(home.settings.warehouse) as con:
        runs = con.execute("SELECT status, count(*) FROM crawl_runs GROUP BY ALL").fetchall()
        recorded = daily_plans.day_crawls(con, DAY)
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
    return next(iter(crawl_children(pid)), None)


@pytest.mark.parametrize("sent", [signal.SIGTERM, signal.SIGKILL])
def test_a_signal_to_gpuplan_crawl_ends_its_crawl_process(sent: int, tmp_path: Path) -> None:
    proxy = _SilentProxy()
    env = {key: value for key, value in os.environ.items() if key.lower() != "no_proxy"}
    env |= {"HTTPS_PROXY": proxy.url, "https_proxy": proxy.url, "GPUPLAN_CRAWL_DIR": str(tmp_path)}
    home = Home(Settings.from_env(env), env, tmp_path)
    try:
        crawl = gpuplan(home, "crawl", "vastai", "--out-dir", str(tmp_path / "out"))
        child = int(str(until(lambda: _crawl_child_of(crawl.pid), "the crawl process")))
        until(lambda: proxy.connections, "the crawl to hang on its download")
        os.kill(crawl.pid, sent)  # to gpuplan alone: its crawl process must follow by itself
        returncode = crawl.wait(timeout=STOP_S)
        until(lambda: not alive(child), "the crawl process to end", STOP_S)
    finally:
        proxy.close()
    assert returncode == (128 + signal.SIGTERM if sent == signal.SIGTERM else -signal.SIGKILL)

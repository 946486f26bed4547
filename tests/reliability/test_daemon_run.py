"""The scheduled path: runs the daemon launches, as `dg dev` or `dagster-daemon run` does.

One `dagster-daemon run` (bench/bench_daemon.py's harness: a DAGSTER_HOME with the project's
dagster.yaml, the daemon in its own process group, killed as a group at the end) for the module;
each run is submitted to its queue with `dagster job launch`, offline by run config, as the UI's
Launchpad would. The daemon's runs crawl every platform (offline), one model and method.

- A refresh killed with SIGKILL while it holds the warehouse writer: the next daemon-launched
  run takes the writer and succeeds, with each platform's crawl and drift checks evaluated.
- A daemon-launched run killed with SIGKILL (its run worker, as the OOM killer would) while it
  holds the writer: the next `gpuplan refresh` takes it and succeeds. (Dagster's code server,
  which started the run worker, marks the run failed; had it died too, the run would stay
  STARTED until run monitoring's limit, holding nothing.)
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Iterator

import dagster as dg
import pytest

from config.settings import Settings
from reliability.run_holders import (
    DAY,
    ROOT,
    STOP_S,
    Home,
    copy_warehouse,
    finish,
    refresh,
    run_of,
    seed_warehouse,
    until,
    values,
    writer_file_held,
    writer_holder,
)
from scrapers.registry import platforms
from warehouse import daily_plans, drift
from warehouse.engine import connect

# bench/ is no package: the daemon harness is the bench's, shared with these cases
sys.path.insert(0, str(ROOT / "bench"))
import bench_daemon

pytestmark = pytest.mark.faults


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[bench_daemon.Daemon, Home]]:
    """The daemon, and a Home whose refreshes write the same warehouse and DAGSTER_HOME it does."""
    root = tmp_path_factory.mktemp("daemon")
    seed = seed_warehouse(root / "seed")
    base = {k: v for k, v in os.environ.items() if k != "GPUPLAN_DEBUG"} | values(root / "seed")
    with bench_daemon.running_daemon(root, base) as running:
        copy_warehouse(seed, running.folder)
        yield running, Home(Settings.from_env(running.env), running.env, running.home)


def _checks_of(home: Home, run_id: str) -> dict[str, bool]:
    with home.instance() as instance:
        logs = instance.all_logs(run_id, of_type=dg.DagsterEventType.ASSET_CHECK_EVALUATION)
    evaluations = [log.dagster_event.event_specific_data for log in logs]  # type: ignore[union-attr]
    return {
        f"{e.asset_key.to_user_string()}:{e.check_name}": e.passed  # type: ignore[union-attr]
        for e in evaluations
    }


@pytest.mark.slow
def test_a_daemon_run_after_a_killed_refresh_takes_the_writer_and_succeeds(
    daemon: tuple[bench_daemon.Daemon, Home],
) -> None:
    running, home = daemon
    with writer_file_held(home.settings):
        killed = refresh(home, DAY)
        until(lambda: writer_holder(home.settings), "the refresh to hold the writer")
        os.killpg(killed.pid, signal.SIGKILL)
        killed.wait(timeout=STOP_S)
    run = running.run_day(DAY)
    assert run.status == "SUCCESS", run
    checks = _checks_of(home, run.run_id)
    for platform in platforms():
        assert f"crawls/{platform}:crawled" in checks, platform
        assert f"offers:{drift.check_name(platform)}" in checks, platform
    with connect.reader(home.settings.warehouse) as con:
        assert set(daily_plans.day_crawls(con, DAY)["platform"]) >= {"quotes", "vastai"}
        assert not daily_plans.plans_for_date(con, DAY).empty


@pytest.mark.slow
def test_a_killed_daemon_run_blocks_no_later_refresh(daemon: tuple[bench_daemon.Daemon, Home]) -> None:
    running, home = daemon
    with writer_file_held(home.settings):
        run_id, _ = running.launch(DAY)
        held = until(lambda: writer_holder(home.settings), "the daemon's run to hold the writer", 300)
        assert held["run"] == run_id  # type: ignore[index]
        os.kill(int(held["pid"]), signal.SIGKILL)  # type: ignore[index]  # its run worker
        until(lambda: not writer_holder(home.settings), "the kernel to drop the killed run's lock", STOP_S)
    returncode, _, err = finish(refresh(home, DAY, "--wait", "30"))
    assert returncode == 0, err
    # the code server that started its run worker saw it die and marked it failed; the writer was
    # free before that, and nothing of ours read Dagster's state to free it
    assert run_of(home, run_id).status == dg.DagsterRunStatus.FAILURE

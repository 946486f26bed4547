"""Bench: the scheduled run (one daemon-launched `daily_refresh`) against `gpuplan refresh --offline`.

    /work/venv/bin/python bench/bench_daemon.py [--pairs 3] [--quick]

The product's main mode is the schedule: `dg dev` (or `dagster-daemon run` beside the webserver)
launches `daily_refresh` every morning. This runs that path as a deployment has it: a DAGSTER_HOME
holding the repo's `dagster.yaml` (SQLite storage, Dagster's default QueuedRunCoordinator and
DefaultRunLauncher), `dagster-daemon run` started from the repository root (`[tool.dagster]` in
pyproject.toml names the code location) in its own process group, and killed as a group at the
end (it may ignore SIGTERM: ../shared/reference/stack.md, 5.6).

Each pair, in one run of this script so that both sides see the same machine load, in
alternating order, both on a fresh copy of the same warehouse (one day refreshed before, untimed:
`bench_e2e.one_day`, so neither side replays the snapshots' recorded day before), both for today
in the schedule's time zone, offline, every platform, the default models and methods:

- refresh: `gpuplan refresh --offline` as the README runs it (no DAGSTER_HOME), wall time.
- daemon: `dagster job launch -j daily_refresh` with the partition tag and the run config
  `{resources: {crawler: {config: {offline: true}}}}` (what the UI's Launchpad takes), then the
  daemon dequeues it and launches its run worker. Timed from the run's creation (as a schedule
  tick creates it) to its end: queue, run worker start-up, the run. The launch command's own
  seconds (it starts a code server to read the job; a tick does not) are shown beside, not counted.

After each pair the two warehouses' `cheapest_plans` of the day must be equal row for row (but
`computed_at`). Judged: median daemon / median refresh <= RATIO_TARGET. Exits 1 when a
run fails, the plans differ, or (without --quick) the ratio is missed.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from zoneinfo import ZoneInfo

import bench_e2e

from config.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
RATIO_TARGET = 1.5  # the daemon-launched run takes at most 1.5x `gpuplan refresh`
DAGSTER = Path(sys.executable).with_name("dagster")
DAGSTER_DAEMON = Path(sys.executable).with_name("dagster-daemon")
JOB = "daily_refresh"
OFFLINE_CONFIG = {"resources": {"crawler": {"config": {"offline": True}}}}
RUN_TIMEOUT_S = 600.0
READY_TIMEOUT_S = 180.0
POLL_S = 0.5


@dataclass(frozen=True)
class DaemonRun:
    run_id: str
    status: str
    queued_s: float  # created -> its run worker started
    run_s: float  # run worker started -> run ended
    launch_s: float  # the `dagster job launch` command itself

    @property
    def total_s(self) -> float:
        return self.queued_s + self.run_s


@dataclass(frozen=True)
class Daemon:
    """A `dagster-daemon run` on DAGSTER_HOME `home`, its runs writing the warehouse in `folder`."""

    home: Path
    folder: Path
    env: dict[str, str]
    process: subprocess.Popen[bytes]

    def launch(self, day: dt.date, run_config: dict[str, object] = OFFLINE_CONFIG) -> tuple[str, float]:
        """Submit one `daily_refresh` run of `day` to the queue; its run id and the command's seconds."""
        run_id = str(uuid.uuid4())
        command = [str(DAGSTER), "job", "launch", "-j", JOB, "--run-id", run_id]
        command += ["--tags", json.dumps({"dagster/partition": day.isoformat()})]
        command += ["--config-json", json.dumps(run_config)]
        start = time.perf_counter()
        done = subprocess.run(command, cwd=ROOT, env=self.env, capture_output=True, text=True, timeout=300)
        if done.returncode != 0:
            raise RuntimeError(f"dagster job launch exited {done.returncode}: {done.stderr[-2000:]}")
        return run_id, time.perf_counter() - start

    def wait(self, run_id: str, timeout_s: float = RUN_TIMEOUT_S) -> DaemonRun:
        """Wait for the run to end; its status and times (from the instance's run record)."""
        import dagster as dg

        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with dg.DagsterInstance.from_config(str(self.home)) as instance:
                record = instance.get_run_record_by_id(run_id)
            if record is not None and record.dagster_run.is_finished:
                created = record.create_timestamp.timestamp()
                started = record.start_time or created
                ended = record.end_time or started
                status = record.dagster_run.status.value
                return DaemonRun(run_id, status, started - created, ended - started, 0.0)
            time.sleep(POLL_S)
        raise TimeoutError(f"run {run_id} did not end within {timeout_s:g} s")

    def run_day(self, day: dt.date) -> DaemonRun:
        run_id, launch_s = self.launch(day)
        run = self.wait(run_id)
        return DaemonRun(run.run_id, run.status, run.queued_s, run.run_s, launch_s)


def daemon_env(home: Path, folder: Path, base: dict[str, str]) -> dict[str, str]:
    env = {key: value for key, value in base.items() if not key.startswith(("GPUPLAN_", "DAGSTER_"))}
    env |= {key: value for key, value in base.items() if key.startswith("GPUPLAN_")}
    env |= {
        "DAGSTER_HOME": str(home),
        "GPUPLAN_WAREHOUSE": str(folder / "warehouse.duckdb"),
        "GPUPLAN_CRAWL_DIR": str(folder / "crawls"),
    }
    return env


@contextmanager
def running_daemon(root: Path, base_env: dict[str, str] | None = None) -> Iterator[Daemon]:
    """`dagster-daemon run` on a fresh DAGSTER_HOME under `root` (the repo's dagster.yaml), its
    runs writing `root/daemon/`; ready (its run queue heartbeating) when this yields."""
    import dagster as dg

    home = root / "dagster_home"
    home.mkdir(parents=True)
    shutil.copy2(ROOT / "config" / "dagster.yaml", home / "dagster.yaml")
    # its SQLite storage made now, as in a deployment: made by the daemon while this process polls
    # it, both would stamp its schema version (UNIQUE constraint failed: alembic_version)
    dg.DagsterInstance.from_config(str(home)).dispose()
    folder = root / "daemon"
    env = daemon_env(home, folder, dict(os.environ if base_env is None else base_env))
    log = (root / "daemon.log").open("wb")
    command = [str(DAGSTER_DAEMON), "run"]
    process = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    try:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while True:
            with dg.DagsterInstance.from_config(str(home)) as instance:
                if "QUEUED_RUN_COORDINATOR" in instance.get_daemon_heartbeats():
                    break
            if process.poll() is not None or time.monotonic() > deadline:
                said = (root / "daemon.log").read_text()[-2000:]
                raise RuntimeError(f"dagster-daemon did not start: {said}")
            time.sleep(POLL_S)
        yield Daemon(home, folder, env, process)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)  # the daemon, its code server, any run worker
        process.wait(timeout=30)
        log.close()


def plans_of(folder: Path, day: dt.date) -> list[tuple[object, ...]]:
    from warehouse.engine import connect

    with connect.reader(folder / "warehouse.duckdb") as con:
        return con.execute(
            "SELECT * EXCLUDE (computed_at) FROM cheapest_plans WHERE plan_date = $day ORDER BY ALL",
            {"day": day},
        ).fetchall()


def reset(folder: Path, template: Path) -> None:
    """`folder` made a fresh copy of the template warehouse (no crawls)."""
    if folder.exists():
        shutil.rmtree(folder)
    bench_e2e.fresh_folder(folder.parent, folder.name, template)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="one pair, not judged")
    args = parser.parse_args()
    pairs = 1 if args.quick else args.pairs
    platforms: list[str] = []  # every platform, as the schedule crawls them
    day = dt.datetime.now(ZoneInfo(Settings.from_env({}).schedule_timezone)).date()
    failed = False
    with tempfile.TemporaryDirectory(prefix="bench-daemon-") as tmp:
        root = Path(tmp)
        template = bench_e2e.one_day(root, platforms)
        load_before = os.getloadavg()
        refreshes: list[float] = []
        daemon_runs: list[DaemonRun] = []
        with running_daemon(root) as daemon:
            print(
                f"{'pair':<5} {'first':<8} {'refresh s':>10} {'daemon s':>9} {'queued':>7} {'run':>6} "
                f"{'launch cmd':>11} {'ratio':>6}"
            )
            for pair in range(pairs):
                folder = root / f"refresh-{pair}"
                reset(daemon.folder, template)
                bench_e2e.fresh_folder(root, folder.name, template)
                sides = ["refresh", "daemon"] if pair % 2 == 0 else ["daemon", "refresh"]
                for side in sides:
                    if side == "refresh":
                        run, _ = bench_e2e.refresh(folder, platforms, None)
                        failed |= run.returncode != 0
                        refreshes.append(run.wall_s)
                    else:
                        daemon_runs.append(daemon.run_day(day))
                        failed |= daemon_runs[-1].status != "SUCCESS"
                done = daemon_runs[-1]
                same = plans_of(folder, day) == plans_of(daemon.folder, day) != []
                failed |= not same
                print(
                    f"{pair + 1:<5} {sides[0]:<8} {refreshes[-1]:>10.1f} {done.total_s:>9.1f} "
                    f"{done.queued_s:>7.1f} {done.run_s:>6.1f} {done.launch_s:>11.1f} "
                    f"{done.total_s / refreshes[-1]:>6.2f}  {done.status}{'' if same else ', PLANS DIFFER'}"
                )
        load_after = os.getloadavg()
    ratio = statistics.median(run.total_s for run in daemon_runs) / statistics.median(refreshes)
    print(f"\nmedian daemon run / median refresh: {ratio:.2f} (target <= {RATIO_TARGET:g})")
    print(
        f"load average before {load_before[0]:.2f}, after {load_after[0]:.2f} (1 min), {os.cpu_count()} CPUs"
    )
    if args.quick:
        print("not judged in --quick")
    elif ratio > RATIO_TARGET:
        failed = True
    if failed:
        raise SystemExit(1)


if __name__ == "__main__":
    main()

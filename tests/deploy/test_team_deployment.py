"""The team deployment (deploy/) as it runs: Dagster on a real PostgreSQL, with the code server, the
daemon and the webserver as separate processes started from the systemd units' own command lines.

The daily schedule is switched on through the webserver's GraphQL API (what the UI's toggle does);
the daemon must launch an offline run of `daily_refresh` that succeeds. Then the daemon and the
webserver restart, and the run history, the schedule's state and the asset materializations must
still be there, read back through GraphQL. No mocks: the only stand-in is GPUPLAN_OFFLINE (the
bundled snapshots instead of the network, which tests never touch).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from loopback import free_port
from postgres_server import Postgres, postgres_server

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
UNITS = ("gpuplan-code-server", "gpuplan-daemon", "gpuplan-webserver")
LOCATION = {
    "repositoryLocationName": "gpuplan",
    "repositoryName": "__repository__",
    "scheduleName": "daily_refresh_schedule",
}


def exec_start(unit: str) -> list[str]:
    """The unit's ExecStart, as argv."""
    text = (DEPLOY / "systemd" / f"{unit}.service").read_text()
    match = re.search(r"^ExecStart=(.+)$", text, re.MULTILINE)
    assert match, f"{unit}.service has no ExecStart"
    return match.group(1).split()


class Deployment:
    """The three services of deploy/systemd, started as the units start them, on this checkout."""

    def __init__(self, folder: Path, pg: Postgres) -> None:
        self.folder = folder
        self.code_port, self.web_port = free_port(), free_port()
        home = folder / "dagster_home"
        home.mkdir()
        shutil.copy(DEPLOY / "dagster.yaml", home / "dagster.yaml")
        workspace = yaml.safe_load((DEPLOY / "workspace.yaml").read_text())
        workspace["load_from"][0]["grpc_server"]["port"] = self.code_port
        self.workspace = folder / "workspace.yaml"
        self.workspace.write_text(yaml.safe_dump(workspace))
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("DAGSTER_", "GPUPLAN_"))},
            **pg.env(),
            "DAGSTER_HOME": str(home),
            "GPUPLAN_WAREHOUSE": str(folder / "data" / "warehouse.duckdb"),
            "GPUPLAN_OFFLINE": "true",
            # Every minute, so the test need not wait for 06:00; a tick plans the day it falls on.
            "GPUPLAN_SCHEDULE_CRON": "* * * * *",
            "GPUPLAN_SCHEDULE_TZ": "UTC",
        }
        self.processes: dict[str, subprocess.Popen[bytes]] = {}

    def argv(self, unit: str) -> list[str]:
        venv_bin = str(Path(sys.executable).parent)
        replaced = []
        for word in exec_start(unit):
            word = word.replace("/opt/gpuplan/.venv/bin", venv_bin)
            word = word.replace("/opt/gpuplan/deploy/workspace.yaml", str(self.workspace))
            replaced.append(word)
        port = {"gpuplan-code-server": self.code_port, "gpuplan-webserver": self.web_port}.get(unit)
        if port is not None:
            replaced[replaced.index("--port") + 1] = str(port)
        return replaced

    def start(self, unit: str) -> None:
        log = (self.folder / f"{unit}.log").open("ab")
        self.processes[unit] = subprocess.Popen(
            self.argv(unit),
            cwd=ROOT,
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def stop(self, unit: str) -> None:
        process = self.processes.pop(unit)
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)

    def stop_all(self) -> None:
        for unit in reversed(list(self.processes)):
            with contextlib.suppress(ProcessLookupError):
                self.stop(unit)

    def logs(self) -> str:
        return "\n".join(
            f"--- {path.name} (last lines)\n" + "\n".join(path.read_text(errors="replace").splitlines()[-25:])
            for path in sorted(self.folder.glob("*.log"))
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.web_port}"

    def graphql(self, query: str, variables: dict[str, object] | None = None) -> dict[str, object]:
        request = urllib.request.Request(
            self.url + "/graphql",
            data=json.dumps({"query": query, "variables": variables or {}}).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            answer = json.load(response)
        assert "errors" not in answer, answer
        return answer["data"]

    def wait_for(self, what: str, probe, timeout_s: float):  # type: ignore[no-untyped-def]
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            for unit, process in self.processes.items():
                assert process.poll() is None, f"{unit} exited with {process.returncode}\n{self.logs()}"
            try:
                found = probe()
            except (OSError, urllib.error.URLError):
                found = None
            if found:
                return found
            time.sleep(2)
        pytest.fail(f"timed out after {timeout_s:.0f} s waiting for {what}\n{self.logs()}")

    def location_loaded(self) -> bool:
        data = self.graphql(
            "{ workspaceOrError { ... on Workspace { locationEntries { name "
            "locationOrLoadError { __typename } } } } }"
        )
        entries = data["workspaceOrError"]["locationEntries"]  # type: ignore[index]
        return any(e["locationOrLoadError"]["__typename"] == "RepositoryLocation" for e in entries)


@pytest.fixture
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    with postgres_server() as pg:
        deployed = Deployment(tmp_path_factory.mktemp("team"), pg)
        try:
            yield deployed
        finally:
            deployed.stop_all()


RUNS = """
query { runsOrError(filter: {tags: [{key: "dagster/schedule_name", value: "daily_refresh_schedule"}]}) {
  ... on Runs { results { runId status tags { key value } } } } }
"""
SCHEDULE = """
query ($selector: ScheduleSelector!) { scheduleOrError(scheduleSelector: $selector) {
  ... on Schedule { scheduleState { status ticks(limit: 10) { status runIds } } } } }
"""
START_SCHEDULE = """
mutation ($selector: ScheduleSelector!) { startSchedule(scheduleSelector: $selector) {
  __typename ... on ScheduleStateResult { scheduleState { status } } ... on PythonError { message } } }
"""
MATERIALIZATIONS = """
query { assetOrError(assetKey: {path: ["cheapest_plans"]}) {
  ... on Asset { assetMaterializations(limit: 5) { runId partition } } } }
"""


def scheduled_runs(deployed: Deployment) -> list[dict[str, object]]:
    return deployed.graphql(RUNS)["runsOrError"]["results"]  # type: ignore[index,no-any-return]


def test_the_daemon_runs_the_schedule_on_postgres_and_a_restart_keeps_the_history(
    deployment: Deployment,
) -> None:
    for unit in UNITS:
        deployment.start(unit)
    deployment.wait_for("the webserver to load the code location", deployment.location_loaded, 240)

    started = deployment.graphql(START_SCHEDULE, {"selector": LOCATION})["startSchedule"]
    assert started["scheduleState"]["status"] == "RUNNING", started  # type: ignore[index]

    def finished() -> dict[str, object] | None:
        runs = scheduled_runs(deployment)
        failed = [run for run in runs if run["status"] in ("FAILURE", "CANCELED")]
        assert not failed, f"a scheduled run failed: {failed}\n{deployment.logs()}"
        return next((run for run in runs if run["status"] == "SUCCESS"), None)

    run = deployment.wait_for("the schedule's run to succeed", finished, 480)
    tags = {tag["key"]: tag["value"] for tag in run["tags"]}  # type: ignore[union-attr,index]
    assert tags["gpuplan/writes"] == "warehouse"  # what the run queue limits to one at a time
    assert (Path(deployment.env["GPUPLAN_WAREHOUSE"])).is_file()

    # Restart what a team restarts: the daemon and the webserver (the code server keeps serving).
    deployment.stop("gpuplan-webserver")
    deployment.stop("gpuplan-daemon")
    deployment.start("gpuplan-daemon")
    deployment.start("gpuplan-webserver")
    deployment.wait_for("the webserver to come back", deployment.location_loaded, 240)

    kept = {r["runId"]: r["status"] for r in scheduled_runs(deployment)}
    assert kept[run["runId"]] == "SUCCESS"
    state = deployment.graphql(SCHEDULE, {"selector": LOCATION})["scheduleOrError"]["scheduleState"]  # type: ignore[index]
    assert state["status"] == "RUNNING"  # type: ignore[index]
    assert any(run["runId"] in tick["runIds"] for tick in state["ticks"])  # type: ignore[index]
    materialized = deployment.graphql(MATERIALIZATIONS)["assetOrError"]["assetMaterializations"]  # type: ignore[index]
    assert any(m["runId"] == run["runId"] for m in materialized)  # type: ignore[union-attr]

    # The README's health check says so too, once the restarted daemon has sent its heartbeats.
    def healthy() -> bool:
        check = subprocess.run(
            [sys.executable, str(DEPLOY / "healthcheck.py"), deployment.url],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        return check.returncode == 0 and check.stdout.strip().endswith("healthy")

    deployment.wait_for("deploy/healthcheck.py to say healthy", healthy, 120)

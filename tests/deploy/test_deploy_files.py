"""deploy/ holds together: what dagster.yaml reads is in the example environment, the units and the
compose file start the same code location, and the workspace points at the code server's port."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"


def _env_names_read(node: object) -> set[str]:
    if isinstance(node, dict):
        found = {node["env"]} if set(node) == {"env"} else set()
        return found.union(*(_env_names_read(value) for value in node.values()))
    if isinstance(node, list):
        return set().union(*(_env_names_read(value) for value in node))
    return set()


def test_every_variable_the_instance_reads_is_in_the_example_environment() -> None:
    read = _env_names_read(yaml.safe_load((DEPLOY / "dagster.yaml").read_text()))
    assert read == {
        "DAGSTER_PG_HOST",
        "DAGSTER_PG_PORT",
        "DAGSTER_PG_USER",
        "DAGSTER_PG_PASSWORD",
        "DAGSTER_PG_DB",
    }
    example = (DEPLOY / "gpuplan.env.example").read_text()
    assert read | {"DAGSTER_HOME"} <= set(re.findall(r"^([A-Z_]+)=", example, re.MULTILINE))


def test_the_units_and_compose_start_one_code_location_on_the_workspace_port() -> None:
    workspace = yaml.safe_load((DEPLOY / "workspace.yaml").read_text())["load_from"][0]["grpc_server"]
    code = (DEPLOY / "systemd" / "gpuplan-code-server.service").read_text()
    assert f"--port {workspace['port']} " in code
    assert "--module-name pipelines.definitions --location-name gpuplan" in code
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())["services"]
    assert "--module-name pipelines.definitions --location-name gpuplan" in compose["code-server"]["command"]
    assert f"--port {workspace['port']} " in compose["code-server"]["command"]
    for unit, service in (("gpuplan-daemon", "daemon"), ("gpuplan-webserver", "webserver")):
        text = (DEPLOY / "systemd" / f"{unit}.service").read_text()
        assert "--workspace /opt/gpuplan/deploy/workspace.yaml" in text
        assert "EnvironmentFile=/etc/gpuplan/gpuplan.env" in text
        assert "--workspace /opt/gpuplan/deploy/workspace.yaml" in compose[service]["command"]
        assert compose[service]["network_mode"] == "service:code-server"  # localhost:4266 reaches it


def test_both_jobs_are_limited_to_one_writing_run_by_the_queue() -> None:
    from pipelines.dagster_jobs import WRITES_WAREHOUSE, backfill_plans, daily_refresh

    (limit,) = yaml.safe_load((DEPLOY / "dagster.yaml").read_text())["run_queue"]["tag_concurrency_limits"]
    assert {limit["key"]: limit["value"]} == WRITES_WAREHOUSE and limit["limit"] == 1
    for job in (daily_refresh, backfill_plans):
        assert job.tags == WRITES_WAREHOUSE

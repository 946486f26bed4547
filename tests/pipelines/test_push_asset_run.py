"""The daily run's `push` asset materialized by a real Dagster instance (a DAGSTER_HOME holding
config/dagster.yaml) after an offline refresh of the bundled snapshots: the day's plan changes and
summary reach a loopback webhook once; a channel that is down is a warning and a recorded failure,
never a failed run, and is retried by the next run, which sends nothing twice."""

from __future__ import annotations

import datetime as dt
import shutil
import socket
from pathlib import Path

import dagster as dg
import pytest
from push_server import PushServer

from config.settings import Settings
from pipelines.definitions import build_defs
from pipelines.runs import execute_day
from warehouse.engine import connect

pytestmark = pytest.mark.slow

DAY = dt.date(2026, 11, 30)  # the snapshots' recorded day (and the day before, replayed first)
NOTIFY = """\
- kind: webhook
  url: ${HOOK_BASE}/hook
  send: [plan_changes, summary]
- kind: slack
  name: down
  url: ${DEAD_BASE}/slack
"""


def test_the_push_asset_pushes_the_days_news_once_and_a_down_channel_fails_nothing(
    env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "dagster_home"
    home.mkdir()
    shutil.copy2(Path(__file__).parents[2] / "config" / "dagster.yaml", home / "dagster.yaml")
    (tmp_path / "notify.yaml").write_text(NOTIFY, "utf-8")
    hook = PushServer()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{probe.getsockname()[1]}"
    for name, value in {"HOOK_BASE": hook.url, "DEAD_BASE": dead}.items():
        monkeypatch.setenv(name, value)
    settings = Settings.from_env({**env, "GPUPLAN_NOTIFY": str(tmp_path / "notify.yaml")})
    execute_day(settings, DAY, offline=True, wait_s=30)  # the day's plans (offline: pushes nothing)
    assert hook.requests == []

    monkeypatch.setenv("DAGSTER_HOME", str(home))
    job = build_defs(settings).resolve_job_def("daily_refresh")
    metadata = []
    try:
        with dg.DagsterInstance.get() as instance:
            for _ in range(2):
                result = job.execute_in_process(
                    partition_key=DAY.isoformat(), instance=instance, asset_selection=[dg.AssetKey("push")]
                )
                assert result.success  # a channel down is never a failed run
                (event,) = result.get_asset_materialization_events()
                metadata.append({k: v.value for k, v in event.materialization.metadata.items()})
                warnings = [entry.message for entry in instance.all_logs(result.run_id) if entry.level == 30]
                assert any("to down failed: ConnectError" in message for message in warnings)
    finally:
        hook.close()
    assert metadata[0]["sent"] == 2 and metadata[0]["failed"] == 2  # plan changes and summary, each
    assert metadata[1] == {"sent": 0, "failed": 2, "already_sent": 2}
    bodies = [request.body for request in hook.requests]
    assert sorted(body["event"] for body in bodies) == ["plan_changes", "summary"]
    by_event = {body["event"]: body for body in bodies}
    assert {body["date"] for body in bodies} == {DAY.isoformat()}
    assert by_event["plan_changes"]["entries"]  # the digest JSON's own plan changes
    assert by_event["summary"]["text"].count("\n") >= 1 and by_event["summary"]["entries"] == []  # a headline
    with connect.writer(settings.warehouse, publish=False) as con:
        sends = con.execute(
            "SELECT channel, status, attempts FROM push_sends ORDER BY channel, event_key"
        ).fetchall()
    assert [row[1:] for row in sends if row[0] == "down"] == [("failed", 2), ("failed", 2)]
    assert [row[1:] for row in sends if row[0] != "down"] == [("sent", 1), ("sent", 1)]

"""The `watch_cycle` job run by a real Dagster instance (a DAGSTER_HOME holding config/dagster.yaml),
from the code location's Definitions: a live crawl of Vast.ai's recorded answer served on loopback
(the crawler's origin_override, GPUPLAN_ORIGIN_OVERRIDE), a stock watch (GPUPLAN_WATCHES) that holds,
pushed to a loopback webhook (GPUPLAN_NOTIFY). It fires and pushes once; the next cycle, still
holding, neither fires nor pushes (watch_states)."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from email.utils import format_datetime
from pathlib import Path

import dagster as dg
import pytest
from loopback import serving
from push_server import PushServer
from reliability.faults import snapshot

from warehouse.engine import connect

pytestmark = pytest.mark.slow

# Vast.ai's recorded answer lists an A100 SXM 80GB machine with 8 GPUs free (offer 28422871).
WATCHES = "- gpu: A100 SXM 80GB\n  min_available_gpus: 8\n  platforms: [vastai]\n"
NOTIFY = "- kind: webhook\n  url: ${HOOK_BASE}/hook\n  send: [watches]\n"


def test_the_watch_cycle_job_fires_a_watch_once_on_a_real_instance(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "dagster_home"
    home.mkdir()
    shutil.copy2(Path(__file__).parents[2] / "config" / "dagster.yaml", home / "dagster.yaml")
    (tmp_path / "watches.yaml").write_text(WATCHES, "utf-8")
    (tmp_path / "notify.yaml").write_text(NOTIFY, "utf-8")
    hook = PushServer()
    env = {
        "DAGSTER_HOME": str(home),
        "GPUPLAN_WAREHOUSE": str(tmp_path / "warehouse.duckdb"),
        "GPUPLAN_CRAWL_DIR": str(tmp_path / "crawls"),
        "GPUPLAN_WATCHES": str(tmp_path / "watches.yaml"),
        "GPUPLAN_NOTIFY": str(tmp_path / "notify.yaml"),
        "HOOK_BASE": hook.url,
    }
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    from pipelines.definitions import defs

    job = defs().resolve_job_def("watch_cycle")
    fired, runs = [], []
    try:
        with serving(snapshot("vastai"), "") as server, dg.DagsterInstance.get() as instance:
            config = {"resources": {"crawler": {"config": {"origin_override": server.url}}}}
            for _ in range(2):
                server.date_header = format_datetime(datetime.now(UTC), usegmt=True)  # the platform's clock
                result = job.execute_in_process(run_config=config, instance=instance)
                assert result.success
                fired.append(result.output_for_node("check_watches"))
                runs.append(result.run_id)
            assert [run.run_id for run in instance.get_runs()] == runs[::-1]
            assert all(run.status == dg.DagsterRunStatus.SUCCESS for run in instance.get_runs())
            warned = [
                [entry.message for entry in instance.all_logs(run_id) if entry.level == 30] for run_id in runs
            ]
    finally:
        hook.close()
    assert fired == [1, 0]
    assert any("watch fired: stock:A100 SXM 80GB>=8@vastai" in message for message in warned[0])
    assert not any("watch fired" in message for message in warned[1])
    (pushed,) = [request.body for request in hook.requests if request.path == "/hook"]
    assert pushed["key"] == "watch:stock:A100 SXM 80GB>=8@vastai:1"
    (entry,) = pushed["entries"]
    assert entry["now"]["value"] == 8 and entry["now"]["platform"] == "vastai"
    with connect.writer(tmp_path / "warehouse.duckdb", publish=False) as con:
        states = con.execute("SELECT watch_key, holding, fires FROM watch_states").fetchall()
        ((crawled,),) = con.execute("SELECT count(*) FROM crawl_runs WHERE platform = 'vastai'").fetchall()
        sends = con.execute("SELECT status FROM push_sends").fetchall()
    assert states == [("stock:A100 SXM 80GB>=8@vastai", True, 1)]
    assert crawled == 2 and sends == [("sent",)]

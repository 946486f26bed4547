"""`gpuplan watch` (gpuplan/commands/watch.py) run as people run it, in a child process: what it
refuses, in one line, before crawling anything; what a cycle shows on a terminal of 80 columns when
it crawls Vast.ai's recorded answer served on loopback (the hidden `--origin-override`, the crawl
setting GPUPLAN_ORIGIN_OVERRIDE) and pushes to a loopback webhook; and a clean stop on Ctrl-C or
SIGTERM while it waits for the next cycle."""

from __future__ import annotations

import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from email.utils import format_datetime
from pathlib import Path

import pytest
from loopback import FaultServer, serving
from push_server import PushServer
from reliability.faults import snapshot

pytestmark = pytest.mark.slow  # each test starts `gpuplan` in a child process

GPUPLAN = str(Path(sys.executable).with_name("gpuplan"))
# Vast.ai's recorded answer lists an A100 SXM 80GB machine with 8 GPUs free (offer 28422871).
WATCHES = "- gpu: A100 SXM 80GB\n  min_available_gpus: 8\n  platforms: [vastai]\n"
NOTIFY = "- kind: webhook\n  url: ${HOOK_BASE}/hook\n  send: [watches]\n"
KEY = "watch:stock:A100 SXM 80GB>=8@vastai:1"


def _env(tmp_path: Path, **more: str) -> dict[str, str]:
    return {"PATH": "", "COLUMNS": "80", "HOME": str(tmp_path), **more}


def _watch(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [GPUPLAN, "--warehouse", str(tmp_path / "w.duckdb"), "watch", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=_env(tmp_path, **env),
        check=False,
    )


def test_a_bad_period_is_one_line(tmp_path: Path) -> None:
    result = _watch(tmp_path, "--every", "soon", "--once")
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "error: Invalid value: --every takes whole minutes (10, 10m, 1h), not 'soon' "
        "(`gpuplan watch --help` says more)"
    ]


def test_without_watches_it_says_how_to_set_them(tmp_path: Path) -> None:
    result = _watch(tmp_path, "--once")
    assert result.returncode == 2
    assert "set GPUPLAN_WATCHES" in result.stderr and not (tmp_path / "w.duckdb").exists()


def test_a_bad_watches_file_names_its_line(tmp_path: Path) -> None:
    watches = tmp_path / "watches.yaml"
    watches.write_text("- gpu: H100\n  below_usd_per_gpu_hour: 2\n  platfrom: [vastai]\n", "utf-8")
    result = _watch(tmp_path, "--once", GPUPLAN_WATCHES=str(watches))
    assert result.returncode == 2
    assert "line 3: unknown key 'platfrom'" in result.stderr


@pytest.fixture
def vastai() -> Iterator[FaultServer]:
    """Vast.ai's recorded answer on loopback, dated now (the platform's clock: a fresh crawl)."""
    with serving(snapshot("vastai"), format_datetime(datetime.now(UTC), usegmt=True)) as server:
        yield server


@pytest.fixture
def hook() -> Iterator[PushServer]:
    served = PushServer()
    yield served
    served.close()


def _files(tmp_path: Path, hook: PushServer | None = None) -> dict[str, str]:
    """The environment naming a watches file (a stock watch that holds on the recorded answer) and,
    given a hook, a notify file of one webhook channel to it."""
    (tmp_path / "watches.yaml").write_text(WATCHES, "utf-8")
    env = {"GPUPLAN_WATCHES": str(tmp_path / "watches.yaml")}
    if hook is not None:
        (tmp_path / "notify.yaml").write_text(NOTIFY, "utf-8")
        env |= {"GPUPLAN_NOTIFY": str(tmp_path / "notify.yaml"), "HOOK_BASE": hook.url}
    return env


def test_once_crawls_checks_fires_and_pushes_then_holds_quietly(
    tmp_path: Path, vastai: FaultServer, hook: PushServer
) -> None:
    env = _files(tmp_path, hook)
    first = _watch(tmp_path, "--once", "--origin-override", vastai.url, **env)
    second = _watch(tmp_path, "--once", "--origin-override", vastai.url, **env)
    assert first.returncode == 0, first.stderr
    assert second.returncode == 0, second.stderr
    lines = first.stdout.splitlines()
    assert lines[0] == "watching 1 watches every 15 min; 1 push channels (Ctrl-C stops)"
    assert lines[1].endswith(": crawled vastai ok")  # when, how long, what it crawled
    datetime.strptime(lines[1].split(" (")[0], "%Y-%m-%d %H:%M:%S UTC")
    assert lines[2].startswith("  line 1: ") and lines[2].endswith(": FIRED")
    assert lines[3].startswith("    ") and "vastai" in lines[3]  # what fired, and where
    assert lines[4:] == [f"  push webhook-1 {KEY}: sent"]
    again = second.stdout.splitlines()
    assert again[1].endswith(": crawled vastai ok")
    assert again[2:] == [lines[2].removesuffix("FIRED") + "holds"]  # one line per check, no push
    assert vastai.hits and all(hit.path != "/robots.txt" for hit in vastai.hits)
    (pushed,) = [request.body for request in hook.requests]
    assert pushed["key"] == KEY and pushed["entries"][0]["now"]["platform"] == "vastai"


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_a_signal_between_cycles_stops_at_once_and_cleanly(
    tmp_path: Path, vastai: FaultServer, stop: signal.Signals
) -> None:
    child = subprocess.Popen(
        [
            GPUPLAN,
            "--warehouse",
            str(tmp_path / "w.duckdb"),
            "watch",
            "--every",
            "1m",
            "--origin-override",
            vastai.url,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(tmp_path, **_files(tmp_path)),
    )
    lines: queue.Queue[str] = queue.Queue()
    reader = threading.Thread(target=lambda: [lines.put(line) for line in child.stdout or ()], daemon=True)
    reader.start()
    try:
        seen = []
        while not any("crawled" in line for line in seen):  # the first cycle has run
            seen.append(lines.get(timeout=120))
        child.send_signal(stop)
        child.wait(timeout=30)  # well before the next cycle, a minute after the first
    finally:
        child.kill()
        child.wait()
    reader.join(timeout=30)  # the rest of stdout, to its end
    assert child.returncode == 0, child.stderr.read() if child.stderr else ""
    while not lines.empty():
        seen.append(lines.get())
    assert seen[-1] == "stopped\n"
    assert sum("crawled" in line for line in seen) == 1

"""`gpuplan notify --test` (gpuplan/commands/notify.py) run as people run it, against loopback
channels (tests/push_server.py): one line per channel, secrets never shown, exit 1 when a push
failed."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest
from push_server import PushServer

pytestmark = pytest.mark.slow  # each test starts `gpuplan` in a child process

NOTIFY = """\
- kind: slack
  url: ${HOOK_BASE}/slack
- kind: feishu
  url: ${HOOK_BASE}/feishu
  secret: ${SIGN_SECRET}
  lang: zh
"""
SECRET = "s3cr3t-sign-key"


def _notify(tmp_path: Path, base: str, *args: str) -> subprocess.CompletedProcess[str]:
    notify = tmp_path / "notify.yaml"
    notify.write_text(NOTIFY, "utf-8")
    return subprocess.run(
        [
            str(Path(sys.executable).with_name("gpuplan")),
            "--warehouse",
            str(tmp_path / "w.duckdb"),
            "notify",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={
            "PATH": "",
            "COLUMNS": "80",
            "HOME": str(tmp_path),
            "GPUPLAN_NOTIFY": str(notify),
            "HOOK_BASE": base,
            "SIGN_SECRET": SECRET,
        },
        check=False,
    )


def test_the_test_message_reaches_each_channel_and_says_so_per_channel(tmp_path: Path) -> None:
    server = PushServer()
    try:
        result = _notify(tmp_path, server.url, "--test")
    finally:
        server.close()
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 2 and all(len(line) <= 80 for line in lines)
    assert lines[0].startswith("slack-1 (slack, 127.0.0.1)") and lines[0].endswith(": sent")
    assert lines[1].startswith("feishu-2 (feishu, 127.0.0.1)") and lines[1].endswith(": sent")
    assert SECRET not in result.stdout + result.stderr and server.url not in result.stdout
    assert [request.path for request in server.requests] == ["/slack", "/feishu"]
    assert "sign" in server.requests[1].body  # the secret signs; it is never sent or shown


def test_a_channel_that_is_down_is_one_line_and_exit_1(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{probe.getsockname()[1]}"
    result = _notify(tmp_path, dead, "--test")
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        f"{channel} test:{day}: failed: ConnectError talking to 127.0.0.1"
        for channel, day in zip(
            ("slack-1 (slack, 127.0.0.1)", "feishu-2 (feishu, 127.0.0.1)"), _days(result.stdout), strict=True
        )
    ]
    assert SECRET not in result.stdout + result.stderr


def _days(stdout: str) -> list[str]:
    """The day each line names (today where the schedule runs, which the test does not fix)."""
    return [line.split(" test:")[1].split(":")[0] for line in stdout.splitlines()]

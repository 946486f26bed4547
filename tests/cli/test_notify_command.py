"""`gpuplan notify --test` and `--dry-run` (gpuplan/commands/notify.py) run as people run them,
against loopback channels (tests/push_server.py): one line per channel, secrets never shown, exit 1
when a push failed; a dry run shows what each channel would get and sends and records nothing."""

from __future__ import annotations

import socket
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest
from push_server import PushServer
from reliability.fault_days import day_settings, run_day
from reliability.synthetic_crawls import write_crawl

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


def _notify(
    tmp_path: Path, base: str, *args: str, channels: str = NOTIFY
) -> subprocess.CompletedProcess[str]:
    notify = tmp_path / "notify.yaml"
    notify.write_text(channels, "utf-8")
    return subprocess.run(
        [
            str(Path(sys.executable).with_name("gpuplan")),
            "--warehouse",
            str(tmp_path / "warehouse.duckdb"),
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


def test_a_dry_run_shows_each_channel_what_it_would_get_and_sends_nothing(tmp_path: Path) -> None:
    day = date(2026, 11, 30)
    settings = day_settings(tmp_path)
    write_crawl(settings.crawl_dir / day.isoformat(), day, 40)
    run_day(settings, day)  # the day's plans, made by the daily run's steps; a first day: no news
    summaries = NOTIFY.replace("/slack\n", "/slack\n  send: [summary]\n") + "  send: [summary]\n"
    server = PushServer()
    try:
        no_news = _notify(tmp_path, server.url, "--dry-run", "--date", day.isoformat())
        dry = _notify(tmp_path, server.url, "--dry-run", "--date", day.isoformat(), channels=summaries)
        received_by_dry_runs = list(server.requests)
        sent = _notify(tmp_path, server.url, "--date", day.isoformat(), channels=summaries)
    finally:
        server.close()
    assert no_news.returncode == 0, no_news.stderr
    assert no_news.stdout.splitlines() == [
        f"{day}: nothing to push (no plans that day, or no news the channels take)"
    ]
    assert dry.returncode == 0, dry.stderr
    assert received_by_dry_runs == []
    heads = [line for line in dry.stdout.splitlines() if not line.startswith("    ")]
    assert heads == [
        f"slack-1 (slack, 127.0.0.1) summary:{day}: would send:",
        f"feishu-2 (feishu, 127.0.0.1) summary:{day}: would send:",
    ]
    slack, feishu = (text.strip() for text in dry.stdout.split("would send:")[1:])
    assert day.isoformat() in slack and day.isoformat() in feishu  # each message, under its line
    assert slack != feishu  # feishu's is in Chinese (lang: zh)
    assert SECRET not in dry.stdout + dry.stderr and server.url not in dry.stdout
    assert sent.returncode == 0, sent.stderr  # the dry run recorded nothing: the real push sends it all
    assert sent.stdout.splitlines() == [head.replace("would send:", "sent") for head in heads]
    assert [request.path for request in server.requests] == ["/slack", "/feishu"]

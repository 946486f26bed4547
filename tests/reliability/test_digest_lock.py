"""A slow SMTP server and the writer lock.

Reproduced with `gpuplan digest --send` in a child process against a loopback server that waits
SLOW_S before answering the message, on a warehouse of SYNTHETIC crawls planned by the daily run's
functions. Before: the whole SMTP conversation ran inside the writer lock, so a load started
meanwhile waited for it (at 25 s a reply, 152 s; the load gave up after its 120 s). Now the mail is
built from the published snapshot and sent outside the lock: the load goes through while the
server is still silent, the send is recorded, and the snapshot is not republished for the record.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from loopback import free_port

from config.settings import Settings
from reliability.fault_days import METHODS, MODELS, run_day
from reliability.synthetic_crawls import write_crawl
from reliability.warehouse_files import CLI, THIRD_DAY, crawl
from warehouse.engine import connect
from warehouse.loading import load_crawl

pytestmark = pytest.mark.faults

DAY = date(2026, 11, 29)
SLOW_S = 6.0  # the server's pause before it accepts the message
LOAD_TIMEOUT_S = 2.0  # the concurrent load's patience: far less than the server's pause


@dataclass
class SlowMailbox:
    """aiosmtpd handler: keeps every message, after a pause (a relay answering slowly)."""

    envelopes: list[Any] = field(default_factory=list)
    receiving: float | None = None  # monotonic time the DATA arrived

    async def handle_DATA(self, server, session, envelope):  # aiosmtpd's hook name
        self.receiving = time.monotonic()
        await asyncio.sleep(SLOW_S)
        self.envelopes.append(envelope)
        return "250 OK"


def test_slow_smtp_server_never_holds_the_writer_lock(tmp_path: Path) -> None:
    port = free_port()
    env = {
        "GPUPLAN_WAREHOUSE": str(tmp_path / "warehouse" / "warehouse.duckdb"),
        "GPUPLAN_CRAWL_DIR": str(tmp_path / "crawls"),
        "GPUPLAN_MODELS": ",".join(MODELS),
        "GPUPLAN_METHODS": ",".join(METHODS),
        "GPUPLAN_SMTP_HOST": "127.0.0.1",
        "GPUPLAN_SMTP_PORT": str(port),
        "GPUPLAN_SMTP_SECURITY": "none",
        "GPUPLAN_SMTP_FROM": "gpuplan <digest@gpuplan.test>",
        "GPUPLAN_SMTP_TO": "ops@gpuplan.test",
    }
    settings = Settings.from_env(env)
    write_crawl(settings.crawl_dir / DAY.isoformat(), DAY, 40)
    run_day(settings, DAY)
    published = settings.warehouse.stat()
    mailbox = SlowMailbox()
    controller = Controller(mailbox, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        sender = subprocess.Popen(
            [sys.executable, "-c", CLI, "digest", "--send", "--date", DAY.isoformat()],
            env={**os.environ, **env},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 60
        while mailbox.receiving is None and sender.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert mailbox.receiving is not None, sender.communicate()

        with connect.writer(settings.warehouse, lock_timeout_s=LOAD_TIMEOUT_S) as con:  # meanwhile, a load
            loaded = load_crawl(con, crawl(settings, THIRD_DAY, 9, name="meanwhile"))
        loaded_after_s = time.monotonic() - mailbox.receiving
        after_load = settings.warehouse.stat().st_ino  # the load published a new snapshot

        out, err = sender.communicate(timeout=120)
    finally:
        controller.stop()
    assert sender.returncode == 0, err
    assert loaded.offers_loaded == 9 and loaded_after_s < SLOW_S, f"the load waited {loaded_after_s:.1f} s"
    assert len(mailbox.envelopes) == 1 and f"{DAY}: sent to ops@gpuplan.test" in out
    with connect.writer(settings.warehouse, publish=False) as con:
        assert con.execute("SELECT status FROM digest_sends").fetchall() == [("sent",)]
    # the load published once; recording the send did not republish the file
    assert after_load != published.st_ino and settings.warehouse.stat().st_ino == after_load

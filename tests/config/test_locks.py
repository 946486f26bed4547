"""config/locks.py: an exclusive flock taken with a deadline; the kernel frees it when its holder dies."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from config.locks import flock_by

HOLD = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)
fcntl.flock(fd, fcntl.LOCK_EX)
print("held", flush=True)
time.sleep(60)
"""


def test_a_held_lock_is_refused_by_the_deadline_and_taken_once_free(tmp_path: Path) -> None:
    path = tmp_path / "lock"
    first = os.open(path, os.O_RDWR | os.O_CREAT)
    second = os.open(path, os.O_RDWR)  # another open of the same file: flock excludes it too
    try:
        assert flock_by(first, time.monotonic())
        assert not flock_by(second, time.monotonic() + 0.3, poll_s=0.05)
        os.close(first)
        first = -1
        assert flock_by(second, time.monotonic())
    finally:
        for fd in (first, second):
            if fd >= 0:
                os.close(fd)


def test_a_holder_killed_with_sigkill_leaves_no_stale_lock(tmp_path: Path) -> None:
    path = tmp_path / "lock"
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(path)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        fd = os.open(path, os.O_RDWR)
        try:
            assert not flock_by(fd, time.monotonic())
            holder.send_signal(signal.SIGKILL)
            holder.wait(timeout=10)
            assert flock_by(fd, time.monotonic() + 5)
        finally:
            os.close(fd)
    finally:
        holder.kill()
        holder.wait()

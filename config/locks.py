"""An exclusive advisory file lock taken with a deadline: the one primitive under the writer's lock
(`warehouse.engine.connect`) and the crawl folder's (`scrapers.crawl.lock`).

flock, not fcntl/lockf record locks: two opens of the file in one process also exclude each
other, and the kernel drops the lock when its holder dies however it dies (SIGKILL included), so
there is never a stale lock to clean. What a waiter says about the holder is the caller's.
"""

from __future__ import annotations

import fcntl
import time
from collections.abc import Callable

POLL_S = 0.1  # short enough to feel immediate, long enough not to spin a core


def flock_by(
    fd: int, deadline: float, poll_s: float = POLL_S, waiting: Callable[[], None] | None = None
) -> bool:
    """Take an exclusive flock on `fd`, trying until `deadline` (a `time.monotonic()` value);
    False when the deadline passed without it. `waiting()` is called once, when the lock is first
    found held by another (a waiting step says so and names the holder)."""
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if waiting is not None:
                waiting()
                waiting = None
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            time.sleep(min(poll_s, left))

"""The crawl folder's lock: one run at a time crawls into a folder, or loads from it.

Two runs sharing a day's folder would clear each other's files mid-crawl (spurious failures) and
load each other's half-written feeds. So whoever writes or reads a crawl folder holds its lock,
`<folder>/.crawl.lock` (an advisory `flock`, released by the kernel when its holder dies, however
it dies): the crawl runner while it crawls, the pipeline's load while it reads, `gpuplan refresh`
for its whole run. A second one waits for it, up to a bound, then gets `CrawlFolderBusy` naming
the holder (the lock file says who holds it; its content is only ever informative).

Within one process the lock is re-entrant, across threads too: a run that holds its folder can
call the runner, which takes it again, and parallel crawls of one run share it.
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from config.locks import flock_by
from scrapers.crawl.summary import utc_now

LOCK_FILE = ".crawl.lock"
POLL_S = 0.2


class CrawlFolderBusy(RuntimeError):
    """Another process holds the crawl folder's lock (the message names it and the folder)."""


@dataclass
class _Held:
    fd: int
    count: int


_held: dict[Path, _Held] = {}
_acquiring: dict[Path, threading.Lock] = {}
_registry = threading.Lock()


def this_process() -> str:
    """This process as a holder: its command and pid, e.g. "gpuplan crawl --all, pid 42"."""
    command = " ".join([Path(sys.argv[0]).name, *sys.argv[1:3]]) if sys.argv and sys.argv[0] else "python"
    return f"{command}, pid {os.getpid()}"


def lock_path(folder: Path) -> Path:
    return folder / LOCK_FILE


def holder_of(folder: Path) -> str | None:
    """Who last took the folder's lock, as they described themselves (None when nobody did)."""
    try:
        return str(json.loads(lock_path(folder).read_text("utf-8"))["holder"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


@contextmanager
def crawl_folder_lock(folder: Path, *, wait_s: float, holder: str) -> Iterator[None]:
    """Hold `folder`'s lock (creating the folder); wait up to `wait_s` seconds for another holder.

    `holder` describes this process to whoever waits ("gpuplan refresh, Dagster run ..., pid 42").
    Raises CrawlFolderBusy after `wait_s` in vain. Re-entrant within the process.
    """
    folder.mkdir(parents=True, exist_ok=True)
    path = lock_path(folder).resolve()
    with _registry:
        acquiring = _acquiring.setdefault(path, threading.Lock())
    with acquiring:  # one thread takes the OS lock; the others then find it held by this process
        held = _held.get(path)
        if held is not None:
            held.count += 1
        else:
            _held[path] = _Held(_take(path, folder, wait_s, holder), 1)
    try:
        yield
    finally:
        with acquiring:
            held = _held[path]
            held.count -= 1
            if held.count == 0:
                del _held[path]
                fcntl.flock(held.fd, fcntl.LOCK_UN)
                os.close(held.fd)


def _take(path: Path, folder: Path, wait_s: float, holder: str) -> int:
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    if not flock_by(fd, time.monotonic() + wait_s, POLL_S):
        os.close(fd)
        other = holder_of(folder) or "another process"
        raise CrawlFolderBusy(
            f"crawl folder {folder} is in use by {other}; waited {wait_s:g} s. "
            "Two runs must not share a day's crawls: wait for it to finish, or stop it"
        )
    stamp = json.dumps({"holder": holder, "pid": os.getpid(), "since": utc_now().isoformat()})
    os.ftruncate(fd, 0)
    os.pwrite(fd, stamp.encode("utf-8"), 0)
    return fd

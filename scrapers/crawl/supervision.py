"""The parent's side of the crawl child (`scrapers.crawl.child`): start it, follow it, bound it, end it.

`run_child` starts one child for a set of crawls and yields, as they happen, when each started
and ended. It returns how the child ended: every crawl ended, or it was killed at the deadline,
or it was killed when its reactor stopped turning (no tick for `blocked_after_s`, caught then, not at
the deadline), or it died. Whether a crawl it left unfinished is to blame is `ChildExit.isolate`: a
child whose reactor stopped turning, or that died, gives no verdict on any one
crawl, so the runner reruns each unfinished crawl alone; one killed at the deadline while its
reactor turned had every unfinished crawl past its own time.

The child never outlives its parent: its stdin is a pipe this process never writes, so it reads
end-of-file when this process ends however it ends, and exits. An exception here (Ctrl-C, a
Dagster interrupt) kills it on the way out.
"""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import sys
import time
from collections import deque
from collections.abc import Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scrapers.crawl.child import TICK_S

STDERR_TAIL_BYTES = 8192  # enough for a traceback's last lines
LAST_LINE_CHARS = 300  # of a crashed child's output, for the summary's error
READ_BYTES = 65536


def blocked_after_s(timeout_s: float) -> float:
    """Seconds without a tick that mean a blocked reactor: 60 ticks (30 s), at most a quarter of the
    crawl's time. Once the child has ticked, that long a silence kills it at once: a callback holding
    the reactor that long holds every crawl sharing it. 30 s, not less: parsing the largest answer we
    read (SkyPilot's 3.7 MB AWS catalog) on a loaded 2-core machine must never read as a block."""
    return min(60 * TICK_S, timeout_s / 4)


@dataclass(frozen=True)
class ChildJob:
    """One crawl in the child: its platform, its Scrapy settings, its log file."""

    platform: str
    settings: Mapping[str, Any]
    log_file: Path

    def plan(self) -> dict[str, Any]:
        settings = {name: _plain(value) for name, value in self.settings.items()}
        return {"platform": self.platform, "settings": settings, "log_file": str(self.log_file)}


@dataclass(frozen=True)
class Ended:
    """How one crawl ended: `error` None means it closed and its report is to be read."""

    error: str | None = None


@dataclass
class ChildExit:
    """How the child ended, and which crawls it ended."""

    ended: set[str] = field(default_factory=set)
    returncode: int | None = None
    timed_out: bool = False
    blocked: bool = False  # its reactor had stopped turning when it was killed
    stderr_tail: bytes = b""

    @property
    def isolate(self) -> bool:
        """The unfinished crawls are not to blame one by one: rerun each alone to find out."""
        return self.blocked or not self.timed_out

    def failure(self, timeout_s: float) -> str:
        """Why a crawl this child left unfinished failed."""
        if self.blocked and not self.timed_out:
            quiet_s = blocked_after_s(timeout_s)
            return f"crawl blocked its process (no sign of life for {quiet_s:g} s) and was killed"
        if self.timed_out:
            return f"crawl did not finish within {timeout_s:g} s and was killed"
        last = last_line(self.stderr_tail.decode("utf-8", errors="replace"))
        return f"crawl process exited with code {self.returncode} without a report: {last or 'no output'}"


@dataclass(frozen=True)
class ChildEvent:
    """A crawl `started` (its spider opened) or `ended` (then `ended` says how)."""

    platform: str
    kind: str  # "started" | "ended"
    ended: Ended | None = None


def run_child(
    jobs: Sequence[ChildJob], out_dir: Path, env: Mapping[str, str], timeout_s: float
) -> Generator[ChildEvent, None, ChildExit]:
    """Run `jobs` in one crawl child (working folder `out_dir`), killed `timeout_s` after it starts.

    Yields each crawl's start and end as the child reports them; a crawl the child leaves
    unfinished gets no end: the returned `ChildExit` says why. Closing the generator early (an
    interrupt in the consumer) kills the child.
    """
    plan = json.dumps({"jobs": [job.plan() for job in jobs]}, ensure_ascii=False)
    events_read, events_write = os.pipe()
    try:
        child = subprocess.Popen(
            [sys.executable, "-m", "scrapers.crawl.child", plan, str(events_write)],
            stdin=subprocess.PIPE,  # the lifeline: never written, closed when this process ends
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            pass_fds=(events_write,),
            env=dict(env),
            cwd=out_dir,
        )
    finally:
        os.close(events_write)
    assert child.stderr is not None and child.stdin is not None
    result = ChildExit()
    try:
        yield from _follow(child, events_read, timeout_s, result)
    finally:
        os.close(events_read)
        if child.poll() is None:
            child.kill()
        child.wait()
        child.stdin.close()
        child.stderr.close()
    result.returncode = child.returncode
    return result


def _follow(
    child: subprocess.Popen[bytes], events_fd: int, timeout_s: float, result: ChildExit
) -> Iterator[ChildEvent]:
    """Read the child's events and stderr until both close or the deadline passes (then kill it)."""
    assert child.stderr is not None
    stderr_fd = child.stderr.fileno()
    start = time.monotonic()
    deadline = start + timeout_s
    last_tick: float | None = None
    pending = b""
    tail: deque[bytes] = deque()
    tail_bytes = 0
    with selectors.DefaultSelector() as selector:
        selector.register(events_fd, selectors.EVENT_READ)
        selector.register(stderr_fd, selectors.EVENT_READ)
        while selector.get_map():
            now = time.monotonic()
            remaining = deadline - now
            quiet_s = now - (last_tick if last_tick is not None else start)
            if remaining <= 0:
                result.timed_out = True
                result.blocked = quiet_s > blocked_after_s(timeout_s)
                child.kill()
                break
            if last_tick is not None and quiet_s > blocked_after_s(timeout_s):
                result.blocked = True  # caught at the tick it missed, not at the deadline
                child.kill()
                break
            wait_s = remaining if last_tick is None else min(remaining, blocked_after_s(timeout_s) - quiet_s)
            for key, _ in selector.select(max(wait_s, 0.0) + 0.01):
                data = os.read(key.fd, READ_BYTES)
                if not data:
                    selector.unregister(key.fd)
                elif key.fd == stderr_fd:
                    tail.append(data)
                    tail_bytes += len(data)
                    while tail_bytes - len(tail[0]) >= STDERR_TAIL_BYTES:
                        tail_bytes -= len(tail.popleft())
                else:
                    *lines, pending = (pending + data).split(b"\n")
                    for line in lines:
                        event = json.loads(line)
                        kind, platform = event["event"], event.get("platform")
                        if kind == "tick":
                            last_tick = time.monotonic()
                        elif kind == "crawling":
                            yield ChildEvent(platform, "started")
                        else:
                            result.ended.add(platform)
                            error = event.get("error")
                            yield ChildEvent(
                                platform, "ended", Ended(error and f"crawl ended without a report: {error}")
                            )
    result.stderr_tail = b"".join(tail)[-STDERR_TAIL_BYTES:]


def last_line(text: str) -> str:
    """The last non-empty line (a traceback's last line names the exception), shortened."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1][-LAST_LINE_CHARS:] if lines else ""


def _plain(value: Any) -> Any:
    """A setting as JSON carries it: JSON values as they are, others as `-s NAME=value` writes them."""
    try:
        json.dumps(value)
    except TypeError:
        return str(value)
    return value

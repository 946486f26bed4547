"""The parent's side of the crawl child (`scrapers.crawl.child`): start it, follow it, bound it, end it.

`run_child` starts one child for a set of crawls and yields, as they happen, when each started
and ended. It returns how the child ended: every crawl ended, or it was killed at the deadline,
or it was killed when its reactor stopped turning (no tick for `blocked_after_s`, caught then, not at
the deadline), or it died. Whether a crawl it left unfinished is to blame is `ChildExit.isolate`: a
child whose reactor stopped turning, or that died, gives no verdict on any one
crawl, so the runner reruns each unfinished crawl alone; one killed at the deadline while its
reactor turned had every unfinished crawl past its own time.

`run_children` runs several children side by side (the runner's reruns, each crawl alone in its
own): one selector follows them all, each child judged as `run_child` judges one (its own
deadline from its own start, its own ticks, its own stderr), and each child's `ChildExit` is
yielded as soon as it ends, between the crawls' starts and ends.

The child never outlives its parent: its stdin is a pipe this process never writes, so it reads
end-of-file when this process ends however it ends, and exits. An exception here (Ctrl-C, a
Dagster interrupt), or the consumer closing the generator, kills every running child on the way
out.
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
    """How the child ended, and which of its crawls it ended."""

    platforms: tuple[str, ...] = ()  # the crawls it ran, in the plan's order
    ended: set[str] = field(default_factory=set)
    returncode: int | None = None
    timed_out: bool = False
    blocked: bool = False  # its reactor had stopped turning when it was killed
    stderr_tail: bytes = b""

    @property
    def unfinished(self) -> list[str]:
        """The crawls it left without an end, in the plan's order."""
        return [platform for platform in self.platforms if platform not in self.ended]

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
    exits: list[ChildExit] = []
    children = run_children([jobs], out_dir, env, timeout_s, at_once=1)
    try:
        for item in children:
            if isinstance(item, ChildExit):
                exits.append(item)
            else:
                yield item
    finally:
        children.close()
    (exit_,) = exits
    return exit_


def run_children(
    job_lists: Sequence[Sequence[ChildJob]],
    out_dir: Path,
    env: Mapping[str, str],
    timeout_s: float,
    *,
    at_once: int,
) -> Generator[ChildEvent | ChildExit, None, None]:
    """Run each of `job_lists` in a crawl child of its own, at most `at_once` at a time (the rest wait).

    Each child is judged on its own: its deadline (`timeout_s` from its own start), its ticks, its
    stderr. Yields the crawls' starts and ends as they happen, and
    each child's `ChildExit` when it has ended. Closing the generator early kills every child.
    """
    waiting = deque(job_lists)
    running: list[_Watch] = []
    try:
        with selectors.DefaultSelector() as selector:
            while waiting or running:
                while waiting and len(running) < at_once:
                    watch = _Watch(waiting.popleft(), out_dir, env, timeout_s)
                    running.append(watch)
                    for fd in watch.open_fds:
                        selector.register(fd, selectors.EVENT_READ, watch)
                now = time.monotonic()
                wait_s = min(watch.wait_s(now) for watch in running)
                for key, _ in selector.select(max(wait_s, 0.0) + 0.01):
                    watch = key.data
                    yield from watch.read(key.fd)
                    if key.fd not in watch.open_fds:
                        selector.unregister(key.fd)
                now = time.monotonic()
                for watch in [watch for watch in running if not watch.open_fds or watch.overdue(now)]:
                    for fd in watch.open_fds:
                        selector.unregister(fd)
                    running.remove(watch)
                    yield watch.end()
    finally:
        for watch in running:
            watch.end()


class _Watch:
    """One running child as the parent follows it: its pipes, deadline, ticks and stderr's end.

    Its `exit` says how it ended once `end` has run; `overdue` kills it at its deadline, or once
    it has ticked and then missed `blocked_after_s` of ticks.
    """

    def __init__(
        self, jobs: Sequence[ChildJob], out_dir: Path, env: Mapping[str, str], timeout_s: float
    ) -> None:
        plan = json.dumps({"jobs": [job.plan() for job in jobs]}, ensure_ascii=False)
        events_read, events_write = os.pipe()
        try:
            self.child = subprocess.Popen(
                [sys.executable, "-m", "scrapers.crawl.child", plan, str(events_write)],
                stdin=subprocess.PIPE,  # the lifeline: never written, closed when this process ends
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                pass_fds=(events_write,),
                env=dict(env),
                cwd=out_dir,
            )
        except BaseException:
            os.close(events_read)
            raise
        finally:
            os.close(events_write)
        assert self.child.stderr is not None and self.child.stdin is not None
        self.events_fd = events_read
        self.stderr_fd = self.child.stderr.fileno()
        self.open_fds = {self.events_fd, self.stderr_fd}  # those not yet at end-of-file
        self.timeout_s = timeout_s
        self.quiet_limit_s = blocked_after_s(timeout_s)
        self.start = time.monotonic()
        self.last_tick: float | None = None
        self.pending = b""
        self.tail: deque[bytes] = deque()
        self.tail_bytes = 0
        self.exit = ChildExit(platforms=tuple(job.platform for job in jobs))
        self.reaped = False

    def _quiet_s(self, now: float) -> float:
        return now - (self.last_tick if self.last_tick is not None else self.start)

    def wait_s(self, now: float) -> float:
        """Seconds until this child is due to be judged, with no news from it."""
        remaining = self.start + self.timeout_s - now
        if self.last_tick is None:
            return remaining
        return min(remaining, self.quiet_limit_s - self._quiet_s(now))

    def overdue(self, now: float) -> bool:
        """Kill the child if its deadline passed, or its reactor stopped ticking; whether it did."""
        quiet_s = self._quiet_s(now)
        if now >= self.start + self.timeout_s:
            self.exit.timed_out = True
            self.exit.blocked = quiet_s > self.quiet_limit_s
        elif self.last_tick is not None and quiet_s > self.quiet_limit_s:
            self.exit.blocked = True  # caught at the tick it missed, not at the deadline
        else:
            return False
        self.child.kill()
        return True

    def read(self, fd: int) -> Iterator[ChildEvent]:
        """Read what `fd` holds: stderr into the tail kept, events as crawls' starts and ends."""
        data = os.read(fd, READ_BYTES)
        if not data:
            self.open_fds.discard(fd)
        elif fd == self.stderr_fd:
            self.tail.append(data)
            self.tail_bytes += len(data)
            while self.tail_bytes - len(self.tail[0]) >= STDERR_TAIL_BYTES:
                self.tail_bytes -= len(self.tail.popleft())
        else:
            *lines, self.pending = (self.pending + data).split(b"\n")
            for line in lines:
                event = json.loads(line)
                kind, platform = event["event"], event.get("platform")
                if kind == "tick":
                    self.last_tick = time.monotonic()
                elif kind == "crawling":
                    yield ChildEvent(platform, "started")
                else:
                    self.exit.ended.add(platform)
                    error = event.get("error")
                    yield ChildEvent(
                        platform, "ended", Ended(error and f"crawl ended without a report: {error}")
                    )

    def end(self) -> ChildExit:
        """Kill the child if it still runs, reap it, close its pipes; how it ended."""
        if not self.reaped:
            self.reaped = True
            os.close(self.events_fd)
            if self.child.poll() is None:
                self.child.kill()
            self.child.wait()
            assert self.child.stdin is not None and self.child.stderr is not None
            self.child.stdin.close()
            self.child.stderr.close()
            self.exit.returncode = self.child.returncode
            self.exit.stderr_tail = b"".join(self.tail)[-STDERR_TAIL_BYTES:]
        return self.exit


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

"""The crawl child: every crawl of a run in one Scrapy process, each with its own settings, log and report.

`scrapers.crawl.runner` starts it as `python -m scrapers.crawl.child PLAN EVENTS_FD`:

- PLAN, JSON: `{"jobs": [{"platform": slug, "settings": {name: value}, "log_file": path}]}`. A job's
  settings are what `scrapy crawl <slug> -s NAME=value ...` would get (feeds, the report file,
  the snapshot replayed, an origin override), at the command line's priority.
- EVENTS_FD, a pipe to the parent, one JSON object a line:
  `{"platform": p, "event": "crawling"}` when its spider opened, `{"platform": p, "event": "closed"}`
  when its crawl ended (its report and feeds are complete), `{"platform": p, "event": "error",
  "error": "..."}` when its crawl raised before it could close, and `{"event": "tick"}` every
  TICK_S while the reactor turns: the parent tells a blocked process from a slow crawl by them.
- stdin is the lifeline: the parent never writes to it, so end-of-file means the parent is gone
  (killed, even with SIGKILL) and this process ends at once instead of crawling for no one.

The crawlers share one reactor: Scrapy's `AsyncCrawlerProcess` runs them concurrently, so a run
pays for one interpreter and one Scrapy start-up, and network waits overlap. One crawl's
exception stays its own (Scrapy catches a callback's, this module a crawl's that escapes); one
that blocks or kills the process is the parent's to isolate (it reruns the unfinished crawls
each alone). SIGTERM and SIGINT stop every crawl gracefully (Scrapy's shutdown handlers): each
still writes its report and closes its feeds.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import json
import logging
import os
import sys
import threading
from collections.abc import Mapping
from typing import IO, Any

from scrapy import Spider, signals
from scrapy.crawler import AsyncCrawlerProcess, Crawler
from scrapy.utils.project import get_project_settings

from scrapers.registry import spider_class

TICK_S = 0.5
LIFELINE_LOST_EXIT = 70  # EX_SOFTWARE: nobody is left to read what the crawl would write

# The platform whose crawl is running in this task: log records that name no spider or crawler
# (settings dumps, a start-up error) go to that platform's log.
_current_platform: contextvars.ContextVar[str | None] = contextvars.ContextVar("platform", default=None)


class Events:
    """The event pipe to the parent; written from the reactor's thread only."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream

    def send(self, event: str, platform: str | None = None, **fields: Any) -> None:
        message = {"event": event, **({"platform": platform} if platform else {}), **fields}
        try:
            self.stream.write(json.dumps(message, ensure_ascii=False) + "\n")
            self.stream.flush()
        except BrokenPipeError:  # the parent is gone: the lifeline ends this process
            pass


class PlatformFilter(logging.Filter):
    """Passes one platform's records: those naming its spider or crawler, or logged in its crawl's task."""

    def __init__(self, platform: str) -> None:
        super().__init__()
        self.platform = platform

    def filter(self, record: logging.LogRecord) -> bool:
        return _record_platform(record) == self.platform


def _record_platform(record: logging.LogRecord) -> str | None:
    spider = getattr(record, "spider", None)
    if isinstance(spider, Spider):
        return spider.name
    crawler = getattr(record, "crawler", None)
    if isinstance(crawler, Crawler):
        return crawler.spidercls.name
    return _current_platform.get()


def _log_handler(path: str, platform: str, settings: Mapping[str, Any]) -> logging.Handler:
    handler = logging.FileHandler(path, mode="w", encoding=settings.get("LOG_ENCODING") or "utf-8")
    handler.setFormatter(logging.Formatter(settings["LOG_FORMAT"], settings["LOG_DATEFORMAT"]))
    handler.setLevel(settings.get("LOG_LEVEL") or "INFO")
    handler.addFilter(PlatformFilter(platform))
    return handler


def _hold_lifeline() -> None:
    """End this process when the parent's end of stdin closes (read returns end-of-file)."""

    def watch() -> None:
        # os.read, not sys.stdin: a buffered reader's lock would stall the interpreter's shutdown
        while os.read(sys.stdin.fileno(), 4096):
            pass
        os._exit(LIFELINE_LOST_EXIT)

    threading.Thread(target=watch, name="lifeline", daemon=True).start()


def run(plan: Mapping[str, Any], events: Events) -> None:
    """Crawl every job of `plan` in one reactor; returns when all have ended."""
    project = get_project_settings()
    project.set("LOG_INSTALL_ROOT_HANDLER", False, priority="cmdline")  # each job logs to its own file
    process = AsyncCrawlerProcess(project)
    logging.root.setLevel(logging.DEBUG)
    # Records of no platform (Scrapy's start-up banner, an unhandled Twisted error) go to stderr,
    # which the parent keeps the end of for a crash's message.
    stray = logging.StreamHandler(sys.stderr)
    stray.setLevel(logging.WARNING)
    stray.addFilter(lambda record: _record_platform(record) is None)
    logging.root.addHandler(stray)

    for job in plan["jobs"]:
        platform = job["platform"]
        settings = project.copy()
        settings.setdict(job["settings"], priority="cmdline")
        logging.root.addHandler(_log_handler(job["log_file"], platform, settings))
        crawler = Crawler(spider_class(platform), settings)

        def opened(spider: Spider) -> None:
            events.send("crawling", spider.name)

        crawler.signals.connect(opened, signal=signals.spider_opened, weak=False)
        token = _current_platform.set(platform)
        try:
            task = process.crawl(crawler)  # an asyncio task, created in this context
        finally:
            _current_platform.reset(token)
        task.add_done_callback(functools.partial(_ended, crawler=crawler, events=events))

    def tick() -> None:
        events.send("tick")
        loop.call_later(TICK_S, tick)

    loop = asyncio.get_event_loop()
    loop.call_soon(tick)
    process.start()


def _ended(task: asyncio.Task[None], *, crawler: Crawler, events: Events) -> None:
    platform = crawler.spidercls.name
    error = None if task.cancelled() else task.exception()
    if error is None:
        events.send("closed", platform)
    else:
        logging.getLogger(__name__).error("crawl raised", exc_info=error, extra={"crawler": crawler})
        events.send("error", platform, error=f"{type(error).__name__}: {error}")


def main(argv: list[str]) -> None:
    plan = json.loads(argv[1])
    _hold_lifeline()
    with os.fdopen(int(argv[2]), "w", encoding="utf-8") as stream:
        run(plan, Events(stream))
    # Every feed, report and log is closed: skip the interpreter's slow teardown of Scrapy and Twisted.
    logging.shutdown()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv)

"""Scrapy components that break one crawl of a shared crawl process, for the isolation tests.

The crawl child imports them by name from a job's ITEM_PIPELINES setting (the tests put this
folder on its PYTHONPATH), so each fault hits the one platform whose job names it.
"""

from __future__ import annotations

import os
import time
from typing import Any

from scrapy.crawler import Crawler

CRASH_EXIT = 3


class RaiseAtOpen:
    """Fails the crawl as it starts: an exception that escapes the spider's own handling."""

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RaiseAtOpen:
        raise RuntimeError(f"injected: {crawler.spidercls.name} cannot start")


class BlockOnItem:
    """Blocks the process's one reactor at the first item, as a runaway parser would."""

    def process_item(self, item: Any) -> Any:
        time.sleep(3600)
        return item


class ExitOnItem:
    """Kills the whole crawl process at the first item, as a crash in native parsing code would."""

    def process_item(self, item: Any) -> Any:
        os._exit(CRASH_EXIT)

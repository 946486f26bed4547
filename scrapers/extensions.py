"""The crawl report: when a spider closes, its finish reason and stats go to a JSON file for the runner."""

from __future__ import annotations

import json
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

from scrapy import Spider, signals
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured

from scrapers.redaction import install_log_redaction

REPORT_FILE_SETTING = "GPUPLAN_REPORT_FILE"


def _jsonable(value: Any) -> Any:
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, timedelta):
        return value.total_seconds()
    return str(value)


class CrawlReport:
    """Writes {"finish_reason": ..., "stats": {...}} to the `GPUPLAN_REPORT_FILE` setting's path.

    This is how the parent process learns why a child crawl ended: Scrapy's
    exit code says nothing about a failed request or an error envelope.
    """

    def __init__(self, crawler: Crawler, path: Path) -> None:
        self.crawler = crawler
        self.path = path

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> CrawlReport:
        path = crawler.settings.get(REPORT_FILE_SETTING)
        if not path:
            raise NotConfigured(f"{REPORT_FILE_SETTING} not set")
        # Scrapy has installed its log handler by now; a platform echoing a token must not reach it.
        token = getattr(crawler.spidercls, "token", None)
        install_log_redaction([token.value() or ""] if token is not None else [])
        report = cls(crawler, Path(path))
        crawler.signals.connect(report.spider_closed, signal=signals.spider_closed)
        return report

    def spider_closed(self, spider: Spider, reason: str) -> None:
        report = {"finish_reason": reason, "stats": self.crawler.stats.get_stats()}
        self.path.write_text(json.dumps(report, default=_jsonable, ensure_ascii=False, indent=1), "utf-8")

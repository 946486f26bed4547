"""Retry-After, the backoff schedule (the retries themselves run in test_faults.py), callback errors."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from scrapy.http import Request, Response
from scrapy.settings import Settings
from scrapy.utils.test import get_crawler

from scrapers.middlewares import BackoffRetryMiddleware, CrawlErrorMiddleware, retry_after_seconds
from scrapers.parsing import LayoutChanged
from scrapers.platform import STAT_ERRORS
from scrapers.spiders.vastai import VastaiSpider

NOW = datetime(2026, 11, 30, 6, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("header", "seconds"),
    [
        ("7", 7.0),
        ("Mon, 30 Nov 2026 06:00:30 GMT", 30.0),
        ("Mon, 30 Nov 2026 05:59:00 GMT", 0.0),  # a date in the past: retry now
        ("soon", None),
        (None, None),
    ],
)
def test_retry_after_seconds(header: str | None, seconds: float | None) -> None:
    headers = {"Retry-After": header} if header is not None else {}
    response = Response("https://example.org", status=429, headers=headers)
    assert retry_after_seconds(response, now=NOW) == seconds


def test_backoff_doubles_up_to_the_cap() -> None:
    settings = Settings()
    settings.setmodule("scrapers.settings")
    middleware = BackoffRetryMiddleware(settings)
    waits = [middleware._backoff_s(Request("https://example.org", meta={"retry_times": n})) for n in range(6)]
    assert waits == [2.0, 4.0, 8.0, 16.0, 30.0, 30.0]


def _middleware_and_spider() -> tuple[CrawlErrorMiddleware, VastaiSpider]:
    crawler = get_crawler(VastaiSpider)
    spider = VastaiSpider.from_crawler(crawler)
    crawler.spider = spider
    return CrawlErrorMiddleware(crawler), spider


def _response() -> Response:
    request = Request(
        "http://127.0.0.1:9/api/v0/bundles/", meta={"source_url": "https://console.vast.ai/api/v0/bundles/"}
    )
    return Response(request.url, request=request)


def test_a_crawl_error_becomes_a_recorded_failure_and_is_handled() -> None:
    middleware, spider = _middleware_and_spider()
    handled = middleware.process_spider_exception(_response(), LayoutChanged("no 'offers' at the top level"))
    assert handled == []
    assert spider.crawler.stats.get_value(STAT_ERRORS) == [
        "no 'offers' at the top level (from https://console.vast.ai/api/v0/bundles/)"
    ]


def test_a_spider_bug_is_recorded_and_left_to_scrapy_to_log() -> None:
    middleware, spider = _middleware_and_spider()
    assert middleware.process_spider_exception(_response(), KeyError("gpu_name")) is None
    assert spider.crawler.stats.get_value(STAT_ERRORS) == [
        "spider bug: KeyError: 'gpu_name' (from https://console.vast.ai/api/v0/bundles/)"
    ]

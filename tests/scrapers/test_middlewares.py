"""Retry-After, the backoff schedule (the retries themselves run in test_faults.py), callback errors."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from crawl_harness import snapshot_of
from crawl_helpers import crawl_env, loopback_settings
from loopback import serving
from scrapy.http import Request, Response
from scrapy.settings import Settings
from scrapy.utils.test import get_crawler

from scrapers.crawl.runner import run_crawl
from scrapers.middlewares import (
    CONTACT_SETTING,
    BackoffRetryMiddleware,
    ContactUserAgentMiddleware,
    CrawlErrorMiddleware,
    retry_after_seconds,
    user_agent,
)
from scrapers.parsing import LayoutChanged
from scrapers.platform import STAT_ERRORS
from scrapers.registry import fixture_dir, platforms, spider_class
from scrapers.replay import Snapshot
from scrapers.spiders.azure import AzureSpider
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
    limited = [
        middleware._backoff_s(Request("https://example.org", meta={"retry_times": n}), rate_limited=True)
        for n in range(3)
    ]
    assert limited == [15.0, 30.0, 30.0]  # a rate limit is asked again later: about a minute in all


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


@pytest.mark.parametrize(
    ("contact", "agent"),
    [
        ("", "gpuplan/0.1 (GPU rental price tracker)"),
        ("ops@example.com", "gpuplan/0.1 (GPU rental price tracker; +ops@example.com)"),
        (
            " https://example.com/gpuplan ",
            "gpuplan/0.1 (GPU rental price tracker; +https://example.com/gpuplan)",
        ),
    ],
)
def test_the_user_agent_carries_the_contact_when_one_is_set(contact: str, agent: str) -> None:
    project = Settings()
    project.setmodule("scrapers.settings")
    crawler = get_crawler(VastaiSpider, {"USER_AGENT": project["USER_AGENT"], CONTACT_SETTING: contact})
    assert ContactUserAgentMiddleware.from_crawler(crawler).user_agent == agent
    assert user_agent("x/1 (y)", contact.strip() or None) == (
        f"x/1 (y; +{contact.strip()})" if contact else "x/1 (y)"
    )


@pytest.mark.slow
def test_a_crawl_sends_the_contact_it_is_given(tmp_path) -> None:
    with serving(snapshot_of("datacrunch")) as server:
        summary = run_crawl(
            "datacrunch",
            tmp_path,
            env=crawl_env(),
            settings={**loopback_settings(server.url), CONTACT_SETTING: "ops@example.com"},
        )
    assert summary.status == "ok"
    assert {hit.user_agent for hit in server.hits} == {
        "gpuplan/0.1 (GPU rental price tracker; +ops@example.com)"
    }


@pytest.mark.parametrize("platform", [name for name in platforms() if name != "quotes"])
def test_every_recorded_request_is_on_the_platforms_site(platform: str) -> None:
    """The site rule every request passes (`PlatformSpider.refusal`) lets each spider ask what its
    fixture recorded: its `sites` are declared, and none too narrow."""
    spider = spider_class(platform)()
    assert spider.sites, f"{platform} declares no sites"
    for exchange in Snapshot.load(fixture_dir(platform)).exchanges:
        assert spider.refusal(exchange.url) is None, exchange.url


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("https://prices.azure.com/api", None),
        ("https://azure.com/api", None),
        ("http://prices.azure.com:8080/api", None),
        ("https://notazure.com/api", "is off azure's site (azure.com)"),
        ("https://azure.com.collector.example/", "is off azure's site (azure.com)"),
        ("https://prices.azure.com@collector.example/", "names no plain host"),
        ("https://user:pw@prices.azure.com/", "names no plain host"),
        ("https://prices.azure.com\\@collector.example/", "names no plain host"),
        ("file:///etc/hostname", "is not http or https"),
        ("data:text/plain,hello", "is not http or https"),
        ("ftp://prices.azure.com/", "is not http or https"),
        ("//prices.azure.com/", "is not http or https"),
    ],
)
def test_the_site_rule(url: str, problem: str | None) -> None:
    assert AzureSpider().refusal(url) == problem

"""Middlewares: polite retries (backoff, Retry-After), redirects kept on the platform's site; unusable
responses become recorded failures."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any, Self
from urllib.parse import urljoin, urlsplit

from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.downloadermiddlewares.retry import RetryMiddleware
from scrapy.downloadermiddlewares.useragent import UserAgentMiddleware
from scrapy.http import Request, Response
from scrapy.utils.response import response_status_message

from scrapers import parsing
from scrapers.parsing import shown
from scrapers.platform import ORIGIN_OVERRIDE_SETTING, RATE_LIMITED_STATUS, PlatformSpider, Refused

logger = logging.getLogger(__name__)

# The Scrapy setting that carries the crawler's contact (scrapers/settings.py, GPUPLAN_CONTACT).
CONTACT_SETTING = "GPUPLAN_CONTACT"
STAT_RATE_LIMITED = "gpuplan/rate_limited"  # 429 answers retried later in the run


def user_agent(base: str, contact: str | None) -> str:
    """`base` ("name/version (what)") with the contact inside its comment: "(what; +contact)"."""
    contact = (contact or "").strip()
    if not contact:
        return base
    if base.endswith(")"):
        return f"{base[:-1]}; +{contact})"
    return f"{base} (+{contact})"


class ContactUserAgentMiddleware(UserAgentMiddleware):
    """Scrapy's User-Agent middleware, with the operator's contact from `GPUPLAN_CONTACT`."""

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ContactUserAgentMiddleware:
        middleware = cls(user_agent(crawler.settings["USER_AGENT"], crawler.settings.get(CONTACT_SETTING)))
        crawler.signals.connect(middleware.spider_opened, signal=signals.spider_opened)
        return middleware


class BackoffRetryMiddleware(RetryMiddleware):
    """Scrapy's RetryMiddleware, but waiting before each retry.

    Scrapy retries at once. We wait `RETRY_BACKOFF_BASE_S * 2**n` seconds (capped
    at `RETRY_BACKOFF_MAX_S`), or exactly what a 429/503 `Retry-After` header
    asks. A server asking for more than `RETRY_AFTER_MAX_S` is not retried: the
    crawl fails now with that reason rather than hanging for an hour.

    A 429 without `Retry-After` is a rate limit whose interval the platform does not tell (Vast's,
    per endpoint and caller: vast-ai/docs `api-reference/rate-limits-and-errors.mdx`): it is said
    as "rate limited" and retried later in the run, `RETRY_RATE_LIMITED_BASE_S * 2**n` seconds on
    (same cap), while the crawl's other requests go on; when the retries are spent the failure
    says "rate limited" too (`platform.describe_failure`).
    """

    def __init__(self, settings: Any) -> None:
        super().__init__(settings)
        self.backoff_base_s = settings.getfloat("RETRY_BACKOFF_BASE_S")
        self.rate_limited_base_s = settings.getfloat("RETRY_RATE_LIMITED_BASE_S")
        self.backoff_max_s = settings.getfloat("RETRY_BACKOFF_MAX_S")
        self.retry_after_max_s = settings.getfloat("RETRY_AFTER_MAX_S")

    # Async: Scrapy 2.13+ awaits coroutine middleware methods; its stubs still declare them sync.
    async def process_response(  # type: ignore[override]
        self, request: Request, response: Response
    ) -> Request | Response:
        if request.meta.get("dont_retry", False) or response.status not in self.retry_http_codes:
            return response
        retry_after_s = retry_after_seconds(response)
        if retry_after_s is not None and retry_after_s > self.retry_after_max_s:
            self._record_refusal(request, response, retry_after_s)
            return response
        rate_limited = response.status == RATE_LIMITED_STATUS
        retry = self._retry(request, response_status_message(response.status))
        if retry is None:
            return response
        wait_s = retry_after_s if retry_after_s is not None else self._backoff_s(request, rate_limited)
        if rate_limited:
            self.crawler.stats.inc_value(STAT_RATE_LIMITED)
            url = request.meta.get("source_url", request.url)
            logger.warning(f"rate limited: HTTP 429 from {url}; asking again in {wait_s:g} s")
        await asyncio.sleep(wait_s)
        return retry

    async def process_exception(  # type: ignore[override]
        self, request: Request, exception: Exception
    ) -> Request | Response | None:
        if request.meta.get("dont_retry", False) or not isinstance(exception, self.exceptions_to_retry):
            return None
        retry = self._retry(request, exception)
        if retry is not None:
            await asyncio.sleep(self._backoff_s(request))
        return retry

    def _backoff_s(self, request: Request, rate_limited: bool = False) -> float:
        base_s = self.rate_limited_base_s if rate_limited else self.backoff_base_s
        return min(base_s * 2 ** request.meta.get("retry_times", 0), self.backoff_max_s)

    def _record_refusal(self, request: Request, response: Response, retry_after_s: float) -> None:
        spider = self.crawler.spider
        url = request.meta.get("source_url", request.url)
        message = (
            f"rate limited: HTTP {response.status} from {url} asks to retry after "
            f"{retry_after_s:g} s, more than the {self.retry_after_max_s:g} s we wait"
        )
        if isinstance(spider, PlatformSpider):
            spider.record_failure(message)


def retry_after_seconds(response: Response, now: datetime | None = None) -> float | None:
    """The `Retry-After` header in seconds (delta-seconds or an HTTP date); None if absent or unreadable."""
    value = response.headers.get(b"Retry-After")
    if not value:
        return None
    text = value.decode("latin-1").strip()
    if text.isdigit():
        return float(text)
    moment = parsing.http_date(text)
    if moment is None:
        return None
    return max((moment - (now or datetime.now(UTC))).total_seconds(), 0.0)


class CrawlErrorMiddleware:
    """Spider middleware: a callback raising `CrawlError` (error envelope, HTML instead of JSON,
    layout change) becomes a recorded failure with its message, not a traceback and not
    "zero offers". Any other exception is recorded too, then left to Scrapy to log."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> CrawlErrorMiddleware:
        return cls(crawler)

    def process_spider_exception(self, response: Response, exception: Exception) -> Iterable[Any] | None:
        spider = self.crawler.spider
        if not isinstance(spider, PlatformSpider):
            return None
        url = PlatformSpider.source_url(response)
        if isinstance(exception, parsing.CrawlError):
            spider.record_failure(f"{exception} (from {url})")
            return []
        spider.record_failure(f"spider bug: {type(exception).__name__}: {exception} (from {url})")
        return None


class SigningMiddleware:
    """Downloader middleware: the spider signs each request as it leaves (`PlatformSpider.sign`),
    at every attempt. A signature that carries the time and a one-use nonce (Tencent's TC3 is
    refused 5 minutes after its timestamp, Alibaba's ACS3 refuses a nonce seen before) must be
    made when the request is sent, not when it is queued behind a region's thousand others, and
    again for a retry."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> SigningMiddleware:
        return cls(crawler)

    def process_request(self, request: Request) -> None:
        spider = self.crawler.spider
        if isinstance(spider, PlatformSpider):
            spider.sign(request)


REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})  # what Scrapy's RedirectMiddleware follows


class OffPlatformRedirect(Refused):
    """A redirect to a host outside the platform's site: not followed."""


class _SiteMiddleware:
    """A middleware that judges where requests go: the crawler, and the overriding origin if any."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        origin = crawler.settings.get(ORIGIN_OVERRIDE_SETTING)
        self.origin = _origin(origin) if origin else None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)


class SiteRuleMiddleware(_SiteMiddleware):
    """Downloader middleware, before anything signs or sends a request: every request a spider makes
    (a first page, a next-page link from an answer, a host built from an answer's id, a retry, a
    followed redirect) must name a place on the platform's site (`PlatformSpider.refusal`), so a
    crawl never asks another host, reads a local file or a data: URI, and never sends a platform's
    credentials elsewhere. A refused request fails alone, in one line naming it; the crawl goes on.
    Under `GPUPLAN_ORIGIN_OVERRIDE` the platform's URL (`source_url`) is judged, and the request
    must go to the overriding origin."""

    def process_request(self, request: Request) -> None:
        spider = self.crawler.spider
        if not isinstance(spider, PlatformSpider):
            return
        source = request.meta.get("source_url", request.url)
        problem = spider.refusal(source)
        routed = self.origin is not None and _origin(request.url) == self.origin
        if problem is None and request.url != source and not routed:
            problem = spider.refusal(request.url)
        if problem is not None:
            raise Refused(f"refused: {shown(source)} {problem}; not asked")


class PlatformHostsMiddleware(_SiteMiddleware):
    """Downloader middleware, before Scrapy's RedirectMiddleware (600) sees the answer: a redirect is
    followed only to a place the site rule allows (`PlatformSpider.refusal`), so a platform's answer
    never comes from, and its request (credentials or not) never goes to, another site. One
    elsewhere fails the request in one line naming the host. Under `GPUPLAN_ORIGIN_OVERRIDE` a
    redirect to the overriding origin or to the platform's own site goes to the overriding origin,
    as every request does (Scrapy itself drops Authorization and Cookie on any change of host)."""

    def process_response(self, request: Request, response: Response) -> Response:
        location = response.headers.get(b"Location")
        spider = self.crawler.spider
        if (
            response.status not in REDIRECT_STATUSES
            or not location
            or request.meta.get("dont_redirect")
            or not isinstance(spider, PlatformSpider)
        ):
            return response
        target = urljoin(request.url, location.decode("latin-1").strip())
        source = request.meta.get("source_url", request.url)
        if self.origin is not None and _origin(target) == self.origin:
            return response
        if spider.refusal(target) is not None:
            raise OffPlatformRedirect(
                f"HTTP {response.status} from {source} redirects off {spider.name}'s site "
                f"({', '.join(spider.sites)}), to {shown(urlsplit(target).hostname or target)}: not followed"
            )
        routed = spider.routed(target)
        if routed == target:
            return response
        headers = response.headers.copy()
        headers[b"Location"] = routed.encode("latin-1")
        return response.replace(headers=headers)


def _origin(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return parts.scheme, parts.netloc

"""What a crawl read: the platform addresses whose answers were read whole.

A partial crawl stands only for what it read (warehouse/definitions/15_crawl_carries.sql): the
warehouse carries the platform's last good offers from every other address, stale. An address
counts as read when its answer's callback ran to its end with no failure recorded and no note that
the result is incomplete while it ran (an error envelope, a cut answer, a spider bug, a result
limit: not read). The addresses are the platform's own (`PlatformSpider.source_url`), as offers
cite them, so the warehouse matches an offer to the answer it came from by its `source_url`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Iterator
from typing import Any

from scrapy.crawler import Crawler
from scrapy.http import Response

from scrapers.platform import STAT_FAILURES, STAT_PARTIAL, PlatformSpider

# Crawl stats key: {source_url: True} of every answer read whole (a dict: marking one is O(1)).
STAT_READ_SOURCES = "gpuplan/read_sources"
# Response meta: the crawl's failures and partial note as its callback began.
_PROBLEMS_BEFORE = "gpuplan_problems_before"


class ReadSourcesMiddleware:
    """Spider middleware, next to the spider: marks an answer read once its callback's output ends
    with nothing recorded against the crawl since the callback began. A callback that raises never
    gets there (the exception passes on to `CrawlErrorMiddleware`); an errback's output (a refused
    answer) is never marked."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ReadSourcesMiddleware:
        return cls(crawler)

    def _problems(self) -> tuple[Any, Any]:
        stats = self.crawler.stats
        return stats.get_value(STAT_FAILURES, 0), stats.get_value(STAT_PARTIAL)

    def process_spider_input(self, response: Response) -> None:
        # Only an answer handed to its callback gets here: HttpErrorMiddleware has already turned a
        # refused one (HTTP 4xx/5xx) into its errback, whose output passes process_spider_output too.
        response.meta[_PROBLEMS_BEFORE] = self._problems()

    def _mark(self, response: Response) -> None:
        # Answers are read concurrently: a failure of another answer meanwhile unmarks this one too,
        # which only carries more of the last good crawl, never less.
        before = response.meta.pop(_PROBLEMS_BEFORE, None)
        if before is None or self._problems() != before:
            return
        stats = self.crawler.stats
        read = stats.get_value(STAT_READ_SOURCES)
        if read is None:
            read = {}
            stats.set_value(STAT_READ_SOURCES, read)
        read[PlatformSpider.source_url(response)] = True

    def process_spider_output(self, response: Response, result: Iterable[Any]) -> Iterator[Any]:
        yield from result
        self._mark(response)

    async def process_spider_output_async(
        self, response: Response, result: AsyncIterator[Any]
    ) -> AsyncIterator[Any]:
        async for item in result:
            yield item
        self._mark(response)


def read_sources(stats: dict[str, Any]) -> list[str]:
    """The addresses a crawl read whole, sorted, from its stats."""
    return sorted(stats.get(STAT_READ_SOURCES) or {})

"""Drive a spider in-process over a snapshot: its real callbacks, middleware error handling and
item pipeline, without Scrapy's engine or network. Parse-level tests use this (milliseconds);
`run_crawl` tests cover the real download stack in a child process.

A spider on the kit's declarative path (`PlatformSpider.parse_rows`) is traced: which answers its
rows came from, and which offers it built from each row (`Outcome.rows`), so the contract test
can change one row of a fixture and follow what becomes of it.

The outcome's `status`/`error` come from `scrapers.crawl.files.summarize`, the function the
runner uses, so a test asserts exactly what the crawl summary would say.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import json
import tempfile
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import warehouse_template
from scrapy.http import Request
from scrapy.settings import Settings as ScrapySettings
from scrapy.spidermiddlewares.httperror import HttpError
from scrapy.utils.test import get_crawler
from twisted.python.failure import Failure

from scrapers.crawl.files import summarize
from scrapers.crawl.summary import CrawlSummary
from scrapers.items import OfferItem
from scrapers.middlewares import CrawlErrorMiddleware
from scrapers.pipelines import OfferChecks
from scrapers.platform import STAT_ERRORS, PlatformSpider
from scrapers.registry import fixture_dir, spider_class
from scrapers.rejects import RejectedOffer
from scrapers.replay import Exchange, Snapshot, SnapshotStorage
from warehouse.loading import load_crawl


@dataclass
class RowTrace:
    """One row the spider read on the declarative path, and the offers it built from it."""

    exchange: int  # the snapshot exchange (index) whose answer held the row
    row: int  # its place among that answer's rows (`PlatformSpider.rows_of`)
    offers: list[OfferItem] = field(default_factory=list)  # as built, before the item checks


@dataclass
class Outcome:
    status: str
    error: str | None
    offers: list[OfferItem]
    rejected: list[RejectedOffer]
    errors: list[str]
    stats: dict[str, Any]
    requests: list[Request]
    rows: list[RowTrace]  # every row passed to offers_of, in order
    row_answers: list[int]  # the exchanges answered to the spider's parse_rows, in order
    started: int = 1  # the spider's first requests: more than one is a fan (regions, zones, lists)

    def offers_from(self, exchange: int, row: int) -> list[OfferItem]:
        """The offers built from that row that passed the item checks."""
        passed = {id(offer) for offer in self.offers}
        built = [
            o for trace in self.rows if (trace.exchange, trace.row) == (exchange, row) for o in trace.offers
        ]
        return [offer for offer in built if id(offer) in passed]


@functools.cache
def _bundled(platform: str) -> Snapshot:
    return Snapshot.load(fixture_dir(platform))


def snapshot_of(platform: str) -> Snapshot:
    """The platform's bundled snapshot: read once per process (the suite never writes the checkout),
    a copy each time, so that a test changing its own leaves the others' as recorded."""
    bundled = _bundled(platform)
    return Snapshot(bundled.folder, dict(bundled.meta), list(bundled.exchanges))


@functools.cache
def _download_timeout() -> float:
    """The project's DOWNLOAD_TIMEOUT, which drive gives every crawler."""
    project = ScrapySettings()
    project.setmodule("scrapers.settings")
    return project.getfloat("DOWNLOAD_TIMEOUT")


def with_exchange(snapshot: Snapshot, index: int, **changes: Any) -> Snapshot:
    """A copy of `snapshot` with exchange `index` changed (`body` may be bytes, str or a JSON value)."""
    body = changes.pop("body", None)
    if body is not None and not isinstance(body, bytes):
        body = (body if isinstance(body, str) else json.dumps(body)).encode("utf-8")
        changes["body"] = body
    elif body is not None:
        changes["body"] = body
    exchanges = list(snapshot.exchanges)
    exchanges[index] = dataclasses.replace(exchanges[index], **changes)
    return Snapshot(snapshot.folder, snapshot.meta, exchanges)


def json_of(exchange: Exchange) -> Any:
    return json.loads(exchange.body)


def drive(platform: str | type[PlatformSpider], snapshot: Snapshot | None = None) -> Outcome:
    """Run `platform`'s spider over `snapshot` (default: its bundled one) in this process; or a
    spider class of the test's own over the snapshot it gives."""
    if isinstance(platform, str):
        snapshot, spidercls = snapshot or snapshot_of(platform), spider_class(platform)
    else:
        assert snapshot is not None, "a spider of the test's own replays the snapshot it gives"
        spidercls = platform
    crawler = get_crawler(spidercls, {"DOWNLOAD_TIMEOUT": _download_timeout()})
    spider = spidercls.from_crawler(crawler)
    crawler.spider = spider
    storage = SnapshotStorage(ScrapySettings({"HTTPCACHE_DIR": str(Path(snapshot.folder))}))
    storage.snapshot = snapshot
    errors_middleware = CrawlErrorMiddleware(crawler)
    pipeline = OfferChecks(crawler)
    tracer = _Tracer(spider)

    async def first() -> list[Request]:
        return [request async for request in spider.start()]

    queue = deque(asyncio.run(first()))
    started = len(queue)
    seen: list[Request] = []
    offers: list[OfferItem] = []
    rejected: list[RejectedOffer] = []

    def take(result: Any) -> None:
        if isinstance(result, Request):
            queue.append(result)
        else:
            kept = pipeline.process_item(result)
            (offers if isinstance(kept, OfferItem) else rejected).append(kept)

    while queue:
        request = queue.popleft()
        seen.append(request)
        response = storage.retrieve_response(spider, request)
        exchange = snapshot.find(request.method, request.meta["source_url"], request.body, request.headers)
        tracer.answering(next((i for i, e in enumerate(snapshot.exchanges) if e is exchange), -1), request)
        if response is None:
            spider.record_failure(
                f"not in the offline snapshot: {request.method} {request.meta['source_url']}"
            )
            continue
        if not 200 <= response.status < 300:
            failure = Failure(HttpError(response, "Ignoring non-200 response"))
            failure.request = request
            # What an errback returns goes on like a callback's (a fallback request, held offers).
            for result in request.errback(failure) or ():
                take(result)
            continue
        try:
            for result in request.callback(response, **request.cb_kwargs) or ():
                take(result)
        except Exception as exc:
            if errors_middleware.process_spider_exception(response, exc) is None:
                raise
    pipeline.close_spider()
    stats = crawler.stats.get_stats()
    status, error, _ = summarize({"finish_reason": "finished", "stats": stats}, len(offers), len(rejected))
    errors = list(stats.get(STAT_ERRORS, []))
    return Outcome(
        status, error, offers, rejected, errors, stats, seen, tracer.rows, tracer.row_answers, started
    )


class _Tracer:
    """Wraps a spider's `rows_of`, `offers_of` and `offer` to note which row each offer was built from."""

    def __init__(self, spider: PlatformSpider) -> None:
        self.rows: list[RowTrace] = []
        self.row_answers: list[int] = []
        self._exchange = -1
        self._found: list[Any] = []
        self._building: RowTrace | None = None
        rows_of, offers_of, offer = spider.rows_of, spider.offers_of, spider.offer

        def traced_rows_of(payload: Any, url: str = "") -> list[Any]:
            self._found = rows_of(payload, url)
            return self._found

        def traced_offers_of(response: Any, row: Any) -> Iterator[Any]:
            position = next(i for i, found in enumerate(self._found) if found is row)
            self._building = RowTrace(self._exchange, position)
            self.rows.append(self._building)
            try:
                yield from offers_of(response, row)
            finally:
                self._building = None

        def traced_offer(*args: Any, **kwargs: Any) -> OfferItem:
            item = offer(*args, **kwargs)
            if self._building is not None:
                self._building.offers.append(item)
            return item

        spider.rows_of = traced_rows_of  # type: ignore[method-assign]
        spider.offers_of = traced_offers_of  # type: ignore[method-assign]
        spider.offer = traced_offer  # type: ignore[method-assign]
        self._parse_rows = PlatformSpider.parse_rows

    def answering(self, exchange: int, request: Request) -> None:
        self._exchange = exchange
        if (
            getattr(request.callback, "__func__", None) is self._parse_rows
            and exchange not in self.row_answers
        ):
            self.row_answers.append(exchange)


# How the warehouse words its plausibility rule (offer_price_problem, migration 041), as the spiders'
# reason code: a crawl passes an implausible price on as read, and the loader rejects it.
WAREHOUSE_REASON_CODES = {"absurd price": "price_absurd"}


def rejections(outcome: Outcome, platform: str) -> list[tuple[str, str]]:
    """(reason code, offer_id) of every quote refused on its way to the warehouse: by the crawl (the
    spider and the item pipeline), then by the warehouse's one rule set when the offers are loaded."""
    refused = [(r.reason, str(r.raw.get("offer_id", ""))) for r in outcome.rejected]
    with tempfile.TemporaryDirectory() as folder:
        feed = Path(folder) / f"{platform}.jsonl"
        feed.write_text("".join(json.dumps(dataclasses.asdict(o)) + "\n" for o in outcome.offers), "utf-8")
        summary = CrawlSummary(platform, "ok", None, None, None, len(outcome.offers), True, feed=feed)
        con = warehouse_template.scratch()
        load_crawl(con, summary.write(Path(folder) / f"{platform}.summary.json"))
        rows = con.execute("SELECT reason, raw ->> 'offer_id' FROM rejected_offers").fetchall()
    for reason, offer_id in rows:
        code = next((c for words, c in WAREHOUSE_REASON_CODES.items() if reason.startswith(words)), reason)
        refused.append((code, str(offer_id)))
    return refused

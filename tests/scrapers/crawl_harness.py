"""Drive a spider in-process over a snapshot: its real callbacks, middleware error handling and
item pipeline, without Scrapy's engine or network. Parse-level tests use this (milliseconds);
`run_crawl` tests cover the real download stack in a child process.

The outcome's `status`/`error` come from `scrapers.crawl.files.summarize`, the function the
runner uses, so a test asserts exactly what the crawl summary would say.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import tempfile
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
from scrapers.platform import STAT_ERRORS
from scrapers.registry import fixture_dir, spider_class
from scrapers.rejects import RejectedOffer
from scrapers.replay import Exchange, Snapshot, SnapshotStorage
from warehouse import connect
from warehouse.loading import load_crawl


@dataclass
class Outcome:
    status: str
    error: str | None
    offers: list[OfferItem]
    rejected: list[RejectedOffer]
    errors: list[str]
    stats: dict[str, Any]
    requests: list[Request]


def snapshot_of(platform: str) -> Snapshot:
    return Snapshot.load(fixture_dir(platform))


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


def drive(platform: str, snapshot: Snapshot | None = None) -> Outcome:
    """Run `platform`'s spider over `snapshot` (default: its bundled one) in this process."""
    snapshot = snapshot or snapshot_of(platform)
    spidercls = spider_class(platform)
    project = ScrapySettings()
    project.setmodule("scrapers.settings")
    crawler = get_crawler(spidercls, {"DOWNLOAD_TIMEOUT": project.getfloat("DOWNLOAD_TIMEOUT")})
    spider = spidercls.from_crawler(crawler)
    crawler.spider = spider
    storage = SnapshotStorage(ScrapySettings({"HTTPCACHE_DIR": str(Path(snapshot.folder))}))
    storage.snapshot = snapshot
    errors_middleware = CrawlErrorMiddleware(crawler)
    pipeline = OfferChecks(crawler)

    async def first() -> list[Request]:
        return [request async for request in spider.start()]

    queue = deque(asyncio.run(first()))
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
    return Outcome(status, error, offers, rejected, list(stats.get(STAT_ERRORS, [])), stats, seen)


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
        con = connect.in_memory()
        load_crawl(con, summary.write(Path(folder) / f"{platform}.summary.json"))
        rows = con.execute("SELECT reason, raw ->> 'offer_id' FROM rejected_offers").fetchall()
    for reason, offer_id in rows:
        code = next((c for words, c in WAREHOUSE_REASON_CODES.items() if reason.startswith(words)), reason)
        refused.append((code, str(offer_id)))
    return refused

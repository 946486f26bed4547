"""Quotes from a file: the broker and platform offers that arrive by chat or email.

Source: the CSV or YAML file named by `GPUPLAN_QUOTES_FILE` (the runner makes a relative path
absolute against the caller's folder), read through a file:// request like any platform's
answer; unset, the bundled example `scrapers/data/quotes.example.yaml` (the article's 聚力算力平台 quotes).
Offline replay reads the bundled example whatever `GPUPLAN_QUOTES_FILE` says: it is this
source's snapshot (`scrapers/fixtures/quotes/snapshot.json` points at it).

The file format: `scrapers.quotes.file`; its checks: `scrapers.quotes.checks`. `pricing_type` follows
`billing_period` (hour on_demand, day daily_plan, week weekly_plan, month monthly_plan). A
monthly quote stays monthly, with its minimum term: the warehouse derives per-GPU-hour
figures (730 h a month) for comparison and marks it not rentable by the hour.

A quote with a problem is rejected (`quote_invalid`) with its line number ("quotes.yaml
line 12: price must be > 0, got 0"); each problem is recorded as a crawl error, so the run
is partial, and the other quotes still load. Two quotes in force with the same terms
(seller, GPU, unit size, region, term): the second is rejected the same way. A quote outside its
validity on the crawl's date (the UTC date of `observed_at`) is rejected as `quote_expired`
or `quote_not_yet_valid`: not an error, the file just needs a fresh quote. A file that
cannot be read as a whole fails the crawl, and so does a path that is not a regular file (a
FIFO would block the crawl, /dev/zero would never end) or a file over the size limit of every
user's file (both `config.user_files.refusal`).
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from scrapy.http import Request, Response
from twisted.python.failure import Failure

from config import user_files
from scrapers import parsing
from scrapers.items import OfferItem
from scrapers.platform import PlatformSpider, describe_failure
from scrapers.quotes.checks import Quote, check
from scrapers.quotes.file import read_records
from scrapers.rejects import RejectedOffer
from scrapers.replay import RECORD_SETTING
from sizing import gpu_names

EXAMPLE_PATH = Path(__file__).resolve().parents[1] / "data" / "quotes.example.yaml"
# Offers from the bundled example cite it by its place in the project: its absolute path
# differs per install, and the offline snapshot must match the request on every install.
EXAMPLE_URL = "file:scrapers/data/quotes.example.yaml"


class QuotesSpider(PlatformSpider):
    name = "quotes"
    # file:// requests go through the HTTP cache like any other (Scrapy skips "file" by
    # default), so offline replay answers them from the snapshot and recording keeps them. The one
    # spider whose source is a file, named by its user: the file handler every other crawl has off.
    custom_settings: dict[str, Any] | None = {
        "HTTPCACHE_IGNORE_SCHEMES": [],
        "DOWNLOAD_HANDLERS": {"file": "scrapy.core.downloader.handlers.file.FileDownloadHandler"},
    }
    file_env = "GPUPLAN_QUOTES_FILE"

    def first_requests(self) -> Iterable[Request]:
        named = os.environ.get(self.file_env) or None
        configured = Path(named).expanduser() if named else None
        if configured is None or self._replaying():
            path, cited = EXAMPLE_PATH, EXAMPLE_URL
        elif not configured.is_absolute():
            # The crawl runs in its output folder: a relative path would point elsewhere.
            self.record_failure(f"GPUPLAN_QUOTES_FILE must be an absolute path, got {configured}")
            return
        else:
            path, cited = configured, configured.as_uri()
            refusal = user_files.refusal(path, "a quotes file")
            if refusal is not None:
                self.record_failure(f"GPUPLAN_QUOTES_FILE {path}: {refusal}")
                return
        self._file_urls = {path.as_uri(), cited}
        # Built here, not with self.request(): for the example the URL read and the URL cited differ.
        yield Request(
            path.as_uri(),
            callback=self.parse_quotes,
            errback=self.on_request_failed,
            # A file that cannot be read now will not be readable in a few seconds either.
            meta={"source_url": cited, "dont_retry": True},
            dont_filter=True,
        )

    def refusal(self, url: str) -> str | None:
        """The quotes file named (or the bundled example) is the one thing this spider may ask."""
        return None if url in getattr(self, "_file_urls", ()) else "is not the quotes file"

    def _replaying(self) -> bool:
        """Offline replay (scrapers.crawl.runner): the HTTP cache answers from the snapshot, records none."""
        return self.settings.getbool("HTTPCACHE_ENABLED") and not self.settings.getbool(RECORD_SETTING)

    def on_request_failed(self, failure: Failure) -> None:
        what = describe_failure(failure, self.settings.getfloat("DOWNLOAD_TIMEOUT"))
        self.record_failure(f"the quotes file cannot be read ({what}); check GPUPLAN_QUOTES_FILE")

    def parse_quotes(self, response: Response) -> Iterator[OfferItem | RejectedOffer]:
        file_name = Path(unquote(urlsplit(self.source_url(response)).path)).name
        limit = user_files.MAX_FILE_BYTES  # every user's file's, with its reason
        if len(response.body) > limit:  # it grew after first_requests looked at it
            raise parsing.CrawlError(f"{file_name} is over the {limit:,}-byte limit of a quotes file")
        try:
            text = response.body.decode("utf-8-sig")
        except UnicodeDecodeError as error:
            raise parsing.CrawlError(
                f"{file_name} is not UTF-8 text (byte {error.start}); save it as UTF-8 (Excel: 'CSV UTF-8')"
            ) from None
        records = read_records(text, file_name)
        if not records:
            raise parsing.EmptyResult(f"{file_name} holds no quotes")
        observed_on = dt.date.fromisoformat(self.observed_at(response)[:10])
        first_line: dict[str, int] = {}  # offer_id -> the line of the quote in force with those terms
        for record in records:
            quote, problems = check(record)
            raw = {"file": file_name, "line": record.line, **record.plain()}
            if quote is not None:
                if quote.valid_to is not None and observed_on > quote.valid_to:
                    yield self.reject(response, "quote_expired", raw)
                    continue
                if quote.valid_from is not None and observed_on < quote.valid_from:
                    yield self.reject(response, "quote_not_yet_valid", raw)
                    continue
                # Quotes for the same terms may follow each other; two in force at once contradict.
                earlier = first_line.get(quote.offer_id)
                if earlier is not None:
                    problems = [
                        (record.line, f"the same quote as line {earlier} ({quote.offer_id}), both in force")
                    ]
            if quote is None or problems:
                messages = [f"{file_name} line {line}: {message}" for line, message in problems]
                for message in messages:
                    self.record_failure(message)
                yield self.reject(response, "quote_invalid", {**raw, "problems": messages})
                continue
            first_line[quote.offer_id] = record.line
            yield self.quote_offer(response, quote, record.line, file_name)

    def quote_offer(self, response: Response, quote: Quote, line: int, file_name: str) -> OfferItem:
        named = f"{quote.gpu} {quote.gpu_form}" if quote.gpu_form else quote.gpu
        extra = {
            "seller": quote.seller,
            "file": file_name,
            "line": line,
            "valid_from": quote.valid_from.isoformat() if quote.valid_from else None,
            "valid_to": quote.valid_to.isoformat() if quote.valid_to else None,
            "note": quote.note,
        }
        return self.offer(
            response,
            gpu_names.identify(named, quote.gpu_memory_gb),
            offer_id=quote.offer_id,
            pool_id=quote.pool_id,
            gpu_name_raw=quote.gpu,
            gpu_count=quote.gpu_count,
            price_amount=quote.price,
            price_currency=quote.currency,
            price_per=quote.price_per,
            billing_period=quote.billing_period,
            pricing_type=quote.pricing_type,
            region=quote.region,
            min_term_periods=quote.min_term,
            available_gpus=quote.stock,
            extra={key: value for key, value in extra.items() if value is not None},
        )

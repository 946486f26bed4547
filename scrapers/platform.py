"""The base every platform spider stands on: requests, tokens, failures, rows, and building items.

A spider subclasses `PlatformSpider`, sets `name` (= file name = platform slug) and writes
`first_requests()`. An answer that is a list of rows takes the declarative path: the spider
states where the rows are (`rows_at`), what a row must carry (`required`, `gpu_name_fields`)
and what is kept (`kept`), names `self.parse_rows` as its requests' callback, and writes
`offers_of(response, row)`; the base reads, checks and rejects (scrapers/README.md, "Adding a
platform"). Any other answer gets a callback of its own that yields `OfferItem`s made with
`offer()` (or `RejectedOffer`s made with `reject()`).

Everything a crawl needs to fail loudly instead of reporting "zero offers" lives here and in
`scrapers.middlewares`: failed requests, error envelopes and layout changes are recorded in
the crawl stats, which the runner turns into the summary status.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from typing import Any, ClassVar
from urllib.parse import urlencode, urlsplit, urlunsplit

import scrapy
from scrapy.exceptions import IgnoreRequest
from scrapy.http import Request, Response
from scrapy.spidermiddlewares.httperror import HttpError
from twisted.python.failure import Failure

from scrapers import parsing, rows
from scrapers.items import OfferItem
from scrapers.parsing import shown
from scrapers.redaction import redact
from scrapers.rejects import RejectedOffer
from sizing import gpu_names
from sizing.gpu_names import GpuIdentity

# Crawl stats keys the runner reads (scrapers.crawl.runner.summarize).
STAT_SKIPPED = "gpuplan/skipped"
STAT_ERRORS = "gpuplan/errors"  # list of messages, the first MAX_ERRORS_KEPT
STAT_FAILURES = "gpuplan/failures"  # count of failed requests and unusable responses
STAT_PARTIAL = "gpuplan/partial"  # why the result is known to be incomplete
STAT_UNVERIFIED = "gpuplan/unverified"  # why the source read is not known to match the platform
STAT_CLOCK = "gpuplan/clock"  # an answer's Date header replaced by the crawler's clock, and why
# A setting: how far (seconds) an answer's HTTP Date may be from the crawler's clock before the
# clock stands in for it (`PlatformSpider.observed_at`). A replayed answer keeps its recorded Date.
CLOCK_TOLERANCE_SETTING = "GPUPLAN_CLOCK_TOLERANCE_S"
MAX_ERRORS_KEPT = 10  # enough to diagnose; a summary is not a log
MAX_TEXT_DETAIL = 200  # characters of an error answer's message kept in a failure's line
RATE_LIMITED_STATUS = 429  # Too Many Requests (RFC 6585): said as "rate limited" in every message

# A setting, for tests and recording proxies: send every request to this origin
# (e.g. "http://127.0.0.1:8123") instead of the platform's. Items keep the
# platform's URLs, so the output is the same as a live crawl's.
ORIGIN_OVERRIDE_SETTING = "GPUPLAN_ORIGIN_OVERRIDE"
# What a crawl may ask: the web, over these schemes (never a local file, a data: URI, S3 or FTP).
SCHEMES = ("http", "https")
_HOST = re.compile(r"^[a-z0-9-]+(?:\.[a-z0-9-]+)+$")  # a host name as DNS spells it, nothing else
# The longest cell a row may hold: real ones are names, ids and prices, the longest a few hundred
# characters (SkyPilot's GpuInfo, Azure's product names). One longer is a malformed or hostile
# answer: its row is rejected `cell_too_long`, and only the cell's start is kept.
MAX_CELL_CHARS = 10_000
# Scrapy's HttpCompressionMiddleware refusing an answer that inflates past DOWNLOAD_MAXSIZE (2.19's text).
DECOMPRESSION_REFUSED = re.compile(r"exceeded DOWNLOAD_MAXSIZE \((\d+) B\) during decompression")


class Refused(IgnoreRequest):
    """A request the site rule (`PlatformSpider.refusal`) will not send: its message is the one line."""


@dataclass(frozen=True)
class Token:
    """A credential a spider sends, declared once here: the one place its variable is named.

    The crawl process reads it from the environment it inherits (`value()`), when the crawl
    starts; it is never logged, never in items, and redacted from every message
    (`scrapers.redaction`). The README's settings table and the test helpers list the tokens
    from the spiders' declarations.
    """

    env: str  # the environment variable users set, e.g. "LAMBDA_API_KEY", named in messages
    required: bool  # False when the spider has a keyless path (Lambda's pricing page)
    description: str = ""  # where a user gets it, for the README and `gpuplan crawl` messages

    def value(self, env: Mapping[str, str] | None = None) -> str | None:
        """The token as set in `env` (default: this process's environment), or None when unset."""
        return (os.environ if env is None else env).get(self.env) or None


class PlatformSpider(scrapy.Spider):
    """Base spider: subclasses implement `first_requests()`, and `offers_of()` for `parse_rows`
    or callbacks of their own that use `offer()`."""

    token: ClassVar[Token | None] = None
    # The domains this platform's requests may go to: a host is on one when it is it or ends in
    # "." + it ("azure.com" takes "prices.azure.com"). Every request, a next-page link or a host
    # built from an answer's id alike, must be on one (`refusal`), checked as it leaves.
    sites: ClassVar[tuple[str, ...]] = ()
    # Bounds on what an answer can make a crawl ask: the pages of one list (`next_page`,
    # `later_pages`) and the regions or zones an answer lists to be asked in turn (`fan_out`). A
    # spider that pages or fans out states its own, sourced from what the platform really answers,
    # with margin; a crawl past one ends partial instead of running until its deadline.
    max_pages: ClassVar[int] = 1
    max_fan_out: ClassVar[int] = 0
    # An environment variable naming a file this spider reads (the quotes spider's
    # GPUPLAN_QUOTES_FILE): the runner makes a relative one absolute against the caller's folder.
    file_env: ClassVar[str | None] = None

    # The declarative path (`parse_rows`): where an answer's rows are and what each must carry.
    rows_format: ClassVar[str] = "json"  # or "csv": a table with a header row (a catalog file)
    rows_at: ClassVar[tuple[str | int, ...] | None] = None  # path to the rows; () = the answer is the list
    rows_keyed_by: ClassVar[str | None] = None  # rows are an object's values: their key goes in this field
    rows_name: ClassVar[str] = "rows"  # what messages call them: "the platform answered with no offers"
    required: ClassVar[tuple[str, ...]] = ()  # a row without one of these is rejected `record_incomplete`
    gpu_name_fields: ClassVar[tuple[rows.Field, ...]] = ()  # where a row names its GPU (`gpu_of`)
    kept: ClassVar[tuple[str, ...]] = ()  # row fields copied into every offer's `extra`
    envelope: ClassVar[parsing.CodeEnvelope | None] = None  # a code envelope, beside the generic ones
    # Fields every offer of this spider shares (alltheplaces' `item_attributes`), e.g. currency,
    # price basis, billing period; an offer's own fields win.
    offer_fields: ClassVar[Mapping[str, Any]] = {}
    # Request headers that tell this API's calls apart where path, query and body do not (Tencent's
    # X-TC-Action and X-TC-Region): a recording keeps them, a replay compares them
    # (scrapers/replay.py). Never a credential (`replay.UNRECORDED_HEADERS`).
    replay_headers: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def tokens(cls) -> list[Token]:
        """Every credential the spider declares: its `token` first, then any companion `Token`
        attribute (a secret key that signs and is never sent)."""
        found = [getattr(cls, attr) for attr in sorted(dir(cls)) if not attr.startswith("_")]
        companions = [value for value in found if isinstance(value, Token) and value is not cls.token]
        return ([cls.token] if cls.token is not None else []) + companions

    @classmethod
    def skip_reason(cls, env: Mapping[str, str] | None = None) -> str | None:
        """Why this platform cannot be crawled with this environment: a required token (the
        `token`, or a required companion: a key pair) is missing."""
        missing = [token.env for token in cls.tokens() if token.required and not token.value(env)]
        if missing:
            return f"skipped: {cls.name} needs a login token; set {' and '.join(missing)}"
        return None

    def token_value(self) -> str | None:
        """The spider's credential from the environment, read when the crawl starts."""
        return self.token.value() if self.token else None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._followed: dict[str, set[str]] = {}  # walk -> the tokens it followed (`next_page`)

    async def start(self) -> AsyncIterator[Request]:
        reason = self.skip_reason()
        if reason is not None:
            self.logger.warning(reason)
            self.crawler.stats.set_value(STAT_SKIPPED, reason)
            return
        for request in self.first_requests():
            yield request

    def first_requests(self) -> Iterable[Request]:
        raise NotImplementedError(f"{type(self).__name__} must define first_requests()")

    # --- requests -----------------------------------------------------------

    def request(
        self,
        url: str,
        callback: Any,
        *,
        json_body: Any = None,
        form_body: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
        meta: Mapping[str, Any] | None = None,
        method: str | None = None,
    ) -> Request:
        """A request to `url` (POST with a JSON body when `json_body` is given, a form body when
        `form_body` is: signed APIs like UCloud's; `method` for another, Alibaba's bodiless POST),
        failures recorded.

        The platform URL travels in `meta["source_url"]`: items cite it even when
        the request itself went to an overridden origin.
        """
        all_headers = {"Accept": "application/json"} if json_body is not None else {}
        all_headers.update(headers or {})
        body = None
        if json_body is not None:
            all_headers["Content-Type"] = "application/json"
            body = json.dumps(json_body, sort_keys=True, separators=(",", ":"))
        elif form_body is not None:
            all_headers["Content-Type"] = "application/x-www-form-urlencoded"
            body = urlencode(sorted(form_body.items()))
        return Request(
            self.routed(url),
            method=method or ("POST" if body is not None else "GET"),
            body=body,
            headers=all_headers,
            callback=callback,
            errback=self.on_request_failed,
            meta={**(meta or {}), "source_url": url},
            dont_filter=True,
        )

    def sign(self, request: Request) -> None:
        """Sign `request` in place as it is sent, at each attempt (`middlewares.SigningMiddleware`):
        a signed API's spider (Tencent's TC3, Alibaba's ACS3) adds its signature headers here,
        with the time and nonce of the attempt. Default: nothing to sign."""

    def routed(self, url: str) -> str:
        """Where a request for the platform's `url` goes: there, or to `GPUPLAN_ORIGIN_OVERRIDE`."""
        origin = self.settings.get(ORIGIN_OVERRIDE_SETTING)
        parts = urlsplit(url)
        if not origin or parts.scheme not in ("http", "https"):
            return url
        target = urlsplit(origin)
        return urlunsplit((target.scheme, target.netloc, parts.path, parts.query, parts.fragment))

    def refusal(self, url: str) -> str | None:
        """Why the platform's `url` may not be asked (not http(s), or a host on none of `sites`), in a
        few words for "refused: <url> <why>"; None when it may. The one site rule of every request
        (`middlewares.SiteRuleMiddleware`) and every redirect (`middlewares.PlatformHostsMiddleware`)."""
        parts = urlsplit(url)
        if parts.scheme not in SCHEMES:
            return f"is not {' or '.join(SCHEMES)}"
        host = (parts.hostname or "").rstrip(".")
        if not _HOST.match(host) or parts.username is not None or parts.password is not None:
            return "names no plain host"
        if not any(host == site or host.endswith(f".{site}") for site in self.sites):
            return f"is off {self.name}'s site ({', '.join(self.sites) or 'none declared'})"
        return None

    def checked_id(self, value: Any, what: str, pattern: re.Pattern[str]) -> str | None:
        """An id from an answer that goes into a host or a path (Alibaba's region ids), as text when
        the whole of it matches `pattern`; else None, the refusal recorded in one line naming it."""
        text = str(value)
        if pattern.fullmatch(text):
            return text
        self.record_failure(f"refused: the {what} {shown(text)!r} is not {pattern.pattern}; not asked")
        return None

    @staticmethod
    def source_url(response: Response) -> str:
        return response.meta.get("source_url", response.url)

    # --- failures -----------------------------------------------------------

    def on_request_failed(self, failure: Failure) -> Iterable[Request] | None:
        """Every request's errback: the failure recorded. A spider that can ask elsewhere returns the
        requests that do (Lambda's second page address)."""
        self.record_failure(describe_failure(failure, self.settings.getfloat("DOWNLOAD_TIMEOUT")))
        return None

    def record_failure(self, message: str) -> None:
        """Count a failed request or unusable response and keep its message for the summary."""
        message = redact(message, [self.token_value() or ""])
        stats = self.crawler.stats
        stats.inc_value(STAT_FAILURES)
        errors = list(stats.get_value(STAT_ERRORS, []))
        if len(errors) < MAX_ERRORS_KEPT:
            stats.set_value(STAT_ERRORS, [*errors, message])
        self.logger.error(message)

    def mark_unverified(self, reason: str) -> None:
        """The answer was read from a source no real recording or public client confirms."""
        self.crawler.stats.set_value(STAT_UNVERIFIED, reason)
        self.logger.warning(reason)

    def mark_partial(self, reason: str) -> None:
        """The result is known to be incomplete (e.g. a result limit was hit)."""
        self.crawler.stats.set_value(STAT_PARTIAL, reason)
        self.logger.warning(reason)

    # --- answers: the declarative path --------------------------------------

    def parse_rows(self, response: Response) -> Iterator[OfferItem | RejectedOffer | Request]:
        """The callback of a rows answer: read and check it (`payload`), take its rows (`rows_at`),
        reject the incomplete ones, pass each other one to `offers_of` (adding the `kept` fields to
        the offers' `extra`), then ask for what follows (`after_rows`: the next pages)."""
        payload = self.payload(response)
        found = self.rows_of(payload, self.source_url(response))
        complete, rejected = self.complete_rows(response, found)
        yield from rejected
        for row in complete:
            yield from self.judged(response, row, partial(self.kept_offers, response, row))
        yield from self.after_rows(response, payload, found)

    def kept_offers(self, response: Response, row: Mapping[str, Any]) -> Iterator[Any]:
        """`offers_of` the row, the `kept` fields added to each offer's `extra`."""
        extra = rows.kept(row, self.kept) if self.kept else None
        for result in self.offers_of(response, row):
            if extra and isinstance(result, OfferItem):
                result.extra = {**extra, **result.extra}
            yield result

    def judged(self, response: Response, row: Any, results: Callable[[], Iterable[Any]]) -> list[Any]:
        """What one row makes (`results()`: its offers, rejections, requests), judged alone: when the
        row's code raises, the row is rejected with its reason and the rest of the answer is read.
        A row the answer got wrong (a `CrawlError`: stock -1, a cell that is no number) is
        `row_unreadable`; any other exception is a bug of the spider's row code, recorded as a
        spider bug for that row (the crawl is partial) and the row rejected `spider_bug`. A row's
        results are all or none: a row never loads half its offers."""
        long_cell = _long_cell(row)
        if long_cell is not None:
            name, size = long_cell
            problem = (
                f"the {name!r} cell is {size:,} characters, more than any real one ({MAX_CELL_CHARS:,}): "
                "a malformed or hostile answer"
            )
            return [self.reject(response, "cell_too_long", {"row": _cut_cells(row), "problem": problem})]
        try:
            return list(results())
        except parsing.CrawlError as error:
            problem = str(error)
            reason = "row_unreadable"
        except Exception as error:  # the spider's row code failed on this row, not the answer
            problem = f"spider bug: {type(error).__name__}: {error} in one of the {self.rows_name}"
            self.record_failure(f"{problem} (from {self.source_url(response)}); that row is rejected")
            self.logger.warning("the row's traceback", exc_info=error)
            reason = "spider_bug"
        raw = dict(row) if isinstance(row, Mapping) else {"value": str(row)[:MAX_TEXT_DETAIL]}
        return [self.reject(response, reason, {"row": raw, "problem": problem[:MAX_TEXT_DETAIL]})]

    def payload(self, response: Response) -> Any:
        """The answer as JSON, checked (`check_payload`): NotJson for HTML or a cut-off body. With
        `rows_format` "csv": the table's rows (`parsing.csv_rows`), which has no envelope."""
        if self.rows_format == "csv":
            return parsing.csv_rows(response)
        payload = parsing.json_body(response)
        self.check_payload(payload)
        return payload

    def check_payload(self, payload: Any) -> None:
        """Raise ErrorEnvelope for an error answer: the generic envelopes (`parsing.error_message`),
        then the spider's `envelope`. A spider whose platform says more (AutoDL's refused token)
        checks that first, then calls this."""
        parsing.check_error_envelope(payload)
        if self.envelope is not None:
            self.envelope.check(payload)

    def rows_of(self, payload: Any, url: str = "") -> list[Any]:
        """The rows at `rows_path(url)` of the answer to `url` (LayoutChanged when they are not there)."""
        path = self.rows_path(url)
        if path is None:
            raise NotImplementedError(f"{type(self).__name__} reads rows: set rows_at")
        return rows.rows_at(payload, path, self.rows_keyed_by)

    @classmethod
    def rows_path(cls, url: str) -> tuple[str | int, ...] | None:
        """Where the rows of the answer to `url` are: `rows_at`, unless the answer keys them by what
        the request asked (AWS's price document puts its rows under the Location its URL names)."""
        return cls.rows_at

    def complete_rows(
        self, response: Response, found: Sequence[Any]
    ) -> tuple[list[Mapping[str, Any]], list[RejectedOffer]]:
        """The rows that carry every `required` field and name their GPU (when `gpu_name_fields` are
        declared), and a `record_incomplete` rejection for each other one (kept, not dropped).
        Raises EmptyResult for no rows and LayoutChanged for none complete: a layout change, not
        an empty market."""
        complete, incomplete = rows.split_complete(found, self.required, self.rows_name, self.gpu_name_fields)
        return complete, [self.reject(response, "record_incomplete", row) for row in incomplete]

    def offers_of(
        self, response: Response, row: Mapping[str, Any]
    ) -> Iterable[OfferItem | RejectedOffer | Request]:
        """The offers of one complete row (and rejections only this spider can judge)."""
        raise NotImplementedError(f"{type(self).__name__} must define offers_of()")

    def after_rows(self, response: Response, payload: Any, found: Sequence[Any]) -> Iterable[Request]:
        """What an answer leads to once its offers are out: its next pages (`later_pages`, a next
        link), or a note that the result is incomplete (`mark_partial`). Default: nothing."""
        return ()

    def page_request(self, page: int) -> Request:
        """The request for page `page` (from 1) of a paged list, for `later_pages`."""
        raise NotImplementedError(f"{type(self).__name__} must define page_request() to read pages")

    def later_pages(self, response: Response, last_page: int) -> Iterator[Request]:
        """Pages 2..`last_page`, asked once page 1 has answered (a page count in the answer: AutoDL's
        `max_page`, matpool's `num_pages`, 恒源云's total). On a later page: nothing. A count over
        `max_pages` is refused: page 1 is kept, the crawl ends partial naming the count."""
        if response.meta.get("page", 1) != 1:
            return
        if last_page > self.max_pages:
            self.mark_partial(
                f"{shown(self.source_url(response))} says {last_page:,} pages, more than the "
                f"{self.max_pages} {self.name} is bounded to: only its first page is read"
            )
            return
        for page in range(2, last_page + 1):
            request = self.page_request(page)
            request.meta["page"] = page
            yield request

    def next_page(
        self, response: Response, token: Any, request_of: Callable[[str], Request], what: str = "next link"
    ) -> Iterator[Request]:
        """The page after `response` in its walk of a list, named by `token` (Azure's `NextPageLink`,
        Vultr's cursor, Alibaba's `NextToken`), made by `request_of(token)`; nothing when `token` is
        empty. The one rule of every walk: a token this walk followed before is a loop, and a page
        past `max_pages` is refused; either ends the walk, and the crawl is partial naming it. A walk
        is named by its first page's URL (`meta["walk"]`), its page number in `meta["page"]`."""
        if token is None or token == "":
            return
        walk = response.meta.get("walk") or self.source_url(response)
        page = response.meta.get("page", 1)
        text = str(token)
        followed = self._followed.setdefault(walk, set())
        if text in followed:
            self.mark_partial(
                f"{shown(walk)}: page {page + 1} is asked by a {what} followed before ({shown(text)}): "
                "a loop; the rest of this list is not read"
            )
            return
        if page >= self.max_pages:
            self.mark_partial(
                f"{shown(walk)}: more than {self.max_pages} pages, the most {self.name} is bounded to: "
                "the rest of this list is not read"
            )
            return
        followed.add(text)
        request = request_of(text)
        request.meta.update(walk=walk, page=page + 1)
        yield request

    def fan_out(self, items: Sequence[Any], what: str) -> Sequence[Any]:
        """The first `max_fan_out` of `items` (an answer's regions or zones, each to be asked in
        turn); more are refused, the crawl partial naming how many there were."""
        if len(items) <= self.max_fan_out:
            return items
        self.mark_partial(
            f"{self.name} lists {len(items):,} {what}, more than the {self.max_fan_out} it is bounded to: "
            f"only the first {self.max_fan_out} are asked"
        )
        return items[: self.max_fan_out]

    def gpu_of(self, row: Mapping[str, Any], memory_gb: float | None = None) -> tuple[str, GpuIdentity]:
        """The row's GPU: its raw name (the first of `gpu_name_fields` it fills) and its catalog
        identity from all of them (the first that resolves), with the platform's per-GPU memory in
        GB. A name the catalog does not know stays unknown (`gpu_model` None), never guessed."""
        names = rows.named(row, self.gpu_name_fields)
        return (names[0] if names else ""), gpu_names.identify_first(names, memory_gb)

    # --- items --------------------------------------------------------------

    def _stamp(self, response: Response) -> tuple[str, str]:
        """(observed_at, source_url) of a response, worked out once per response: a Vast
        answer holds thousands of offers."""
        cached = getattr(self, "_last_stamp", None)
        if cached is None or cached[0] is not response:
            cached = (response, self.observed_at(response), self.source_url(response))
            self._last_stamp = cached
        return cached[1], cached[2]

    def observed_at(self, response: Response) -> str:
        """When the platform quoted (`parsing.observed_at`): its HTTP Date, unless that is further than
        `GPUPLAN_CLOCK_TOLERANCE_S` from the crawler's clock (a Date of 2099 or 1970): then the clock,
        said in the summary (`stats.clock`). An answer replayed from a snapshot (Scrapy's "cached"
        flag) keeps its recorded Date: an offline run is the day it was recorded; so does a crawl
        without the project's settings (a test's bare crawler)."""
        if "cached" in response.flags or self.settings.get(CLOCK_TOLERANCE_SETTING) is None:
            return parsing.observed_at(response)
        tolerance_s = self.settings.getfloat(CLOCK_TOLERANCE_SETTING)
        now = datetime.now(UTC)
        moment = parsing.http_date(response.headers.get(b"Date"))
        if moment is not None and parsing.date_off_clock(moment, now, tolerance_s):
            self.crawler.stats.set_value(
                STAT_CLOCK,
                f"{shown(self.source_url(response))} is dated {parsing.utc_iso(moment)}, more than "
                f"{tolerance_s:g} s from the crawler's clock: "
                f"its offers are observed at {parsing.utc_iso(now)}",
            )
        return parsing.observed_at(response, tolerance_s, now)

    def offer(self, response: Response, gpu: GpuIdentity, **fields: Any) -> OfferItem:
        """An OfferItem with platform, time, source, the GPU identity and `offer_fields` filled in."""
        observed_at, source_url = self._stamp(response)
        return OfferItem(
            platform=self.name,
            observed_at=observed_at,
            source_url=source_url,
            gpu_model=gpu.gpu_model,
            gpu_memory_gb=gpu.gpu_memory_gb,
            gpu_form=gpu.gpu_form,
            **{**self.offer_fields, **fields},
        )

    def reject(self, response: Response, reason: str, raw: Any) -> RejectedOffer:
        """A quote this spider will not pass on, with the platform's raw record."""
        observed_at, source_url = self._stamp(response)
        return RejectedOffer(
            platform=self.name,
            reason=reason,
            observed_at=observed_at,
            source_url=source_url,
            raw=dict(raw) if isinstance(raw, Mapping) else {"value": raw},
        )

    def on_demand_and_spot(
        self,
        response: Response,
        gpu: GpuIdentity,
        on_demand: float | None,
        spot: float | None,
        **fields: Any,
    ) -> Iterator[OfferItem]:
        """The offers of a listing quoted on demand and at a spot (interruptible) price: on demand
        always (a missing price is the item checks' to reject), spot when `parsing.spot_price`
        says it is one (positive, and below the on-demand price)."""
        yield self.offer(response, gpu, price_amount=on_demand, pricing_type="on_demand", **fields)
        spot = parsing.spot_price(on_demand, spot)
        if spot is not None:
            yield self.offer(response, gpu, price_amount=spot, pricing_type="spot", **fields)


def _long_cell(row: Any) -> tuple[str, int] | None:
    """The first text in `row` (an object, a list, nested) longer than MAX_CELL_CHARS: its key and length."""
    stack: list[tuple[str, Any]] = [("", row)]
    while stack:
        key, node = stack.pop()
        if isinstance(node, str):
            if len(node) > MAX_CELL_CHARS:
                return key, len(node)
        elif isinstance(node, Mapping):
            stack.extend((str(k), v) for k, v in node.items())
        elif isinstance(node, list):
            stack.extend((key, v) for v in node)
    return None


def _cut_cells(node: Any) -> Any:
    """`node` with every text cut to MAX_TEXT_DETAIL characters: a rejected row kept without its bulk."""
    if isinstance(node, str):
        return node if len(node) <= MAX_TEXT_DETAIL else node[:MAX_TEXT_DETAIL] + "…"
    if isinstance(node, Mapping):
        return {str(key): _cut_cells(value) for key, value in node.items()}
    if isinstance(node, list):
        return [_cut_cells(value) for value in node]
    return node


def describe_failure(failure: Failure, download_timeout_s: float) -> str:
    """One line for the summary: what failed, where, after how many attempts."""
    request: Request | None = getattr(failure, "request", None)
    url = request.meta.get("source_url", request.url) if request is not None else "?"
    attempts = 1 + (request.meta.get("retry_times", 0) if request is not None else 0)
    tries = f" after {attempts} attempts" if attempts > 1 else ""
    error = failure.value
    if isinstance(error, HttpError):
        response = error.response
        detail = _error_detail(response)
        limited = "rate limited: " if response.status == RATE_LIMITED_STATUS else ""
        return f"{limited}HTTP {response.status} from {url}{tries}{detail}"
    name = type(error).__name__
    if "Timeout" in name:
        return f"timed out (no answer in {download_timeout_s:g} s) from {url}{tries}"
    if isinstance(error, Refused):
        return str(error)
    if name == "IgnoreRequest" and "not in cache" in str(error):
        return f"not in the offline snapshot: {request.method if request else '?'} {url}"
    bomb = DECOMPRESSION_REFUSED.search(str(error)) if name == "IgnoreRequest" else None
    if bomb is not None:
        return parsing.too_large(url, int(bomb[1]))
    return f"{name} from {url}{tries}: {error}"


def _error_detail(response: Response) -> str:
    """The error answer's message: a JSON envelope's, else a short plain-text body's first line
    (Vast answers a 429 with "API requests too frequent" as plain text, vast-ai/docs
    `api-reference/rate-limits-and-errors.mdx`); never an HTML page."""
    try:
        message = parsing.error_message(json.loads(response.body))
    except UnicodeDecodeError:
        message = None
    except ValueError:
        text = response.body[:MAX_TEXT_DETAIL].decode("utf-8", "replace").strip()
        message = text.splitlines()[0] if text and not text.startswith("<") else None
    return f": {message[:MAX_TEXT_DETAIL]}" if message else ""

"""Lambda: the public pricing page without a key; the instance-types API (with stock) with one.

Without `LAMBDA_API_KEY`: the pricing page, `https://lambda.ai/pricing` (the name the page gives
itself, the address ewyluda/gpu-price-index `src/gpu_index/sources/lambda_cloud.py` @ 1f5b058
fetches and the one whose Internet Archive captures henryzhangpku/gpu-price-index reads), else
`https://lambda.ai/service/gpu-cloud` (what toolshedlabs-hash/gpu-price-feed and
cherielilili/gpu-pricing-tracker fetch): the second is asked when the first is not there (HTTP 404
or 410), redirects off the platform or carries no pricing tables. Any other failure (HTTP 403, 5xx
after the retries, a timeout) is the site's, and fails the crawl as it is: asking a second address
of a site in trouble would only add load (as the DataCrunch spider's old host). Redirects are
followed by the spider itself, within Lambda's own hosts (`sites`), at most
`MAX_REDIRECTS` hops, so that items cite the page that answered and a replayed redirect stays in
its snapshot.

The page's "Instances pricing" section is a HubSpot CMS island (`<div data-hs-island="true">`):
one size tab per GPU count ("8x", "4x", "2x", "1x") and one table per tab, rows
`<tr data-plan="NVIDIA H100 SXM">` with cells `data-label="VRAM/GPU"` and
`data-label="PRICE/GPU/HR*"` ($ per GPU per hour, before sales tax). It is read in two forms:

- rendered: `<button role="tab" aria-controls="tabpanel-0" class="_tabButton_…">8x</button>` and
  `<div role="tabpanel" id="tabpanel-0">` (a verbatim Internet Archive excerpt of lambda.ai/pricing,
  2026-01-09, in henryzhangpku/gpu-price-index `tests/fixtures/backfill/lambda_20260109103934.html`
  @ c4ae7ff); without the aria markup, `_tabButton` buttons paired with the tables in document
  order, refusing to guess when the counts differ (toolshedlabs `providers/lambdalabs.py` @ aad9b32);
- the island's hydration data, which is all some versions of the page serve: a script
  `var newIslands = [...]` that `window.__islands` takes up, whose tabs island
  (`"moduleName": "TabsIsland"`) lists `props.tabs`, each an object whose `label` is the size
  and whose `contentHtml` is that tab's table (maheshbabugorantla/llm-inference-pricing
  `pricing/scrapers/lambda_labs.py`). The JSON writes the markup's `<`, `>` and `/` as unicode
  escapes (what the pattern of cherielilili `scripts/lambda_fetcher.py` @ ecc9327 matches on the
  live page): each `contentHtml` is decoded and read with its own `label`.

Only a page with neither is a layout change. Tables without `data-plan` rows (1-Click Clusters)
are not size tables. The page says nothing about stock.

With `LAMBDA_API_KEY`: `GET https://cloud.lambda.ai/api/v1/instance-types` (Bearer token):
`price_cents_per_hour` per instance, and `regions_with_capacity_available`, the stock signal:
one offer per region with capacity (at least one instance, so `available_gpus` = its GPU count,
a lower bound), or one offer with `available_gpus` 0 when the list is empty. The sizes of one card
in one region (`gpu_1x_h100_sxm5`, `gpu_8x_h100_sxm5`) are one stock asked at several sizes, as
RunPod's pods: they share a `pool_id` (`<card>/<region>`, the card the instance type names after
its size), and the warehouse counts the pool as its largest size with capacity (at least 8, not 9).
The GPU's memory is read from the description, `8x Tesla V100 (16 GB)` (the regex of dstackai/gpuhunt
`providers/lambdalabs.py`), so a card the catalog does not know keeps it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from functools import partial
from typing import Any
from urllib.parse import urljoin

from parsel import Selector
from scrapy.http import Request, Response
from scrapy.spidermiddlewares.httperror import HttpError
from twisted.python.failure import Failure

from scrapers import parsing
from scrapers.items import OfferItem
from scrapers.platform import PlatformSpider, Token, describe_failure
from scrapers.rejects import RejectedOffer
from sizing import gpu_names

# The pricing page: its own name first, then the address the other public clients fetch.
PRICING_PAGE_URLS = ("https://lambda.ai/pricing", "https://lambda.ai/service/gpu-cloud")
MAX_REDIRECTS = 5  # a pricing page is one or two hops away at most; more is a redirect loop
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
NOT_SERVED_STATUSES = frozenset({404, 410})  # the page is not (or no more) at this address
INSTANCE_TYPES_URL = "https://cloud.lambda.ai/api/v1/instance-types"
SIZE_TAB = re.compile(r"^\s*(\d+)\s*x\s*$", re.IGNORECASE)
PRICE_LABEL = "PRICE/GPU/HR"  # the cell's label, then "*" (a footnote: before sales tax)
# A size tab in the live page's CSS modules: `class="_tabButton_ywv0y_15 ..."`.
TAB_BUTTONS = '//*[contains(concat(" ", normalize-space(@class)), " _tabButton")]'
PRICING_TABLES = "//table[.//tr[@data-plan]][.//*[starts-with(@data-label, $label)]]"
# "8x Tesla V100 (16 GB)", "1x A10 (24 GB PCIe)": count, name, memory (gpuhunt's reading).
API_DESCRIPTION = re.compile(r"^\s*(\d+)x\s+(?:Tesla\s+)?(.+?)\s*\((\d+)\s*GB", re.IGNORECASE)
# Where a script hands islands to HubSpot's runtime: `var newIslands = [...]`, `window.__islands = [...]`.
ISLANDS = re.compile(r"\b(?:newIslands|__islands)\s*(?:=|\.push\()\s*")
# The size an instance type's name starts with ("gpu_8x_" of gpu_8x_h100_sxm5): the rest names the card.
INSTANCE_SIZE = re.compile(r"^gpu_\d+x_")


class LambdaSpider(PlatformSpider):
    name = "lambda"
    sites = ("lambda.ai", "lambdalabs.com")  # lambdalabs.com moved to lambda.ai
    token = Token(
        env="LAMBDA_API_KEY",
        required=False,
        description="Lambda Cloud API key (cloud.lambda.ai, API keys); without it the pricing page is read",
    )
    # The keyless path reads a web page: ask its robots.txt first.
    custom_settings: dict[str, Any] | None = {"ROBOTSTXT_OBEY": True}
    # The API (with a key): `data` is an object of instance types keyed by their name.
    rows_at = ("data",)
    rows_keyed_by = "name"
    rows_name = "instance types"
    required = ("instance_type",)
    gpu_name_fields = (("instance_type", "gpu_description"), ("instance_type", "description"), "name")
    offer_fields = {"price_currency": "USD", "billing_period": "hour"}

    def first_requests(self) -> Iterable[Request]:
        key = self.token_value()
        if key:
            yield self.request(
                INSTANCE_TYPES_URL,
                self.parse_rows,
                headers={"Authorization": f"Bearer {key}", "Accept": "application/json"},
                # An API for key holders, not a page: robots.txt is not its contract.
                meta={"dont_obey_robotstxt": True},
            )
        else:
            first, *others = PRICING_PAGE_URLS
            yield self._page_request(first, tuple(others))

    # --- the pricing page -----------------------------------------------------

    def _page_request(
        self, url: str, fallbacks: tuple[str, ...], tried: tuple[str, ...] = (), hops: int = 0
    ) -> Request:
        """The pricing page at `url`; `fallbacks` are asked in turn if it gives nothing, `tried` says
        why the earlier addresses gave nothing. Redirects are the spider's (`on_request_failed`)."""
        meta = {"dont_redirect": True, "fallbacks": fallbacks, "tried": tried, "hops": hops}
        return self.request(url, self.parse_pricing_page, meta=meta)

    def parse_pricing_page(self, response: Response) -> Iterator[OfferItem | RejectedOffer | Request]:
        # The rendered tables first; the island's hydration data when the page ships only that.
        rows = list(_sized_rows(Selector(text=response.text))) or list(_island_rows(response.text))
        if not rows:
            problem = (
                "no size tabs (8x, 4x, ...) with data-plan pricing tables on the pricing page, "
                "rendered or in its islands (window.__islands)"
            )
            yield from self._fall_back(response.meta, f"{problem} (from {self.source_url(response)})")
            return
        for gpu_count, row in rows:
            yield from self.judged(response, row.get(), partial(self.page_offers, response, gpu_count, row))

    def on_request_failed(self, failure: Failure) -> Iterable[Request]:
        request: Request | None = getattr(failure, "request", None)
        if request is None or "fallbacks" not in request.meta:
            super().on_request_failed(failure)
            return ()
        error = failure.value
        status = error.response.status if isinstance(error, HttpError) else None
        if isinstance(error, HttpError) and status in REDIRECT_STATUSES:
            return self._redirected(request.meta, error.response)
        if status not in NOT_SERVED_STATUSES:
            # The site's failure, not the address's: asking its other address would only add load.
            super().on_request_failed(failure)
            return ()
        why = describe_failure(failure, self.settings.getfloat("DOWNLOAD_TIMEOUT"))
        return self._fall_back(request.meta, why)

    def _redirected(self, meta: Mapping[str, Any], response: Response) -> Iterable[Request]:
        url = meta["source_url"]
        location = (response.headers.get(b"Location") or b"").decode("latin-1").strip()
        target = urljoin(url, location) if location else ""
        if not target:
            problem = f"HTTP {response.status} from {url} names no Location"
        elif self.refusal(target) is not None:
            problem = f"HTTP {response.status} from {url} redirects off Lambda's hosts, to {target}"
        elif meta["hops"] >= MAX_REDIRECTS:
            problem = f"more than {MAX_REDIRECTS} redirects from {PRICING_PAGE_URLS[0]}, the last to {target}"
        else:
            return [self._page_request(target, meta["fallbacks"], meta["tried"], meta["hops"] + 1)]
        return self._fall_back(meta, problem)

    def _fall_back(self, meta: Mapping[str, Any], problem: str) -> Iterator[Request]:
        """The next address of the pricing page, or, when none is left, every address's failure."""
        fallbacks, tried = meta["fallbacks"], (*meta["tried"], problem)
        if fallbacks:
            self.logger.warning(f"{problem}; asking {fallbacks[0]}")
            yield self._page_request(fallbacks[0], fallbacks[1:], tried)
            return
        for message in tried:
            self.record_failure(message)

    def page_offers(
        self, response: Response, gpu_count: int, row: Selector
    ) -> list[OfferItem | RejectedOffer]:
        return [self.page_offer(response, gpu_count, row)]

    def page_offer(self, response: Response, gpu_count: int, row: Selector) -> OfferItem | RejectedOffer:
        plan = (row.attrib.get("data-plan") or "").strip()
        cells = {
            (cell.attrib.get("data-label") or "").strip(): " ".join(cell.css("::text").getall()).strip()
            for cell in row.css("td[data-label], th[data-label]")
        }
        if not plan:
            return self.reject(response, "record_incomplete", {"gpu_count": gpu_count, "cells": cells})
        price_label = next((label for label in cells if label.upper().startswith(PRICE_LABEL)), None)
        vram = cells.get("VRAM/GPU", "")
        gpu = gpu_names.identify(plan, parsing.memory_in_name(vram))
        return self.offer(
            response,
            gpu,
            # A plan name can have two memory sizes ("NVIDIA A100 SXM", 40 and 80 GB).
            offer_id=f"{plan} {vram}/{gpu_count}x".replace("  ", " "),
            gpu_name_raw=plan,
            gpu_count=gpu_count,
            # A sold-out size shows "—": no price, which the item checks reject (price_missing).
            price_amount=parsing.number(cells.get(price_label)) if price_label else None,
            price_per="gpu",
            pricing_type="on_demand",
            extra={
                label.lower(): value for label, value in cells.items() if label in ("vCPUs", "RAM", "STORAGE")
            },
        )

    # --- the API ----------------------------------------------------------------

    def offers_of(self, response: Response, row: Mapping[str, Any]) -> Iterator[OfferItem]:
        kind = row["instance_type"] if isinstance(row["instance_type"], Mapping) else {}
        specs = kind.get("specs") or {}
        description = str(kind.get("description") or "")
        listed = parsing.number(specs.get("gpus"))
        gpu_count = int(listed) if listed is not None else _leading_count(description)
        if gpu_count == 0:
            return  # a CPU instance: not a GPU offer
        described = API_DESCRIPTION.match(description)
        raw_name, gpu = self.gpu_of(row, float(described.group(3)) if described else None)
        shared = {
            "gpu_name_raw": raw_name,
            "gpu_count": gpu_count,
            "price_amount": parsing.from_minor_units(kind.get("price_cents_per_hour"), parsing.CENTS),
            "price_per": "instance",
            "pricing_type": "on_demand",
        }
        extra = {
            "instance_type": row["name"],
            **{k: specs[k] for k in ("vcpus", "memory_gib", "storage_gib") if k in specs},
        }
        regions = row.get("regions_with_capacity_available")
        if not isinstance(regions, list) or not regions:
            yield self.offer(
                response,
                gpu,
                offer_id=row["name"],
                available_gpus=None if regions is None else 0,
                extra=extra,
                **shared,
            )
            return
        for region in regions:
            name = region.get("name") if isinstance(region, Mapping) else str(region)
            yield self.offer(
                response,
                gpu,
                offer_id=f"{row['name']}/{name}",
                pool_id=f"{INSTANCE_SIZE.sub('', str(row['name']))}/{name}",
                region=name,
                available_gpus=gpu_count,
                extra={
                    **extra,
                    "region_description": region.get("description") if isinstance(region, Mapping) else None,
                },
                **shared,
            )


def _sized_rows(page: Selector) -> Iterator[tuple[int, Selector]]:
    """(GPU count, row) of every data-plan row of a size tab's table, by either tab markup."""
    by_panel = list(_rows_by_tab_panel(page))
    return iter(by_panel) if by_panel else _rows_by_tab_order(page)


def _rows_by_tab_panel(page: Selector) -> Iterator[tuple[int, Selector]]:
    """Tabs marked up for accessibility: `role="tab"` + `aria-controls` naming the panel."""
    for tab in page.xpath('//*[@role="tab"]'):
        size = SIZE_TAB.match(" ".join(tab.css("::text").getall()))
        panel_id = tab.attrib.get("aria-controls")
        if size is None or not panel_id:
            continue
        for row in page.xpath("//*[@id=$panel]//tr[@data-plan]", panel=panel_id):
            yield int(size.group(1)), row


def _rows_by_tab_order(page: Selector) -> Iterator[tuple[int, Selector]]:
    """The live page's markup: `_tabButton` buttons, and the pricing tables in the same order."""
    sizes = [
        int(label.group(1))
        for tab in page.xpath(TAB_BUTTONS)
        if (label := SIZE_TAB.match(" ".join(tab.css("::text").getall())))
    ]
    tables = page.xpath(PRICING_TABLES, label=PRICE_LABEL)
    if not sizes or not tables:
        return
    if len(sizes) != len(tables):
        raise parsing.LayoutChanged(
            f"{len(sizes)} size tabs but {len(tables)} pricing tables on the pricing page: "
            "which table is which size cannot be told"
        )
    for gpu_count, table in zip(sizes, tables, strict=True):
        for row in table.xpath(".//tr[@data-plan]"):
            yield gpu_count, row


def _island_rows(text: str) -> Iterator[tuple[int, Selector]]:
    """(GPU count, row) of every data-plan row in the page's islands: each size tab an object whose
    `label` is the size and whose `contentHtml` is its table, decoded and read with that label."""
    decoder = json.JSONDecoder()
    for script in Selector(text=text).xpath("//script[not(@src)]/text()").getall():
        if "contentHtml" not in script:
            continue
        for handed in ISLANDS.finditer(script):
            try:
                islands, _ = decoder.raw_decode(script, handed.end())
            except json.JSONDecodeError:
                continue  # `window.__islands.push(...newIslands)`: the array itself was read already
            for tab in _tabs(islands):
                size = SIZE_TAB.match(tab["label"])
                if size is None:
                    continue
                for table in Selector(text=tab["contentHtml"]).xpath(PRICING_TABLES, label=PRICE_LABEL):
                    for row in table.xpath(".//tr[@data-plan]"):
                        yield int(size.group(1)), row


def _tabs(value: Any) -> Iterator[Mapping[str, str]]:
    """Every object carrying a `label` and a `contentHtml`, however deep the islands nest it."""
    if isinstance(value, Mapping):
        if isinstance(value.get("label"), str) and isinstance(value.get("contentHtml"), str):
            yield value
        for nested in value.values():
            yield from _tabs(nested)
    elif isinstance(value, list):
        for nested in value:
            yield from _tabs(nested)


def _leading_count(description: str) -> int:
    match = re.match(r"^\s*(\d+)\s*x", description)
    return int(match.group(1)) if match else 0

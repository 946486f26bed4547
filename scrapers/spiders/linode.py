"""Akamai Cloud (Linode): the public plan catalog, its GPU plans by the hour and by the month, per region.

Source: `GET https://api.linode.com/v4/linode/types` (no key, no query), the catalog
toolshedlabs-hash/gpu-price-feed's Akamai provider reads (`providers/akamai.py`). The answer is
paged (`{"data": [...], "page": 1, "pages": N, "results": M}`, the linode-rs `LinodeTypeListRoot`);
the whole catalog fits one page today, and later pages are asked as `?page=N` when it says more.

Per plan type: `gpus` (the count; 0 for the CPU plans and the NETINT video accelerators, which are
no GPU offers), `label`, the only place the GPU model is written ("Dedicated 32GB + RTX6000 GPU x1",
"RTX4000 Ada x1 Small": the card is what follows a "+", up to its "xN" count), `price` {`hourly`,
`monthly`} in USD per instance, and `region_prices[]` {`id`, `hourly`, `monthly`}: the prices of
the regions that differ from the default (Linode's API docs).
- GPU plans carry a base `price` of 0 with their real prices in `region_prices` only (seen live on
  2026-09-17 by api-evangelist/linode: "The GPU class returns a $0 base price on the public
  catalog"). A base price of 0 beside region prices is no price: the region prices are the
  offers, one per region. A base price with no region price at all is passed on as read (the
  item checks refuse a 0).
- Hourly is on demand; monthly is what a whole month costs, billed "hourly, capped at the monthly
  rate" (api-evangelist's reading of Linode's pricing): a monthly plan offer of one month.
Stock: the catalog says nothing about it (a region with a price is one the plan is sold in).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from scrapy.http import Request, Response

from scrapers import parsing
from scrapers.items import PLAN_OF_PERIOD, BillingPeriod, OfferItem
from scrapers.platform import PlatformSpider
from scrapers.rows import dig, value_at
from sizing import gpu_names

TYPES_URL = "https://api.linode.com/v4/linode/types"
# "RTX6000 GPU x1", "RTX4000 Ada x1 Small": the card, then its count (toolshedlabs' LABEL_RE reads
# the same "GPU xN" tail, for the models it knows).
GPU_IN_LABEL = re.compile(r"^(?P<card>.+?)(?:\s+GPU)?\s+x\d+\b")
PERIODS: tuple[tuple[str, BillingPeriod], ...] = (("hourly", "hour"), ("monthly", "month"))


class LinodeSpider(PlatformSpider):
    name = "linode"
    sites = ("linode.com",)
    rows_at = ("data",)
    rows_name = "plan types"
    max_pages = 10  # the whole catalog (about 60 types) fits its first page of 100 today ("pages": 1)
    required = ("id", "gpus")
    gpu_name_fields = ("label",)
    kept = ("label", "class", "vcpus", "memory")
    offer_fields = {"price_currency": "USD", "price_per": "instance"}

    def first_requests(self) -> Iterable[Request]:
        yield self.page_request(1)

    def page_request(self, page: int) -> Request:
        return self.request(TYPES_URL if page == 1 else f"{TYPES_URL}?page={page}", self.parse_rows)

    def after_rows(self, response: Response, payload: Any, found: Sequence[Any]) -> Iterable[Request]:
        return self.later_pages(response, dig(payload, "pages", expect=int))

    def offers_of(self, response: Response, row: Mapping[str, Any]) -> Iterator[OfferItem]:
        gpu_count = int(parsing.number(row["gpus"]) or 0)
        if gpu_count == 0:
            return  # a CPU plan, or a NETINT video transcoding card: no GPU
        card = gpu_in_label(str(row["label"]))
        gpu = gpu_names.identify(card)
        regions = [entry for entry in row.get("region_prices") or () if isinstance(entry, Mapping)]
        prices: list[tuple[str | None, Any]] = [(str(entry.get("id")), entry) for entry in regions]
        if not regions or any(parsing.number(value_at(row, ("price", key))) for key, _ in PERIODS):
            prices.insert(0, (None, row.get("price")))  # else the GPU class's base price of 0
        for region, price in prices:
            for key, period in PERIODS:
                yield self.offer(
                    response,
                    gpu,
                    offer_id=str(row["id"]) if region is None else f"{region}/{row['id']}",
                    gpu_name_raw=card,
                    gpu_count=gpu_count,
                    price_amount=parsing.number(value_at(price, key)),
                    billing_period=period,
                    pricing_type=PLAN_OF_PERIOD[period],
                    region=region,
                )


def gpu_in_label(label: str) -> str:
    """The card a plan's label names: after a "+" (the host's part), before its "xN" count."""
    part = label.rsplit("+", 1)[-1].strip()
    match = GPU_IN_LABEL.match(part)
    return match.group("card") if match else part

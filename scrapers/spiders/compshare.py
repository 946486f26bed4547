"""优云智算 compshare.cn (UCloud): the public price list, no account.

Source: `https://www.compshare.cn/price-list` (price-sources.md §4.5), an HTML page of
whole-machine prices: GPU plus the CPU and memory that come with it, per machine, for each
way of paying (按时 hourly, 按天 daily, 按月 monthly, 抢占式 preemptible). The platform's API
gives stock but no prices and needs a signed key, so this page is the keyless source.

The page is read by its table headers, not by column position: a price table has a GPU
model column (a header with "GPU" and 型号) and price columns whose header names a unit
(元/小时 or 元/时, 元/天, 元/周, 元/月); "抢占" in the header marks preemptible (spot) prices.
Optional columns: GPU count (卡数 / 数量, default 1), 显存, CPU, 内存. A cell without a
number ("—") means that way of paying is not sold for the machine; a row with no price at
all is rejected. Every price is per machine (`price_per` "instance"), billed by the period
its header names; monthly and daily prices are plans with a minimum term of one period.
The page says nothing about stock.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from parsel import Selector
from scrapy.http import Request, Response

from scrapers import parsing
from scrapers.items import BillingPeriod, OfferItem, PricingType
from scrapers.platform import PlatformSpider
from scrapers.rejects import RejectedOffer
from sizing import gpu_names

PRICE_LIST_URL = "https://www.compshare.cn/price-list"
# A header's price unit -> the billing period it names.
PERIOD_UNITS: tuple[tuple[str, BillingPeriod], ...] = (
    ("元/小时", "hour"),
    ("元/时", "hour"),
    ("元/天", "day"),
    ("元/日", "day"),
    ("元/周", "week"),
    ("元/月", "month"),
)
PLAN_OF_PERIOD: dict[str, PricingType] = {
    "hour": "on_demand",
    "day": "daily_plan",
    "week": "weekly_plan",
    "month": "monthly_plan",
}
SPOT_WORD = "抢占"  # 抢占式: preemptible, may be reclaimed


@dataclass(frozen=True)
class PriceColumn:
    index: int
    label: str
    billing_period: BillingPeriod
    pricing_type: PricingType


@dataclass(frozen=True)
class PriceTable:
    gpu: int
    count: int | None
    memory: int | None
    kept: dict[str, int]  # extra columns worth keeping (CPU, 内存) by name
    prices: tuple[PriceColumn, ...]
    width: int


def _header(text: str) -> str:
    return re.sub(r"\s+", "", text).replace("（", "(").replace("）", ")")


def read_headers(labels: list[str]) -> PriceTable | None:
    """The columns of a price table from its header labels; None when it is no price table."""
    heads = [_header(label) for label in labels]

    def find(*words: str) -> int | None:
        return next((i for i, head in enumerate(heads) if any(word in head for word in words)), None)

    gpu = next((i for i, head in enumerate(heads) if "GPU" in head.upper() and "型号" in head), None)
    prices = []
    for index, head in enumerate(heads):
        period = next((period for unit, period in PERIOD_UNITS if unit in head), None)
        if period is None:
            continue
        pricing_type: PricingType = "spot" if SPOT_WORD in head else PLAN_OF_PERIOD[period]
        prices.append(PriceColumn(index, labels[index].strip(), period, pricing_type))
    if gpu is None or not prices:
        return None
    kept = {name: index for name, index in (("cpu", find("CPU")), ("ram", find("内存"))) if index is not None}
    return PriceTable(gpu, find("卡数", "数量"), find("显存"), kept, tuple(prices), len(heads))


def _cell_text(cell: Selector) -> str:
    return " ".join(" ".join(cell.css("::text").getall()).split())


class CompshareSpider(PlatformSpider):
    name = "compshare"
    # A web page, not an API: ask its robots.txt first.
    custom_settings: dict[str, Any] | None = {"ROBOTSTXT_OBEY": True}  # noqa: RUF012 - Scrapy reads the class attribute

    def first_requests(self) -> Iterable[Request]:
        yield self.request(PRICE_LIST_URL, self.parse_price_list)

    def parse_price_list(self, response: Response) -> Iterator[OfferItem | RejectedOffer]:
        found = False
        for table in Selector(text=response.text).css("table"):
            header_cells = table.css("thead tr th") or table.css("tr:first-child th")
            columns = read_headers([_cell_text(cell) for cell in header_cells])
            if columns is None:
                continue
            found = True
            for row in table.css("tbody tr"):
                yield from self.row_offers(response, columns, [_cell_text(cell) for cell in row.css("td")])
        if not found:
            raise parsing.LayoutChanged(
                "no price table on the page (a GPU型号 column and 元/小时, 元/天 or 元/月 price columns)"
            )

    def row_offers(
        self, response: Response, columns: PriceTable, cells: list[str]
    ) -> Iterator[OfferItem | RejectedOffer]:
        if len(cells) != columns.width:
            yield self.reject(response, "row_shape", {"cells": cells, "columns": columns.width})
            return
        name = cells[columns.gpu]
        count = parsing.number(cells[columns.count]) if columns.count is not None else 1.0
        memory = cells[columns.memory] if columns.memory is not None else ""
        priced = [(column, parsing.number(cells[column.index])) for column in columns.prices]
        priced = [(column, price) for column, price in priced if price is not None]
        if not name or count is None or count < 1 or count != int(count) or not priced:
            yield self.reject(
                response, "no_price" if name and not priced else "record_incomplete", {"cells": cells}
            )
            return
        gpu = gpu_names.identify(name, parsing.number(memory))
        offer_id = f"{name} {memory}/{int(count)}x".replace(" /", "/")
        extra = {key: cells[index] for key, index in columns.kept.items() if cells[index]}
        for column, price in priced:
            yield self.offer(
                response,
                gpu,
                offer_id=offer_id,
                gpu_name_raw=name,
                gpu_count=int(count),
                price_amount=price,
                price_currency="CNY",
                price_per="instance",
                billing_period=column.billing_period,
                pricing_type=column.pricing_type,
                extra={**extra, "price_column": column.label},
            )

"""chenyu.cn (晨羽智云, the platform the brief calls 晨涧云): its open API's GPU models, each priced
per GPU by the hour, day, week, month and year.

Needs `CHENYU_API_KEY`, the key the console's API管理 page shows once, sent as `Authorization:
Bearer <key>`; without it the crawl is skipped. The one request and its answer are the official
API reference's (https://enterprise.chenyu.cn/api-reference/gpu/list and /introduction, as copied
into axgiroud312-byte/tengyu-aipod references/generation-comfyui/chenyu-cloud-api.md @
1db3c55718b2f535bd57e299b6a66afa5a3f068c): `GET https://www.chenyu.cn/api/open/v2/gpu/list`, no
parameters, answering `{"code": 0, "msg", "data": {"gpu_list": [...], "total"}}` (any other code is
an error, also with HTTP 200). Each model: `gpu_name` ("NVIDIA RTX 4090", memory stated only for
cards sold in more than one size, if at all), `gpu_uuid`, `status` (1 = 可用, available; the
reference names no other value, so any other is read as not rentable now: 0 GPUs) and
`price.{hour, day, week, month, year}` in 元 (CNY) for one card of the model (instances are
created with `gpu_nums` 1/2/4/8 of one `gpu_uuid`): each key is optional (the reference's own
sample code checks `if 'day' in gpu['price']`), one offer per key given. hour is on demand; day,
week and month are plans of one period; year is a one-year reservation, its price the year's.
No region (the platform places instances itself) and no count of free cards.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from scrapy.http import Request, Response

from scrapers import parsing
from scrapers.items import PLAN_OF_PERIOD, BillingPeriod, OfferItem
from scrapers.platform import PlatformSpider, Token

LIST_URL = "https://www.chenyu.cn/api/open/v2/gpu/list"
AVAILABLE = 1  # `status` 可用
# The periods a model is priced by: its price keys are the billing periods' own names.
PERIODS: tuple[BillingPeriod, ...] = ("hour", "day", "week", "month", "year")


class ChenyuSpider(PlatformSpider):
    name = "chenyu"
    sites = ("chenyu.cn",)
    token = Token(
        env="CHENYU_API_KEY",
        required=True,
        description="chenyu.cn (晨羽智云) API key, from the console's API管理 page (Bearer key)",
    )
    rows_at = ("data", "gpu_list")
    rows_name = "GPU models"
    required = ("gpu_uuid", "price")
    gpu_name_fields = ("gpu_name",)
    kept = ("gpu_uuid", "status")
    envelope = parsing.CodeEnvelope(ok=(0,))
    offer_fields = {"price_currency": "CNY", "price_per": "gpu", "gpu_count": 1}

    def first_requests(self) -> Iterable[Request]:
        headers = {"Authorization": f"Bearer {self.token_value() or ''}", "Content-Type": "application/json"}
        yield self.request(LIST_URL, self.parse_rows, headers=headers)

    def offers_of(self, response: Response, row: Mapping[str, Any]) -> Iterator[OfferItem]:
        raw_name, gpu = self.gpu_of(row, parsing.memory_in_name(str(row.get("gpu_name") or "")))
        prices = row["price"] if isinstance(row["price"], Mapping) else {}
        for period in PERIODS:
            if period not in prices:
                continue  # not sold by that period
            yield self.offer(
                response,
                gpu,
                offer_id=f"{row['gpu_uuid']}/{period}",
                gpu_name_raw=raw_name,
                price_amount=parsing.number(prices[period]),
                billing_period=period,
                pricing_type=PLAN_OF_PERIOD[period],  # hour on demand, a year reserved
                available_gpus=None if row.get("status") == AVAILABLE else 0,
            )

"""恒源云 gpushare.com: the machine market a logged-in user sees.

Needs `GPUSHARE_TOKEN`: the store's login token, sent as `Authorization: Bearer <token>`
with the store's Origin and Referer (price-sources.md §4.2). Without it the crawl is
skipped; an expired token is answered with HTTP 401, and the crawl fails saying so.

Source: `GET https://api.gpushare.com/app/api/market/machine/list?models=-1&gpuName=&priceOrder=asc&pn=N&ps=50`
-> `data.{list, total}`; page 1 says the total, pages 2..ceil(total / ps) follow.
Per machine (one offer, rented by the card):
- price: the `skuList` entry with `skuName` "payg". UNVERIFIED UNIT: read as CNY per
  GPU-hour, a decimal, which is how the public monitors print it (15683950475/gpu-monitor
  `monitor2.py`: "¥{price}/h") and how the store lists pay-as-you-go cards; no public answer
  shows the unit itself. Were it in 厘 (1/1000 CNY, AutoDL's unit), the warehouse would reject
  the prices as absurd; in 分 (1/100) they would pass, so a first real crawl must be checked by
  eye. The other SKUs (weekly, monthly) are kept in `extra.sku_prices`: names and units
  undocumented.
- stock: free GPUs = `gpuNum - gpuUsed`; 0 when `isOnline` is false.
- GPU: `baseInfo.gpuName`, with the memory the host's `machineName` states: a 48 GB RTX 4090
  shows only there ("4090 48G（南）", names recorded by 15683950475/gpu-monitor
  `last_state2.json`), so "4090 48G" is the 48 GB card and "XS16-4080S32G-8" a 32 GB 4080
  SUPER (no catalog card: unknown, memory kept).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any
from urllib.parse import urlencode

from scrapy.http import Request, Response
from scrapy.spidermiddlewares.httperror import HttpError
from twisted.python.failure import Failure

from scrapers import parsing
from scrapers.items import OfferItem
from scrapers.platform import PlatformSpider, Token, describe_failure
from scrapers.rejects import RejectedOffer
from scrapers.rows import dig, kept, value_at

LIST_URL = "https://api.gpushare.com/app/api/market/machine/list"
PAGE_SIZE = 50  # `ps` the documented monitoring scripts use
PAY_AS_YOU_GO_SKU = "payg"
# The store's own origin: the API answers the store's requests (price-sources.md §4.2).
STORE_HEADERS = {"Origin": "https://www.gpushare.com", "Referer": "https://www.gpushare.com/store"}
REFUSED_STATUSES = (401, 403)


class GpushareSpider(PlatformSpider):
    name = "gpushare"
    sites = ("gpushare.com",)
    token = Token(
        env="GPUSHARE_TOKEN",
        required=True,
        description="恒源云 (gpushare.com) login token, sent as a Bearer token",
    )
    rows_at = ("data", "list")
    rows_name = "machines"
    max_pages = 20  # of 50 machines: the recording's market takes 2 (`total` 54)
    required = ("id", "gpuNum", "baseInfo", "skuList")
    gpu_name_fields = (("baseInfo", "gpuName"),)
    # UNVERIFIED unit: CNY per GPU-hour (module docstring).
    offer_fields = {"price_currency": "CNY", "price_per": "gpu", "billing_period": "hour"}

    def first_requests(self) -> Iterable[Request]:
        self._headers = {"Authorization": f"Bearer {self.token_value()}", **STORE_HEADERS}
        yield self.page_request(1)

    def page_request(self, page: int) -> Request:
        query = {"models": -1, "gpuName": "", "priceOrder": "asc", "pn": page, "ps": PAGE_SIZE}
        return self.request(f"{LIST_URL}?{urlencode(query)}", self.parse_rows, headers=self._headers)

    def on_request_failed(self, failure: Failure) -> None:
        error = failure.value
        if isinstance(error, HttpError) and error.response.status in REFUSED_STATUSES:
            what = describe_failure(failure, self.settings.getfloat("DOWNLOAD_TIMEOUT"))
            self.record_failure(
                f"gpushare refused GPUSHARE_TOKEN ({what}): it has expired or is wrong; "
                "log in to gpushare.com again and copy a fresh token"
            )
            return
        super().on_request_failed(failure)

    def after_rows(self, response: Response, payload: Any, found: Sequence[Any]) -> Iterable[Request]:
        total = dig(payload, "data", "total", expect=int)
        return self.later_pages(response, math.ceil(total / PAGE_SIZE))

    def offers_of(self, response: Response, row: Mapping[str, Any]) -> Iterator[OfferItem | RejectedOffer]:
        skus = row["skuList"] if isinstance(row["skuList"], list) else []
        prices = {str(sku.get("skuName")): sku.get("price") for sku in skus if isinstance(sku, Mapping)}
        try:
            free = parsing.stock_from_free(row["gpuNum"], row.get("gpuUsed"))
        except parsing.LayoutChanged:
            yield self.reject(response, "stock_invalid", row)
            return
        if row.get("isOnline") is False:
            free = 0
        raw_name, gpu = self.gpu_of(row, parsing.memory_in_name(str(row.get("machineName") or "")))
        extra = {
            "machine_name": row.get("machineName"),
            "gpu_num": row.get("gpuNum"),
            "cuda_version": value_at(row, ("baseInfo", "gpuToolkitVersion")),
            "driver_version": value_at(row, ("baseInfo", "gpuDriverVersion")),
            "net_download_bytes_per_s": value_at(row, ("baseInfo", "netDownloadSpeed")),
            "sku_prices": {name: value for name, value in prices.items() if name != PAY_AS_YOU_GO_SKU}
            or None,
        }
        yield self.offer(
            response,
            gpu,
            offer_id=str(row["id"]),
            gpu_name_raw=raw_name,
            gpu_count=1,
            price_amount=parsing.number(prices.get(PAY_AS_YOU_GO_SKU)),
            pricing_type="on_demand",
            available_gpus=free,
            extra=kept(extra),
        )

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
from collections.abc import Iterable, Iterator, Mapping
from typing import Any
from urllib.parse import urlencode

from scrapy.http import Request, Response
from scrapy.spidermiddlewares.httperror import HttpError
from twisted.python.failure import Failure

from scrapers import parsing
from scrapers.items import OfferItem
from scrapers.platform import PlatformSpider, Token, describe_failure
from scrapers.rejects import RejectedOffer
from sizing import gpu_names

LIST_URL = "https://api.gpushare.com/app/api/market/machine/list"
PAGE_SIZE = 50  # `ps` the documented monitoring scripts use
PAY_AS_YOU_GO_SKU = "payg"
# The store's own origin: the API answers the store's requests (price-sources.md §4.2).
STORE_HEADERS = {"Origin": "https://www.gpushare.com", "Referer": "https://www.gpushare.com/store"}
REFUSED_STATUSES = (401, 403)
REQUIRED = ("id", "gpuNum", "baseInfo", "skuList")


def page_url(page: int) -> str:
    query = {"models": -1, "gpuName": "", "priceOrder": "asc", "pn": page, "ps": PAGE_SIZE}
    return f"{LIST_URL}?{urlencode(query)}"


class GpushareSpider(PlatformSpider):
    name = "gpushare"
    token = Token(
        env="GPUSHARE_TOKEN",
        required=True,
        description="恒源云 (gpushare.com) login token, sent as a Bearer token",
    )

    def first_requests(self) -> Iterable[Request]:
        self._headers = {"Authorization": f"Bearer {self.token_value()}", **STORE_HEADERS}
        yield self._page_request(1)

    def _page_request(self, page: int) -> Request:
        return self.request(page_url(page), self.parse_list, headers=self._headers, meta={"page": page})

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

    def parse_list(self, response: Response) -> Iterator[OfferItem | RejectedOffer | Request]:
        data = parsing.dig(self.json_payload(response), "data", expect=dict)
        rows = parsing.dig(data, "list")
        complete, rejected = self.complete_rows(response, rows, REQUIRED, "machines")
        yield from rejected
        for row in complete:
            yield self.machine_offer(response, row)
        if response.meta["page"] == 1:
            total = parsing.dig(data, "total", expect=int)
            for page in range(2, math.ceil(total / PAGE_SIZE) + 1):
                yield self._page_request(page)

    def machine_offer(self, response: Response, row: Mapping[str, Any]) -> OfferItem | RejectedOffer:
        info = row["baseInfo"] if isinstance(row["baseInfo"], Mapping) else {}
        raw_name = str(info.get("gpuName") or "").strip()
        if not raw_name:
            return self.reject(response, "record_incomplete", row)
        skus = row["skuList"] if isinstance(row["skuList"], list) else []
        prices = {str(sku.get("skuName")): sku.get("price") for sku in skus if isinstance(sku, Mapping)}
        # UNVERIFIED unit: CNY per GPU-hour (module docstring).
        price = parsing.number(prices.get(PAY_AS_YOU_GO_SKU))
        if price is None:
            return self.reject(response, "price_missing", row)
        try:
            free = parsing.stock_from_free(row["gpuNum"], row.get("gpuUsed"))
        except parsing.LayoutChanged:
            return self.reject(response, "stock_invalid", row)
        if row.get("isOnline") is False:
            free = 0
        extra = {
            "machine_name": row.get("machineName"),
            "gpu_num": row.get("gpuNum"),
            "cuda_version": info.get("gpuToolkitVersion"),
            "driver_version": info.get("gpuDriverVersion"),
            "net_download_bytes_per_s": info.get("netDownloadSpeed"),
            "sku_prices": {name: value for name, value in prices.items() if name != PAY_AS_YOU_GO_SKU}
            or None,
        }
        return self.offer(
            response,
            gpu_names.identify(raw_name, parsing.memory_in_name(str(row.get("machineName") or ""))),
            offer_id=str(row["id"]),
            gpu_name_raw=raw_name,
            gpu_count=1,
            price_amount=price,
            price_currency="CNY",
            price_per="gpu",
            billing_period="hour",
            pricing_type="on_demand",
            available_gpus=free,
            extra=parsing.kept(extra),
        )

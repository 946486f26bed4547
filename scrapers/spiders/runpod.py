"""RunPod: the lowest price per GPU for every GPU count, in secure and community cloud.

Source: the public GraphQL API `POST https://api.runpod.io/graphql` (no key),
as gpuhunt and other trackers call it. First `gpuTypes` with each type's
largest pod per cloud; then one request per (cloud, GPU count) asking every
type's `lowestPrice` for that count. Prices are USD per GPU per hour:
`uninterruptablePrice` on demand, `minimumBidPrice` the spot (bid) floor.

Stock, from `lowestPrice.stockStatus` (qualitative; our mapping):
- "High" / "Medium" / "Low": at least one pod of that many GPUs can start, so
  `available_gpus` = the GPU count (a lower bound; RunPod gives no number);
- null: none available (gpuhunt drops such offers; price-sources.md §6) -> 0;
- field absent or another word: unknown -> None.

RunPod quotes `uninterruptablePrice: 0.5` with no bid price for types it
cannot price: MI300X, H200 NVL and RTX 2000 Ada in the 2026-04-01 sample (the
MI300X's spot price in the same answer is $1.49, three times its "on-demand"
one). Such a quote is rejected as "placeholder_price" rather than passed on as
the cheapest GPU of its class; a real $0.50 quote without a bid price would be
rejected too, visibly, in the rejected feed.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from scrapy.http import Request, Response

from scrapers import parsing
from scrapers.items import OfferItem
from scrapers.platform import PlatformSpider
from scrapers.rejects import RejectedOffer
from sizing import gpu_names

GRAPHQL_URL = "https://api.runpod.io/graphql"
TYPES_QUERY = (
    "query GpuTypes { gpuTypes { id displayName memoryInGb secureCloud communityCloud "
    "maxGpuCount maxGpuCountSecureCloud maxGpuCountCommunityCloud } }"
)
PRICES_QUERY = (
    "query GpuPrices($lowestPriceInput: GpuLowestPriceInput) { gpuTypes { id displayName memoryInGb "
    "secureCloud communityCloud secureSpotPrice communitySpotPrice "
    "lowestPrice(input: $lowestPriceInput) { minimumBidPrice uninterruptablePrice stockStatus } } }"
)
CLOUDS = ("secure", "community")
# RunPod pods hold at most 8-10 GPUs; a larger maximum is a broken answer, and
# fanning out to it would send hundreds of requests.
MAX_GPU_COUNT = 16
STOCK_LEVELS = frozenset({"High", "Medium", "Low"})
PLACEHOLDER_PRICE_USD = 0.5


class RunpodSpider(PlatformSpider):
    name = "runpod"

    def first_requests(self) -> Iterable[Request]:
        yield self.request(GRAPHQL_URL, self.parse_types, json_body={"query": TYPES_QUERY})

    def parse_types(self, response: Response) -> Iterator[Request]:
        types = _gpu_types(response)
        complete, _ = parsing.split_complete(types, ("id",), "GPU types")
        for cloud in CLOUDS:
            largest = {row["id"]: _max_count(row, cloud) for row in complete if row.get(f"{cloud}Cloud")}
            known = [count for count in largest.values() if count is not None]
            if not known:
                continue
            top = max(known)
            if top > MAX_GPU_COUNT:
                self.mark_partial(
                    f"RunPod says {cloud} pods hold up to {top} GPUs; asked up to {MAX_GPU_COUNT}"
                )
                top = MAX_GPU_COUNT
            for gpu_count in range(1, top + 1):
                variables = {"lowestPriceInput": {"gpuCount": gpu_count, "secureCloud": cloud == "secure"}}
                yield self.request(
                    GRAPHQL_URL,
                    self.parse_prices,
                    json_body={"query": PRICES_QUERY, "variables": variables},
                    meta={"cloud": cloud, "gpu_count": gpu_count, "largest": largest},
                )

    def parse_prices(self, response: Response) -> Iterator[OfferItem | RejectedOffer]:
        cloud, gpu_count = response.meta["cloud"], response.meta["gpu_count"]
        largest: Mapping[str, int | None] = response.meta.get("largest", {})
        types = _gpu_types(response)
        complete, _ = parsing.split_complete(types, ("id",), "GPU types")
        if not any("lowestPrice" in row for row in complete):
            raise parsing.LayoutChanged("no GPU type carries 'lowestPrice'")
        for row in complete:
            top = largest.get(row["id"])
            if not row.get(f"{cloud}Cloud") or (top is not None and gpu_count > top):
                continue
            lowest = row.get("lowestPrice")
            if isinstance(lowest, Mapping):
                yield from self.offers_of(response, row, lowest, cloud, gpu_count)

    def offers_of(
        self,
        response: Response,
        row: Mapping[str, Any],
        lowest: Mapping[str, Any],
        cloud: str,
        gpu_count: int,
    ) -> Iterator[OfferItem | RejectedOffer]:
        on_demand = parsing.number(lowest.get("uninterruptablePrice"))
        bid = parsing.number(lowest.get("minimumBidPrice"))
        gpu = gpu_names.identify_first(
            [row["id"], row.get("displayName") or ""], parsing.number(row.get("memoryInGb"))
        )
        shared = {
            "offer_id": f"{row['id']}/{cloud}/{gpu_count}x",
            "gpu_name_raw": str(row["id"]),
            "gpu_count": gpu_count,
            "price_currency": "USD",
            "price_per": "gpu",
            "billing_period": "hour",
            "available_gpus": _stock(lowest, gpu_count),
            "extra": {
                "cloud": cloud,
                "display_name": row.get("displayName"),
                "stock_status": lowest.get("stockStatus"),
                "spot_price_per_gpu": row.get(f"{cloud}SpotPrice"),
            },
        }
        if on_demand == PLACEHOLDER_PRICE_USD and bid is None:
            yield self.reject(response, "placeholder_price", {**row, "cloud": cloud, "gpu_count": gpu_count})
        elif on_demand is not None:
            yield self.offer(response, gpu, price_amount=on_demand, pricing_type="on_demand", **shared)
        if bid is not None:
            yield self.offer(response, gpu, price_amount=bid, pricing_type="spot", **shared)


def _gpu_types(response: Response) -> list[Any]:
    payload = parsing.json_body(response)
    parsing.check_error_envelope(payload)
    return parsing.dig(payload, "data", "gpuTypes")


def _max_count(row: Mapping[str, Any], cloud: str) -> int | None:
    value = parsing.number(row.get(f"maxGpuCount{cloud.capitalize()}Cloud"))
    if value is None:
        value = parsing.number(row.get("maxGpuCount"))
    return int(value) if value is not None and value >= 1 else None


def _stock(lowest: Mapping[str, Any], gpu_count: int) -> int | None:
    if "stockStatus" not in lowest:
        return None
    status = lowest["stockStatus"]
    if status is None:
        return 0
    return gpu_count if status in STOCK_LEVELS else None

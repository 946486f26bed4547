"""RunPod: the lowest price per GPU for each pod size, in secure and community cloud.

Without `RUNPOD_API_KEY`: the public GraphQL API `POST https://api.runpod.io/graphql`, as
gpuhunt (`providers/runpod.py`) and toolshedlabs-hash/gpu-price-feed call it. First `gpuTypes`
with each type's largest pod per cloud; then one request per (cloud, pod size) asking every
type's `lowestPrice` for that many GPUs, and its list price (`securePrice` / `communityPrice`).
The GraphQL API is deprecated and retires in early 2027 (runpod/docs
`sdks/graphql/configurations.mdx`); it is read while it answers.

With `RUNPOD_API_KEY`: the REST catalog `GET https://api.runpod.io/v2/catalog/gpus` (Bearer key;
runpod/docs `api-reference-v2/openapi.json`), one request per (cloud, pod size) with
`include=AVAILABILITY&product=POD&count=N&cloud=SECURE|COMMUNITY`, as SkyPilot's
`sky/adaptors/runpod.py` asks it: `price.secure` / `price.community` (list price per GPU-hour),
`maxCount` per cloud, `availability` NONE | LOW | MEDIUM | HIGH for that pod size.

Pod sizes: 1, 2, 4, ... up to the largest pod a cloud offers. Plans size jobs in powers of two
(sizing's GPU counts, 1 to 64), so a 3- or 10-GPU pod is never one a plan rents; asking only
these sizes keeps the fan-out at a dozen requests although RunPod's largest "pod" is 32 MIG
slices of an RTX PRO 6000 (real `maxGpuCount` 32, 2026-08). Prices are USD per GPU per hour.

Stock (qualitative; our mapping): "High" / "Medium" / "Low" (REST: HIGH, MEDIUM, LOW) means at
least one pod of that size can start, so `available_gpus` = the pod size (a lower bound); null
(REST: NONE) means none now -> 0; a missing field or another word -> unknown (None). The sizes are
one stock, the GPU type's in that cloud, asked at several sizes: every pod size of a type and cloud
has one `pool_id` (`<type id>/<cloud>`), and the warehouse counts the pool once, by its largest
size in stock (8 RTX 4090 free in secure cloud when the 1x, 2x, 4x and 8x pods can all start, not 15).

Instant Clusters (no key): `gpuTypes(input: {cluster: true})` lists the types RunPod joins into
clusters, with `clusterPrice` (USD per GPU per hour), `maxGpuCount` (the GPUs of one node) and
`nodeGroupDatacenters` (where), asked with `lowestPrice(input: {gpuCount: 8})` as gpuhunt's
`_fetch_cluster_offers` (dstackai/gpuhunt `providers/runpod.py` @ 35841515) asks it: the query, the
fields and the per-GPU reading of `clusterPrice` are gpuhunt's. Each (type, data centre) is one
offer of one node, offer_id `<type id>/cluster/<data centre>`, sold only as whole nodes of a
cluster (sizing/data/clusters.csv: 2-8 nodes, the fabric's Gb/s per GPU). gpuhunt's comment: "The
API does not return supported pod counts but for now it's always 2-8 for all offers". Stock: the
GraphQL answer says nothing of free nodes. gpuhunt skips a type without `lowestPrice.minVcpu` or
`minMemory` ("Runpod returns no CPU and memory if the offer is out of stock"): such a type, or a
null `stockStatus`, is 0 free (our mapping); otherwise the nodes free are unknown (None), since a
stock word for one 8-GPU pod says nothing of N nodes. Not known from any recording: whether
`stockStatus` is filled for cluster types at all (gpuhunt does not read it), and the units of
`clusterPrice` beyond gpuhunt's use (`clusterPrice * maxGpuCount` as a node's price per hour).
The v2 catalog's cluster stock (`product=CLUSTER`, with a key) is not read.

Spot: RunPod removed spot pods on 2026-05-06 (runpod/docs commit 4c8ada0c "Remove spot pod and
interruptible pod documentation"). Since then `minimumBidPrice` is null and the `*SpotPrice`
fields repeat the on-demand price (toolshedlabs' recorded rows, 2026-08). A spot offer is made
only from a bid price below the on-demand one: a bid equal to it is no spot market.

Placeholder: RunPod answers 0.5 for a type it cannot price (MI300X, H200 NVL, RTX 2000 Ada in the
real 2026-04-01 sample; the MI300X's spot price there is $1.49), as its quote and, since 2026-08,
inside its list prices too (H200 NVL community 0.50 against secure 3.79). A real price
can be 0.5 too (the RTX 3090 in secure cloud, 2026-08). A quote of 0.5 is judged against the
type's other prices in the same answer (`placeholder_price`): it is a placeholder when the same
cloud's spot price is dearer (a real price is never under its own spot price), when the other
cloud's list price is more than `CLOUD_SPREAD` times it, when its own list price says otherwise,
or, with no list price at all, when there is no bid price either (the sample's case). Such a
quote is rejected as "placeholder_price", visibly, rather than passed on as the cheapest GPU of
its class; the REST catalog's prices are judged by the same rule. A 0.5 that nothing in the
answer contradicts (a type in one cloud only, its list price 0.5) is passed on: the spider has no
history, and the warehouse's plans price floor (docs/plausibility.md, rule 4) leaves it out of
plans when it sits far under the other platforms' prices for that GPU, as the placeholder does.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from functools import partial
from typing import Any
from urllib.parse import urlencode

from scrapy.http import Request, Response

from scrapers import parsing
from scrapers.items import OfferItem
from scrapers.platform import PlatformSpider, Token
from scrapers.rejects import RejectedOffer
from scrapers.rows import dig, kept, split_complete
from sizing import gpu_names

GRAPHQL_URL = "https://api.runpod.io/graphql"
CATALOG_URL = "https://api.runpod.io/v2/catalog/gpus"
TYPES_QUERY = (
    "query GpuTypes { gpuTypes { id displayName memoryInGb secureCloud communityCloud "
    "maxGpuCount maxGpuCountSecureCloud maxGpuCountCommunityCloud } }"
)
PRICES_QUERY = (
    "query GpuPrices($lowestPriceInput: GpuLowestPriceInput) { gpuTypes { id displayName memoryInGb "
    "secureCloud communityCloud securePrice communityPrice secureSpotPrice communitySpotPrice "
    "lowestPrice(input: $lowestPriceInput) { minimumBidPrice uninterruptablePrice stockStatus } } }"
)
CLUSTER_QUERY = (
    "query ClusterTypes($lowestPriceInput: GpuLowestPriceInput, $gpuTypesInput: GpuTypeFilter) { "
    "gpuTypes(input: $gpuTypesInput) { id displayName memoryInGb maxGpuCount clusterPrice "
    "nodeGroupDatacenters { id } lowestPrice(input: $lowestPriceInput) { minVcpu minMemory stockStatus } } }"
)
# gpuhunt's variables: the cluster types, priced for a node of 8 ("Needed to get CPU and RAM")
CLUSTER_VARIABLES = {"gpuTypesInput": {"cluster": True}, "lowestPriceInput": {"gpuCount": 8}}
CLOUDS = ("secure", "community")
POD_SIZES = (1, 2, 4, 8, 16, 32, 64)  # the GPU counts plans use (sizing's DEFAULT_GPU_COUNTS)
# The largest real pod is 32 (MIG slices); a larger maximum than the biggest size we ask is a
# broken answer, not a market, and the crawl says it did not ask for everything.
MAX_GPU_COUNT = POD_SIZES[-1]
STOCK_LEVELS = frozenset({"High", "Medium", "Low"})
CATALOG_STOCK_LEVELS = frozenset({"HIGH", "MEDIUM", "LOW"})
PLACEHOLDER_PRICE_USD = 0.5
# How far apart one type's list prices in the two clouds may be and still both be real: 1.0-2.3x in
# the fixture's rows from toolshedlabs' 2026-08-23 recording (RTX 3090 secure 0.50 / community
# 0.22 the widest); the placeholder sits 5x (MI300X 0.5 / 2.49) to 7.6x (H200 NVL 0.5 / 3.79) under.
CLOUD_SPREAD = 3.0


class RunpodSpider(PlatformSpider):
    name = "runpod"
    sites = ("runpod.io",)
    token = Token(
        env="RUNPOD_API_KEY",
        required=False,
        description="RunPod API key (console, Settings, API Keys): the REST catalog; "
        "without it the public GraphQL API is read",
    )
    # The GraphQL prices: one answer per (cloud, pod size), a row per GPU type.
    rows_at = ("data", "gpuTypes")
    rows_name = "GPU types"
    required = ("id",)
    gpu_name_fields = ("id", "displayName")
    offer_fields = {"price_currency": "USD", "price_per": "gpu", "billing_period": "hour"}

    def first_requests(self) -> Iterable[Request]:
        key = self.token_value()
        if key:
            self._catalog_headers = {"Authorization": f"Bearer {key}", "Accept": "application/json"}
            # One first request, as every spider starts (a 429 or a refused key is met once); the
            # community cloud's single GPUs are asked once the secure cloud's have answered.
            yield self._catalog_request(CLOUDS[0], 1)
        else:
            yield self.request(GRAPHQL_URL, self.parse_types, json_body={"query": TYPES_QUERY})

    def pod_sizes(self, cloud: str, largest: Iterable[int | None]) -> list[int]:
        """The pod sizes to ask for in `cloud`, given each type's largest pod there."""
        known = [count for count in largest if count is not None]
        if not known:
            return []
        top = max(known)
        if top > MAX_GPU_COUNT:
            self.mark_partial(f"RunPod says {cloud} pods hold up to {top} GPUs; asked up to {MAX_GPU_COUNT}")
        return [size for size in POD_SIZES if size <= top]

    # --- GraphQL (no key) ---------------------------------------------------------

    def parse_types(self, response: Response) -> Iterator[Request]:
        complete, _ = split_complete(self.rows_of(self.payload(response)), ("id",), self.rows_name)
        yield self.request(
            GRAPHQL_URL,
            self.parse_rows,
            json_body={"query": CLUSTER_QUERY, "variables": CLUSTER_VARIABLES},
            meta={"cluster": True},
        )
        for cloud in CLOUDS:
            largest = {row["id"]: _max_count(row, cloud) for row in complete if row.get(f"{cloud}Cloud")}
            for gpu_count in self.pod_sizes(cloud, largest.values()):
                variables = {"lowestPriceInput": {"gpuCount": gpu_count, "secureCloud": cloud == "secure"}}
                yield self.request(
                    GRAPHQL_URL,
                    self.parse_rows,
                    json_body={"query": PRICES_QUERY, "variables": variables},
                    meta={"cloud": cloud, "gpu_count": gpu_count, "largest": largest},
                )

    def after_rows(self, response: Response, payload: Any, found: Sequence[Any]) -> Iterable[Request]:
        if not any(isinstance(row, Mapping) and "lowestPrice" in row for row in found):
            raise parsing.LayoutChanged("no GPU type carries 'lowestPrice'")
        return ()

    def offers_of(self, response: Response, row: Mapping[str, Any]) -> Iterator[OfferItem | RejectedOffer]:
        if response.meta.get("cluster"):
            yield from self.cluster_offers(response, row)
            return
        cloud, gpu_count = response.meta["cloud"], response.meta["gpu_count"]
        top = response.meta.get("largest", {}).get(row["id"])
        lowest = row.get("lowestPrice")
        if (
            not row.get(f"{cloud}Cloud")
            or (top is not None and gpu_count > top)
            or not isinstance(lowest, Mapping)
        ):
            return
        on_demand = parsing.number(lowest.get("uninterruptablePrice"))
        bid = parsing.number(lowest.get("minimumBidPrice"))
        list_price = parsing.number(row.get(f"{cloud}Price"))
        placeholder = placeholder_price(
            on_demand,
            list_price,
            bid,
            other_cloud=parsing.number(row.get(f"{_other(cloud)}Price")),
            spot=parsing.number(row.get(f"{cloud}SpotPrice")),
        )
        raw_name, gpu = self.gpu_of(row, parsing.number(row.get("memoryInGb")))
        offers = self.on_demand_and_spot(
            response,
            gpu,
            on_demand,
            bid,
            offer_id=f"{row['id']}/{cloud}/{gpu_count}x",
            pool_id=f"{row['id']}/{cloud}",
            gpu_name_raw=raw_name,
            gpu_count=gpu_count,
            available_gpus=_stock(lowest, gpu_count),
            extra=kept(
                {
                    "cloud": cloud,
                    "display_name": row.get("displayName"),
                    "stock_status": lowest.get("stockStatus"),
                    "list_price_per_gpu": list_price,
                }
            ),
        )
        for offer in offers:
            if offer.pricing_type == "on_demand" and placeholder:
                yield self.reject(
                    response, "placeholder_price", {**row, "cloud": cloud, "gpu_count": gpu_count}
                )
            else:
                yield offer

    def cluster_offers(self, response: Response, row: Mapping[str, Any]) -> Iterator[OfferItem]:
        """A cluster type's offers: one per data centre, a node of the type at `clusterPrice` per GPU."""
        price = parsing.number(row.get("clusterPrice"))
        node_gpus = parsing.number(row.get("maxGpuCount"))
        centers = row.get("nodeGroupDatacenters")
        if not price or not node_gpus or not isinstance(centers, list):
            return
        found = row.get("lowestPrice")
        lowest: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
        out_of_stock = any(lowest.get(field) is None for field in ("minVcpu", "minMemory", "stockStatus"))
        raw_name, gpu = self.gpu_of(row, parsing.number(row.get("memoryInGb")))
        for center in centers:
            where = center.get("id") if isinstance(center, Mapping) else None
            if not where:
                continue
            yield self.offer(
                response,
                gpu,
                offer_id=f"{row['id']}/cluster/{where}",
                pool_id=f"{row['id']}/cluster",
                region=str(where),
                gpu_name_raw=raw_name,
                gpu_count=int(node_gpus),
                price_amount=price,
                pricing_type="on_demand",
                available_gpus=0 if out_of_stock else None,
                extra=kept(
                    {
                        "cluster": True,
                        "display_name": row.get("displayName"),
                        "stock_status": lowest.get("stockStatus"),
                    }
                ),
            )

    # --- the REST catalog (RUNPOD_API_KEY) ----------------------------------------

    def _catalog_request(self, cloud: str, gpu_count: int) -> Request:
        query = urlencode(
            {"include": "AVAILABILITY", "product": "POD", "count": gpu_count, "cloud": cloud.upper()}
        )
        return self.request(
            f"{CATALOG_URL}?{query}",
            self.parse_catalog,
            headers=self._catalog_headers,
            meta={"cloud": cloud, "gpu_count": gpu_count},
        )

    def parse_catalog(self, response: Response) -> Iterator[OfferItem | RejectedOffer | Request]:
        cloud, gpu_count = response.meta["cloud"], response.meta["gpu_count"]
        gpus = dig(self.payload(response), "gpus")
        complete, _ = split_complete(gpus, ("id", "price", "maxCount"), "GPU types")
        for entry in complete:
            largest = _catalog_max_count(entry, cloud)
            if entry.get(cloud) and largest is not None and gpu_count <= largest:
                offers = partial(self.catalog_offers, response, entry, cloud, gpu_count)
                yield from self.judged(response, entry, offers)
        if gpu_count == 1:
            offered = [_catalog_max_count(entry, cloud) for entry in complete if entry.get(cloud)]
            for size in self.pod_sizes(cloud, offered)[1:]:
                yield self._catalog_request(cloud, size)
            following = CLOUDS[CLOUDS.index(cloud) + 1 :]
            if following:
                yield self._catalog_request(following[0], 1)

    def catalog_offers(
        self, response: Response, entry: Mapping[str, Any], cloud: str, gpu_count: int
    ) -> list[OfferItem | RejectedOffer]:
        offer = self.catalog_offer(response, entry, cloud, gpu_count)
        return [] if offer is None else [offer]

    def catalog_offer(
        self, response: Response, entry: Mapping[str, Any], cloud: str, gpu_count: int
    ) -> OfferItem | RejectedOffer | None:
        prices = entry["price"] if isinstance(entry["price"], Mapping) else {}
        price = parsing.number(prices.get(cloud))
        if not price:
            return None  # the type is listed for the other cloud only
        # The catalog quotes list prices only (no bid): its own price is the list price.
        if placeholder_price(price, price, None, other_cloud=parsing.number(prices.get(_other(cloud)))):
            raw = {**entry, "cloud": cloud, "gpu_count": gpu_count}
            return self.reject(response, "placeholder_price", raw)
        availability = entry.get("availability")
        if availability is None:
            stock = None
        elif availability == "NONE":
            stock = 0
        else:
            stock = gpu_count if availability in CATALOG_STOCK_LEVELS else None
        listed = entry.get("dataCenters")
        centers: list[Any] = listed if isinstance(listed, list) else []
        return self.offer(
            response,
            gpu_names.identify_first(
                [str(entry["id"]), str(entry.get("name") or "")], parsing.number(entry.get("memory"))
            ),
            offer_id=f"{entry['id']}/{cloud}/{gpu_count}x",
            pool_id=f"{entry['id']}/{cloud}",
            gpu_name_raw=str(entry["id"]),
            gpu_count=gpu_count,
            price_amount=price,
            price_currency="USD",
            price_per="gpu",
            billing_period="hour",
            pricing_type="on_demand",
            available_gpus=stock,
            extra=kept(
                {
                    "cloud": cloud,
                    "display_name": entry.get("name"),
                    "availability": availability,
                    "data_centers": [
                        str(dc.get("id")) for dc in centers if isinstance(dc, Mapping) and dc.get("id")
                    ]
                    or None,
                }
            ),
        )


def placeholder_price(
    quote: float | None,
    list_price: float | None,
    bid: float | None,
    *,
    other_cloud: float | None = None,
    spot: float | None = None,
) -> bool:
    """Whether RunPod's `quote` is its 0.5 stand-in for "cannot price this type", judged against the
    type's other prices in the same answer (module docstring): the same cloud's `list_price` and
    `spot` price, the `other_cloud`'s list price, the `bid`."""
    if quote != PLACEHOLDER_PRICE_USD:
        return False
    if spot is not None and spot > quote:
        return True  # a real price is never under its own spot price
    if other_cloud is not None and other_cloud > CLOUD_SPREAD * quote:
        return True
    if list_price:
        return list_price != PLACEHOLDER_PRICE_USD
    return bid is None


def _other(cloud: str) -> str:
    return CLOUDS[1 - CLOUDS.index(cloud)]


def _max_count(row: Mapping[str, Any], cloud: str) -> int | None:
    value = parsing.number(row.get(f"maxGpuCount{cloud.capitalize()}Cloud"))
    if value is None:
        value = parsing.number(row.get("maxGpuCount"))
    return int(value) if value is not None and value >= 1 else None


def _catalog_max_count(entry: Mapping[str, Any], cloud: str) -> int | None:
    counts = entry["maxCount"] if isinstance(entry["maxCount"], Mapping) else {}
    value = parsing.number(counts.get(cloud))
    return int(value) if value is not None and value >= 1 else None


def _stock(lowest: Mapping[str, Any], gpu_count: int) -> int | None:
    if "stockStatus" not in lowest:
        return None
    status = lowest["stockStatus"]
    if status is None:
        return 0
    return gpu_count if status in STOCK_LEVELS else None

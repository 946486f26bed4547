"""Lium (Bittensor subnet 51): its public node feed, an offer per GPU count a node can be rented at.

Source: `GET https://lium.io/api/public/v1/nodes` (no key, no query, one answer), the feed
dstackai/gpuhunt's Lium provider reads (`src/gpuhunt/providers/lium.py` @
168f678a944647ed73850333a5f1f1fbd155fc35: "documented at https://docs.lium.io/developers/public-nodes-feed
with a compatibility promise: fields are only ever added under /public/v1") and SkyPilot's catalog
fetcher too (skypilot-org/skypilot `sky/catalog/data_fetchers/fetch_lium.py`). The answer is
`{"generated_at", "count", "nodes": [...]}` (gpuhunt's `src/tests/providers/test_lium.py`, a feed
recorded 2026-09-10).

Per node, the fields gpuhunt reads:
- `id`: the node's own id (a UUID, also in its `rent_url`), stable from one day to the next: every
  offer id starts with it, `<id>/<n>x`, and it is the offers' `machine_id` (one node, one stock).
- `price_per_gpu_hour`: USD per GPU-hour, whatever part of the node is rented (gpuhunt prices n GPUs
  at n times it). The feed names no currency; every price lium.io shows is in $ (getcomputable/
  gpu-index's Lium source). Miners set it, residue and all (8.000300000000001): passed on as said.
  `price_per_node_hour` is the same price for the whole node (kept in `extra`).
- `gpu_count`, `available_gpu_count` and `min_rentable_gpu_count`: a node is rented in part, any
  GPU count from its minimum (default 1) up to its free GPUs, so a node of 8 H200 with 5 free and a
  minimum of 1 is five offers, 1 to 5 GPUs, each with the node's 5 free GPUs as its stock (one
  `machine_id`: the stock figures count the node's 5 once). A node with fewer free GPUs than its
  minimum cannot be rented now (gpuhunt leaves it out): it is one offer of its minimum with 0
  available, so that its price stays seen and its free GPUs are in `extra` (`node_free_gpus`).
- `tier`: "secure" keeps running until the renter stops it (on demand); "spot" is "taken back when
  its provider wants the node" (`sky/provision/lium/lium_utils.py`, `SECURE_TIER`; gpuhunt
  `spot=node.get("tier") == "spot"`): spot. Another tier promises what we cannot say: rejected
  `unknown_tier`, kept.
- `gpu_model` as the node reports it, with or without the vendor's words ("NVIDIA GeForce RTX 5090"
  beside "RTX 5090"), and `gpu_memory_gb` per GPU (B200 179, H200 140).
- `country_code`: the region.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from scrapy.http import Request, Response

from scrapers import parsing
from scrapers.items import OfferItem, PricingType
from scrapers.platform import PlatformSpider
from scrapers.rejects import RejectedOffer

NODES_URL = "https://lium.io/api/public/v1/nodes"
PRICING_OF_TIER: dict[str, PricingType] = {"secure": "on_demand", "spot": "spot"}
STAT_BELOW_MINIMUM = "lium/nodes_with_fewer_free_gpus_than_their_minimum"


class LiumSpider(PlatformSpider):
    name = "lium"
    sites = ("lium.io",)
    rows_at = ("nodes",)
    rows_name = "nodes"
    required = ("id", "gpu_count", "price_per_gpu_hour", "tier")
    gpu_name_fields = ("gpu_model",)
    kept = ("tier", "cpu_count", "ram_gb", "gpu_memory_gb", "price_per_node_hour", "min_rentable_gpu_count")
    offer_fields = {"price_currency": "USD", "price_per": "gpu", "billing_period": "hour"}

    def first_requests(self) -> Iterable[Request]:
        yield self.request(NODES_URL, self.parse_rows)

    def offers_of(self, response: Response, row: Mapping[str, Any]) -> Iterator[OfferItem | RejectedOffer]:
        pricing_type = PRICING_OF_TIER.get(str(row["tier"]).strip().lower())
        if pricing_type is None:
            yield self.reject(response, "unknown_tier", row)
            return
        node_gpus = int(parsing.number(row["gpu_count"]) or 0)
        free = parsing.stock_from_count(row.get("available_gpu_count"))
        smallest = max(1, int(parsing.number(row.get("min_rentable_gpu_count")) or 1))
        raw_name, gpu = self.gpu_of(row, parsing.number(row.get("gpu_memory_gb")))
        node = str(row["id"])
        counts, stock = rentable_counts(node_gpus, free, smallest)
        if free is not None and not stock:
            self.crawler.stats.inc_value(STAT_BELOW_MINIMUM)
        for gpu_count in counts:
            yield self.offer(
                response,
                gpu,
                offer_id=f"{node}/{gpu_count}x",
                machine_id=node,
                gpu_name_raw=raw_name,
                gpu_count=gpu_count,
                price_amount=parsing.number(row["price_per_gpu_hour"]),
                pricing_type=pricing_type,
                region=str(row.get("country_code") or "").strip() or None,
                available_gpus=stock,
                extra={"node_gpu_count": node_gpus, "node_free_gpus": free},
            )


def rentable_counts(node_gpus: int, free: int | None, smallest: int) -> tuple[list[int], int | None]:
    """The GPU counts a node is offered at, and the stock each offer carries.

    `free` GPUs of `node_gpus` (None: not said), rentable from `smallest` up: every count from the
    minimum to the free GPUs, each with the free GPUs as stock. Stock not said: every count up to the
    whole node, stock unknown. Fewer free than the minimum: the minimum alone, with 0 available.
    """
    if free is None:
        return list(range(smallest, max(smallest, node_gpus) + 1)), None
    free = min(free, node_gpus)
    if free < smallest:
        return [smallest], 0
    return list(range(smallest, free + 1)), free

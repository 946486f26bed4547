"""Lium (Bittensor subnet 51): its public node feed, one offer per GPU node, priced per node-hour.

Source: `GET https://lium.io/api/public/v1/nodes` (no key, no query, one answer), the feed
SkyPilot's catalog fetcher reads (skypilot-org/skypilot `sky/catalog/data_fetchers/fetch_lium.py`:
"Lium publishes its live node inventory on an unauthenticated endpoint"; `response.json()['nodes']`).

Per node, the fields that fetcher reads:
- `price_per_node_hour`: USD per node-hour, the whole machine. The feed names no currency; every
  price lium.io shows is in $ (getcomputable/gpu-index's Lium source), and SkyPilot's catalog
  writes the figure as its USD `Price` unchanged. Miners set it, residue and all (8.0003): passed
  on as said.
- `tier`: "secure" keeps running until the renter stops it (on demand); "spot" is "taken back when
  its provider wants the node" (`sky/provision/lium/lium_utils.py`, `SECURE_TIER`): spot. Another
  tier promises what we cannot say: rejected `unknown_tier`, kept.
- `available_gpu_count`: the node's free GPUs now, the offer's stock. A node is rented whole
  (fetch_lium.py leaves a partly used node out); the planner never rents more GPUs than an offer
  says are free, so a half-rented node is seen, counted in the market's free GPUs, and never planned.
- `gpu_model` as the node reports it, with or without the vendor's words ("NVIDIA GeForce RTX 5090"
  beside "RTX 5090", lium_utils.accelerator_name), and `gpu_memory_gb` per GPU (B200 179, H200 140).
- `country_code`: the region.
The feed names no node, so an offer's id is its shape and place (SkyPilot's instance type
`<gpu>_<n>x_<cpus>c_<ram>g`, plus country and tier), with "#2", "#3" for identical nodes in feed
order. SkyPilot keeps the cheapest node per shape and country; a market's every node is an offer here.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from scrapy.http import Request, Response

from scrapers import parsing
from scrapers.items import OfferItem, PricingType
from scrapers.platform import PlatformSpider
from scrapers.rejects import RejectedOffer

NODES_URL = "https://lium.io/api/public/v1/nodes"
PRICING_OF_TIER: dict[str, PricingType] = {"secure": "on_demand", "spot": "spot"}


class LiumSpider(PlatformSpider):
    name = "lium"
    rows_at = ("nodes",)
    rows_name = "nodes"
    required = ("gpu_count", "price_per_node_hour", "tier")
    gpu_name_fields = ("gpu_model",)
    kept = ("tier", "cpu_count", "ram_gb", "gpu_memory_gb")
    offer_fields = {"price_currency": "USD", "price_per": "instance", "billing_period": "hour"}

    def first_requests(self) -> Iterable[Request]:
        self._shapes_seen: Counter[str] = Counter()
        yield self.request(NODES_URL, self.parse_rows)

    def offers_of(self, response: Response, row: Mapping[str, Any]) -> Iterator[OfferItem | RejectedOffer]:
        pricing_type = PRICING_OF_TIER.get(str(row["tier"]).strip().lower())
        if pricing_type is None:
            yield self.reject(response, "unknown_tier", row)
            return
        gpu_count = int(parsing.number(row["gpu_count"]) or 0)
        raw_name, gpu = self.gpu_of(row, parsing.number(row.get("gpu_memory_gb")))
        region = str(row.get("country_code") or "").strip() or None
        yield self.offer(
            response,
            gpu,
            offer_id=self.node_id(row, raw_name, gpu_count, region),
            gpu_name_raw=raw_name,
            gpu_count=gpu_count,
            price_amount=parsing.number(row["price_per_node_hour"]),
            pricing_type=pricing_type,
            region=region,
            available_gpus=parsing.stock_from_count(row.get("available_gpu_count")),
        )

    def node_id(self, row: Mapping[str, Any], raw_name: str, gpu_count: int, region: str | None) -> str:
        """`<gpu>_<n>x_<cpus>c_<ram>g/<country>/<tier>`, numbered from the second identical node on."""
        shape = f"{raw_name}_{gpu_count}x_{row.get('cpu_count')}c_{row.get('ram_gb')}g/{region}/{row['tier']}"
        self._shapes_seen[shape] += 1
        seen = self._shapes_seen[shape]
        return shape if seen == 1 else f"{shape}#{seen}"

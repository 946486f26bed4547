"""Vast.ai: every rentable marketplace offer, on demand and at its minimum bid.

Source: `POST https://console.vast.ai/api/v0/bundles/` (no key), the search the
vast-ai CLI runs, with its default filters (verified hosts, not external,
rentable, not rented). There is no cursor: one request with a `limit`; a full
page means the market had more offers than we saw, and the crawl is partial.

Per offer (`num_gpus` GPUs, prices per offer in USD/hour):
- on demand: `dph_total` (GPU + the `allocated_storage` disk we ask for);
- spot: `min_bid`, the interruptible floor, when the host allows bids, plus the same disk
  (`min_bid` is the GPU part only): `dph_total - dph_base`, else `allocated_storage` x
  `storage_cost` ($/GB/month) / 720 h, as dstackai/gpuhunt prices it (`providers/vastai.py`,
  PR #242 "Include disk price in spot offer price"). Without either, no spot offer: a bid
  price without its disk would undercut every on-demand one by the disk alone.
Stock: each offer is one rentable slot, so its GPUs are available when it is
rentable and not rented. `gpu_ram` (MB per GPU) tells the 48 GB RTX 4090 from
the 24 GB one.
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

BUNDLES_URL = "https://console.vast.ai/api/v0/bundles/"
# SkyPilot asks for 10000, gpuhunt 3000; the whole verified market fits in 10000.
OFFER_LIMIT = 10_000
# The vast CLI's default disk (GiB); it is part of `dph_total`.
ALLOCATED_STORAGE_GIB = 5.0
HOURS_PER_DISK_MONTH = 30 * 24  # gpuhunt's conversion of Vast's $/GB/month storage_cost
MB_PER_GB = 1024  # Vast's "MB" are MiB: an 80 GB card reports ~81559
REQUIRED = ("id", "num_gpus", "gpu_name", "dph_total")
KEPT = (
    "machine_id",
    "host_id",
    "dph_base",
    "storage_cost",
    "reliability2",
    "verification",
    "cuda_max_good",
    "gpu_ram",
    "cpu_cores_effective",
    "cpu_ram",
    "disk_space",
    "inet_down",
    "inet_up",
)


class VastaiSpider(PlatformSpider):
    name = "vastai"

    def first_requests(self) -> Iterable[Request]:
        query = {
            "verified": {"eq": True},
            "external": {"eq": False},
            "rentable": {"eq": True},
            "rented": {"eq": False},
            "type": "on-demand",
            "allocated_storage": ALLOCATED_STORAGE_GIB,
            "order": [["score", "desc"]],
            "limit": OFFER_LIMIT,
        }
        yield self.request(BUNDLES_URL, self.parse_bundles, json_body=query)

    def parse_bundles(self, response: Response) -> Iterator[OfferItem | RejectedOffer]:
        rows = parsing.dig(self.json_payload(response), "offers")
        complete, rejected = self.complete_rows(response, rows, REQUIRED, "offers")
        yield from rejected
        for row in complete:
            yield from self.offers_of(response, row)
        if len(rows) >= OFFER_LIMIT:
            self.mark_partial(f"Vast returned {len(rows)} offers, the request's limit: the market has more")

    def offers_of(self, response: Response, row: Mapping[str, Any]) -> Iterator[OfferItem | RejectedOffer]:
        gpu_count = int(parsing.number(row["num_gpus"]) or 0)
        gpu_ram_mb = parsing.number(row.get("gpu_ram"))
        gpu = gpu_names.identify(str(row["gpu_name"]), gpu_ram_mb / MB_PER_GB if gpu_ram_mb else None)
        rentable = row.get("rentable")
        slot_free = None if rentable is None else bool(rentable) and not row.get("rented")
        shared = {
            "offer_id": str(row["id"]),
            "gpu_name_raw": str(row["gpu_name"]),
            "gpu_count": gpu_count,
            "price_currency": "USD",
            "price_per": "instance",
            "billing_period": "hour",
            # ", US" (no city) is as common as "Texas, US".
            "region": str(row.get("geolocation") or "").strip(", ") or None,
            "available_gpus": parsing.stock_from_slot(slot_free, gpu_count),
            "extra": parsing.kept(row, KEPT),
        }
        on_demand = parsing.number(row["dph_total"])
        if on_demand is None:
            yield self.reject(response, "price_missing", row)
        else:
            yield self.offer(response, gpu, price_amount=on_demand, pricing_type="on_demand", **shared)
        min_bid = parsing.number(row.get("min_bid"))
        disk = disk_per_hour(row)
        if min_bid is not None and disk is not None:
            spot = round(min_bid + disk, 6)
            yield self.offer(response, gpu, price_amount=spot, pricing_type="spot", **shared)


def disk_per_hour(row: Mapping[str, Any]) -> float | None:
    """USD per hour of the offer's disk, the part of `dph_total` that `dph_base` and `min_bid` leave out."""
    total, base = parsing.number(row.get("dph_total")), parsing.number(row.get("dph_base"))
    if total is not None and base is not None and total >= base:
        return total - base
    storage_cost = parsing.number(row.get("storage_cost"))  # USD per GB-month
    if storage_cost is not None and storage_cost >= 0:
        return ALLOCATED_STORAGE_GIB * storage_cost / HOURS_PER_DISK_MONTH
    return None

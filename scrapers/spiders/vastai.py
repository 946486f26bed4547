"""Vast.ai: every rentable marketplace offer, on demand and at its minimum bid.

Source: `POST https://console.vast.ai/api/v0/bundles/` (no key), the search the vast-ai CLI runs,
with its default filters (verified hosts, not external, rentable, not rented). There is no
cursor: one request with a `limit`; a full page means the market had more offers than we saw,
and the crawl is partial.

Per offer (`num_gpus` GPUs, prices per offer in USD/hour):
- on demand: `dph_total` (GPU + the `allocated_storage` disk we ask for);
- spot: `min_bid`, the interruptible floor, when the host allows bids, plus the same disk
  (`min_bid` is the GPU part only): `dph_total - dph_base`, else `allocated_storage` x
  `storage_cost` ($/GB/month) / 720 h, as dstackai/gpuhunt prices it (`providers/vastai.py`,
  PR #242 "Include disk price in spot offer price"). Without either, no spot offer: a bid
  price without its disk would undercut every on-demand one by the disk alone. A bid at or
  above the on-demand price is no spot offer either (`parsing.spot_price`, every spider's rule).
Stock: each offer is one rentable slot, so its GPUs are available when it is rentable and not
rented. `gpu_ram` (MB per GPU) tells the 48 GB RTX 4090 from the 24 GB one.

One machine is listed several times, as overlapping slices (its 4 GPUs, 2 of them, 1 of them; real
answers of 2026-08; ADR-020 of username-gigo-is-not-available/ai-compute-arbitrage-monitor).
Each offer says which: `machine_id` and `gpu_ids` (Vast's GPU ids, unique across the market), passed
on so the warehouse counts a machine's free GPUs once (README, "How stock is counted"). Vast's
`gpu_frac` is the offer's share of the machine's GPUs (vast-ai/vast-cli `vast.py`), not of one card:
every offer rents whole cards, so the items' `gpu_frac` is None and Vast's is `gpu_frac_of_machine`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from scrapy.http import Request, Response

from scrapers import parsing
from scrapers.items import OfferItem
from scrapers.platform import PlatformSpider
from scrapers.rows import kept

BUNDLES_URL = "https://console.vast.ai/api/v0/bundles/"
OFFER_LIMIT = 10_000  # SkyPilot asks for 10000, gpuhunt 3000; the whole verified market fits
ALLOCATED_STORAGE_GIB = 5.0  # the vast CLI's default disk; it is part of `dph_total`
HOURS_PER_DISK_MONTH = 30 * 24  # gpuhunt's conversion of Vast's $/GB/month storage_cost
MB_PER_GB = 1024  # Vast's "MB" are MiB: an 80 GB card reports ~81559
# The vast CLI's `search offers` defaults (verified hosts, not external, rentable, not rented), and a `limit`.
QUERY = {
    "verified": {"eq": True}, "external": {"eq": False}, "rentable": {"eq": True}, "rented": {"eq": False},
    "type": "on-demand", "allocated_storage": ALLOCATED_STORAGE_GIB, "order": [["score", "desc"]],
}  # fmt: skip


class VastaiSpider(PlatformSpider):
    name = "vastai"
    sites = ("vast.ai",)
    rows_at = ("offers",)
    rows_name = "offers"
    required = ("id", "num_gpus", "gpu_name", "dph_total")
    gpu_name_fields = ("gpu_name",)
    kept = (
        "host_id", "dph_base", "storage_cost", "reliability2", "verification",
        "cuda_max_good", "gpu_ram", "cpu_cores_effective", "cpu_ram", "disk_space", "inet_down", "inet_up",
    )  # fmt: skip
    offer_fields = {"price_currency": "USD", "price_per": "instance", "billing_period": "hour"}

    def first_requests(self) -> Iterable[Request]:
        yield self.request(BUNDLES_URL, self.parse_rows, json_body={**QUERY, "limit": OFFER_LIMIT})

    def offers_of(self, response: Response, row: Mapping[str, Any]) -> Iterator[OfferItem]:
        gpu_count = int(parsing.number(row["num_gpus"]) or 0)
        gpu_ram_mb = parsing.number(row.get("gpu_ram"))
        raw_name, gpu = self.gpu_of(row, gpu_ram_mb / MB_PER_GB if gpu_ram_mb else None)
        rentable = row.get("rentable")
        slot_free = None if rentable is None else bool(rentable) and not row.get("rented")
        min_bid, disk = parsing.number(row.get("min_bid")), disk_per_hour(row)
        yield from self.on_demand_and_spot(
            response,
            gpu,
            on_demand=parsing.number(row["dph_total"]),
            spot=None if min_bid is None or disk is None else round(min_bid + disk, 6),
            offer_id=str(row["id"]),
            gpu_name_raw=raw_name,
            gpu_count=gpu_count,
            # ", US" (no city) is as common as "Texas, US".
            region=str(row.get("geolocation") or "").strip(", ") or None,
            available_gpus=parsing.stock_from_slot(slot_free, gpu_count),
            machine_id=None if row.get("machine_id") is None else str(row["machine_id"]),
            gpu_ids=parsing.gpu_ids(row.get("gpu_ids")),
            # Whole cards: Vast's gpu_frac is the share of the machine (module docstring).
            extra=kept({"gpu_frac_of_machine": parsing.number(row.get("gpu_frac"))}),
        )

    def after_rows(self, response: Response, payload: Any, found: Sequence[Any]) -> Iterable[Request]:
        if len(found) >= OFFER_LIMIT:
            self.mark_partial(f"Vast returned {len(found)} offers, the request's limit: the market has more")
        return ()


def disk_per_hour(row: Mapping[str, Any]) -> float | None:
    """USD per hour of the offer's disk, the part of `dph_total` that `dph_base` and `min_bid` leave out."""
    total, base = parsing.number(row.get("dph_total")), parsing.number(row.get("dph_base"))
    if total is not None and base is not None and total >= base:
        return total - base
    storage_cost = parsing.number(row.get("storage_cost"))  # USD per GB-month
    if storage_cost is not None and storage_cost >= 0:
        return ALLOCATED_STORAGE_GIB * storage_cost / HOURS_PER_DISK_MONTH
    return None

"""矩池云 matpool (now matgo.cn): the public machine pools, no login.

Source: `GET https://matgo.cn/api/machine_pools?machine_category=0&page=N&per_page=100`
(price-sources.md §4.3: `machine_category` must be the integer 0). The answer is
`{"pools": [...], "pagination": {"num_pages": ...}}`, with no `code` field on success (an error is
`{"code": 500, "msg": ...}`); page 1 says how many pages follow, and those are asked for next.

Per pool (a machine type in one zone, rented in units; `machine` is a representative machine):
- GPUs per unit: `machine.hardware.gpu.gpuIds` (the GPUs one unit gets), else
  `machine.gpu.total / machine.unit.total` (the web client's `unitStep`: Aoblex/matpool-cli
  `docs/api-notes.md`, "rentHost ... unitStep = physicalTotal / unit.total"). A unit can hold
  several GPUs; a pool that says neither is rejected (`gpus_per_unit_unknown`), never priced as
  one GPU.
- price: `machine.hardware.discountPriceMillicent`, else `priceMillicent`, in 1/100000 CNY per
  unit-hour (quziang/matpool-gpu `scripts/matpool_inventory.py`: "hourly_cny_per_unit"), so the
  offer is priced per instance of that many GPUs.
- stock: `max_available_units`, the units rentable now, times the GPUs per unit.
- region: `domain`, the zone id, shown on the site as "1区" for 0.
- GPU: `gpu_model` (nvidia-smi's name, e.g. "NVIDIA GeForce RTX 4090"), else
  `hardware.gpu.gpuName`; `gpuRamMB` tells memory variants apart.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any
from urllib.parse import urlencode

from scrapy.http import Request, Response

from scrapers import parsing
from scrapers.items import OfferItem
from scrapers.platform import PlatformSpider
from scrapers.rejects import RejectedOffer
from scrapers.rows import dig, kept, value_at

POOLS_URL = "https://matgo.cn/api/machine_pools"
PER_PAGE = 100  # what the documented clients (quziang/matpool-gpu, matpool-cli) ask for
MB_PER_GB = 1024  # gpuRamMB is MiB: a 24 GB card reports 24576
HARDWARE = ("machine", "hardware")


def zone_name(domain: Any) -> str | None:
    """The zone as the site shows it: domain 0 is "1区"."""
    if domain is None:
        return None
    number = parsing.number(domain)
    if number is not None and number == int(number) and number >= 0:
        return f"{int(number) + 1}区"
    return str(domain).strip() or None


def gpus_per_unit(machine: Mapping[str, Any]) -> int | None:
    """How many GPUs one rentable unit of the pool's machine holds, or None when it does not say."""
    ids = value_at(machine, ("hardware", "gpu", "gpuIds"))
    if isinstance(ids, list) and ids:
        return len(ids)
    gpus = parsing.number(value_at(machine, ("gpu", "total")))
    units = parsing.number(value_at(machine, ("unit", "total")))
    if gpus and units and gpus % units == 0:
        return int(gpus // units)
    return None


class MatpoolSpider(PlatformSpider):
    name = "matpool"
    sites = ("matgo.cn",)
    rows_at = ("pools",)
    rows_name = "machine pools"
    max_pages = 20  # of 100 pools: the recording's takes 2 (`num_pages` 2)
    required = ("resource_pool_id", "machine")
    gpu_name_fields = ("gpu_model", (*HARDWARE, "gpu", "gpuName"))
    envelope = parsing.CodeEnvelope(ok=(0,))
    offer_fields = {"price_currency": "CNY", "price_per": "instance", "billing_period": "hour"}

    def first_requests(self) -> Iterable[Request]:
        yield self.page_request(1)

    def page_request(self, page: int) -> Request:
        query = urlencode({"machine_category": 0, "page": page, "per_page": PER_PAGE})
        return self.request(f"{POOLS_URL}?{query}", self.parse_rows)

    def after_rows(self, response: Response, payload: Any, found: Sequence[Any]) -> Iterable[Request]:
        # After the offers: a page that lacks its pagination still delivers what it has.
        return self.later_pages(response, dig(payload, "pagination", "num_pages", expect=int))

    def offers_of(self, response: Response, row: Mapping[str, Any]) -> Iterator[OfferItem | RejectedOffer]:
        machine = row["machine"] if isinstance(row["machine"], Mapping) else {}
        listed = parsing.from_minor_units(
            value_at(row, (*HARDWARE, "priceMillicent")), parsing.HUNDRED_THOUSANDTHS
        )
        discounted = parsing.from_minor_units(
            value_at(row, (*HARDWARE, "discountPriceMillicent")), parsing.HUNDRED_THOUSANDTHS
        )
        per_unit = gpus_per_unit(machine)
        if per_unit is None:
            yield self.reject(response, "gpus_per_unit_unknown", row)
            return
        try:
            units = parsing.stock_from_count(row.get("max_available_units"))
        except parsing.LayoutChanged:
            yield self.reject(response, "stock_invalid", row)
            return
        ram_mb = parsing.number(value_at(row, (*HARDWARE, "gpu", "gpuRamMB")))
        raw_name, gpu = self.gpu_of(row, ram_mb / MB_PER_GB if ram_mb else None)
        extra = {
            "agent_id": machine.get("agentId"),
            "available_units": units,
            "driver_version": row.get("driver_version"),
            "gpu_ids": value_at(row, (*HARDWARE, "gpu", "gpuIds")),
            "cpu_name": value_at(row, (*HARDWARE, "machine", "cpuName")),
            "ram_mb": value_at(row, (*HARDWARE, "machine", "ramMB")),
            "disk_gb": value_at(row, (*HARDWARE, "machine", "diskGB")),
            "price_cny_list": listed,
            "price_cny_discounted": discounted,
        }
        yield self.offer(
            response,
            gpu,
            offer_id=str(row["resource_pool_id"]),
            gpu_name_raw=raw_name,
            gpu_count=per_unit,
            # A discount price of zero or less is no rental price: the list price applies.
            price_amount=discounted if discounted is not None and discounted > 0 else listed,
            pricing_type="on_demand",
            region=zone_name(row.get("domain")),
            available_gpus=None if units is None else units * per_unit,
            extra=kept(extra),
        )

"""矩池云 matpool (now matgo.cn): the public machine pools, no login.

Source: `GET https://matgo.cn/api/machine_pools?machine_category=0&page=N&per_page=100`
(price-sources.md §4.3: `machine_category` must be the integer 0). The answer is
`{"pools": [...], "pagination": {"num_pages": ...}}`, with no `code` field on success;
page 1 says how many pages follow, and those are asked for next.

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

from collections.abc import Iterable, Iterator, Mapping
from typing import Any
from urllib.parse import urlencode

from scrapy.http import Request, Response

from scrapers import parsing
from scrapers.items import OfferItem
from scrapers.platform import PlatformSpider
from scrapers.rejects import RejectedOffer
from sizing import gpu_names

POOLS_URL = "https://matgo.cn/api/machine_pools"
PER_PAGE = 100  # what the documented clients (quziang/matpool-gpu, matpool-cli) ask for
MB_PER_GB = 1024  # gpuRamMB is MiB: a 24 GB card reports 24576
REQUIRED = ("resource_pool_id", "machine")


def page_url(page: int) -> str:
    return f"{POOLS_URL}?{urlencode({'machine_category': 0, 'page': page, 'per_page': PER_PAGE})}"


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
    ids = _mapping(_mapping(machine.get("hardware")).get("gpu")).get("gpuIds")
    if isinstance(ids, list) and ids:
        return len(ids)
    gpus = parsing.number(_mapping(machine.get("gpu")).get("total"))
    units = parsing.number(_mapping(machine.get("unit")).get("total"))
    if gpus and units and gpus % units == 0:
        return int(gpus // units)
    return None


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


class MatpoolSpider(PlatformSpider):
    name = "matpool"

    def first_requests(self) -> Iterable[Request]:
        yield self.request(page_url(1), self.parse_pools, meta={"page": 1})

    def parse_pools(self, response: Response) -> Iterator[OfferItem | RejectedOffer | Request]:
        payload = self.json_payload(response)
        if isinstance(payload, Mapping) and "pools" not in payload:
            # Success has no code; an answer without pools that carries one is the error.
            parsing.check_code(payload, ok_codes=())
        pools = parsing.dig(payload, "pools")
        complete, rejected = self.complete_rows(response, pools, REQUIRED, "machine pools")
        yield from rejected
        for pool in complete:
            yield self.pool_offer(response, pool)
        # After the offers: a page that lacks its pagination still delivers what it has.
        if response.meta["page"] == 1:
            pages = parsing.dig(payload, "pagination", "num_pages", expect=int)
            for page in range(2, pages + 1):
                yield self.request(page_url(page), self.parse_pools, meta={"page": page})

    def pool_offer(self, response: Response, pool: Mapping[str, Any]) -> OfferItem | RejectedOffer:
        machine = pool["machine"] if isinstance(pool["machine"], Mapping) else {}
        hardware = machine.get("hardware") or {}
        gpu_info = hardware.get("gpu") or {}
        host = hardware.get("machine") or {}
        raw_name = str(pool.get("gpu_model") or gpu_info.get("gpuName") or "").strip()
        if not raw_name:
            return self.reject(response, "record_incomplete", pool)
        listed = parsing.from_minor_units(hardware.get("priceMillicent"), parsing.HUNDRED_THOUSANDTHS)
        discounted = parsing.from_minor_units(
            hardware.get("discountPriceMillicent"), parsing.HUNDRED_THOUSANDTHS
        )
        # A discount price of zero or less is no rental price: the list price applies.
        price = discounted if discounted is not None and discounted > 0 else listed
        if price is None:
            return self.reject(response, "price_missing", pool)
        per_unit = gpus_per_unit(machine)
        if per_unit is None:
            return self.reject(response, "gpus_per_unit_unknown", pool)
        try:
            units = parsing.stock_from_count(pool.get("max_available_units"))
        except parsing.LayoutChanged:
            return self.reject(response, "stock_invalid", pool)
        ram_mb = parsing.number(gpu_info.get("gpuRamMB"))
        gpu = gpu_names.identify(raw_name, ram_mb / MB_PER_GB if ram_mb else None)
        extra = {
            "agent_id": machine.get("agentId"),
            "available_units": units,
            "driver_version": pool.get("driver_version"),
            "gpu_ids": gpu_info.get("gpuIds"),
            "cpu_name": host.get("cpuName"),
            "ram_mb": host.get("ramMB"),
            "disk_gb": host.get("diskGB"),
            "price_cny_list": listed,
            "price_cny_discounted": discounted,
        }
        return self.offer(
            response,
            gpu,
            offer_id=str(pool["resource_pool_id"]),
            gpu_name_raw=raw_name,
            gpu_count=per_unit,
            price_amount=price,
            price_currency="CNY",
            price_per="instance",
            billing_period="hour",
            pricing_type="on_demand",
            region=zone_name(pool.get("domain")),
            available_gpus=None if units is None else units * per_unit,
            extra=parsing.kept(extra),
        )

"""CloudRift: its instance-types list, one offer per variant and datacenter, with free nodes per datacenter.

Source: `POST https://api.cloudrift.ai/api/v1/instance-types/list` with
`{"version": "2025-03-21", "data": {"selector": {"ByServiceAndLocation": {"services": ["vm"]}}}}`,
the body dstackai/gpuhunt's offline CloudRift provider sends, keyless, from CI
(`src/gpuhunt/providers/cloudrift.py`; dstack's and SkyPilot's clients send the same selector with
a later version date and a key when they have one). Every answer is `{"version": ..., "data": ...}`;
the API may answer a bare JSON string instead, which gpuhunt passes on as the error it is.

`data.instance_types[]` names a GPU (`brand_short`: "RTX PRO 6000", "RTX 5090", "V100") and lists
`variants[]`, the rentable sizes. Per variant:
- `cost_per_hour`: US cents per instance-hour (gpuhunt and SkyPilot divide it by 100; "money is
  in cents everywhere", a public integration note that read the live listing); billed per second.
- `vram`: bytes per GPU (gpuhunt's `gpu_memory = round(vram / 1024**3)`, a per-GPU figure).
- `nodes_per_dc`: the datacenters that host the variant (gpuhunt and SkyPilot make one offer per
  key); `available_nodes_per_dc`: free nodes there (dstack's compute reads `count > 0` as
  available). One node is one instance of the variant, so its free GPUs are free nodes x
  `gpu_count`. A datacenter that `available_nodes_per_dc` does not name is unknown stock, not zero.
  The variants of one instance type are sizes of one machine type (`rtx59-8c-ny.1`, `.2`): whether
  their free nodes in a datacenter are the same machines no client says, so they are one pool
  (`pool_id` `<datacenter>/<instance type>`) and the warehouse counts its largest variant's free
  GPUs, a lower bound, never the sum of sizes that may share machines.
A variant placed in no datacenter cannot be rented: no offer (gpuhunt makes none), counted in
the stats. `gpu_count` 0 is a CPU variant. No spot, no longer terms.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from scrapy.http import Request, Response

from scrapers import parsing
from scrapers.items import OfferItem
from scrapers.platform import PlatformSpider

INSTANCE_TYPES_URL = "https://api.cloudrift.ai/api/v1/instance-types/list"
API_VERSION = "2025-03-21"  # gpuhunt's CLOUDRIFT_API_VERSION; the public listing answers its own
SELECTOR = {"selector": {"ByServiceAndLocation": {"services": ["vm"]}}}
BYTES_PER_GIB = 1024**3
STAT_NOT_PLACED = "cloudrift/variants_in_no_datacenter"


class CloudriftSpider(PlatformSpider):
    name = "cloudrift"
    sites = ("cloudrift.ai",)
    rows_at = ("data", "instance_types")
    rows_name = "instance types"
    required = ("variants",)
    gpu_name_fields = ("brand_short",)
    kept = ("name",)
    offer_fields = {
        "price_currency": "USD",
        "price_per": "instance",
        "billing_period": "hour",
        "pricing_type": "on_demand",
    }

    def first_requests(self) -> Iterable[Request]:
        yield self.request(
            INSTANCE_TYPES_URL, self.parse_rows, json_body={"version": API_VERSION, "data": SELECTOR}
        )

    def check_payload(self, payload: Any) -> None:
        if isinstance(payload, str):
            raise parsing.ErrorEnvelope(f"the platform answered with an error: {payload[:200]}")
        super().check_payload(payload)

    def offers_of(self, response: Response, row: Mapping[str, Any]) -> Iterator[OfferItem]:
        variants = row["variants"]
        if not isinstance(variants, list):
            raise parsing.LayoutChanged(f"variants of {row.get('name')!r} is not a list: {variants!r}")
        for variant in variants:
            gpu_count = int(parsing.number(variant.get("gpu_count")) or 0)
            if gpu_count == 0:
                continue  # a CPU variant
            vram = parsing.number(variant.get("vram"))
            raw_name, gpu = self.gpu_of(row, vram / BYTES_PER_GIB if vram else None)
            placed = _counts(variant.get("nodes_per_dc")) or _counts(variant.get("available_nodes_per_dc"))
            if not placed:
                self.crawler.stats.inc_value(STAT_NOT_PLACED)
                continue
            free = _counts(variant.get("available_nodes_per_dc"))
            for datacenter in placed:
                free_nodes = parsing.stock_from_count(free.get(datacenter))
                yield self.offer(
                    response,
                    gpu,
                    offer_id=f"{datacenter}/{variant.get('name')}",
                    pool_id=f"{datacenter}/{row.get('name')}",
                    gpu_name_raw=raw_name,
                    gpu_count=gpu_count,
                    price_amount=parsing.from_minor_units(variant.get("cost_per_hour"), parsing.CENTS),
                    region=datacenter,
                    available_gpus=None if free_nodes is None else free_nodes * gpu_count,
                    extra={
                        "variant": variant.get("name"),
                        "cpu_count": variant.get("cpu_count"),
                        "dram_gib": _gib(variant.get("dram")),
                        "disk_gib": _gib(variant.get("disk")),
                    },
                )


def _counts(value: Any) -> dict[str, Any]:
    """A `{datacenter: count}` map; anything else (missing, null) is none."""
    return dict(value) if isinstance(value, Mapping) else {}


def _gib(value: Any) -> float | None:
    amount = parsing.number(value)
    return None if amount is None else round(amount / BYTES_PER_GIB, 1)

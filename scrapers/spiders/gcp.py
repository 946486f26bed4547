"""Google Cloud GPUs, from SkyPilot's hosted GCP catalog (the family in `skypilot_catalog.py`).

GCP's table prices the GPUs and the VMs apart (skypilot-org/skypilot
`sky/catalog/data_fetchers/fetch_gcp.py` @ 21fd55418804a41d20fe7563db9c808763159722): a VM row
(`InstanceType`, vCPUs, memory, the CPU and RAM price of the machine type) and a GPU row
(`AcceleratorName`, `AcceleratorCount`, `GpuInfo`, the price of the GPUs alone, `unit_price *
AcceleratorCount`) per zone. What a user pays for the GPUs is both: SkyPilot picks the GPU row's
host in the same region and zone (`gcp_catalog.list_accelerators` @
005261080a6b8102f3d95ff2147a855250f40272; `scrapers.skypilot.gcp_host`) and adds the two `Price`s
and the two `SpotPrice`s (pandas: no sum when either is missing). So does this spider: one offer
per GPU row, per instance, `extra` keeping both parts; a GPU row whose zone lacks its host is
rejected `host_missing`, as SkyPilot drops it. A GPU part that is no positive price makes no
offer: the host alone is no GPU quote. Host rows may cost 0 (fetch_gcp.py: "GCP does not have A4
instance in SKUs API yet"). TPU rows are priced without a host and are no GPUs: skipped.
Prices: USD; on demand and spot (GCP's Spot VMs, the `Preemptible` SKUs); no stock.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from scrapy.http import Response

from scrapers import parsing, skypilot
from scrapers.rejects import RejectedOffer
from scrapers.spiders.skypilot_catalog import Result, SkyPilotCatalogSpider
from sizing import gpu_names

# The board GCP's machine types carry, which its accelerator names leave out. GCP's GPU platforms
# table (cloud.google.com/compute/docs/gpus; as copied into huggingface.co/spaces/Elfsong/gcp_allocator
# app.py, commit 3a1a5af) gives "H100 80GB | 80 GB HBM3 @ 3.35 TBps | NVLink Full Mesh @ 900 GBps" and
# "A100 40GB/80GB | ... | NVLink Full Mesh @ 600 GBps": HBM3 at 3.35 TB/s and a 900 GB/s NVLink mesh
# are the H100 SXM5 board's, a full NVLink mesh of A100s is NVSwitch, the SXM4 board's (PCIe cards
# pair by bridges only). H100-MEGA is the A3 Mega machine's H100 (same board). Memory: GpuInfo.
GCP_BOARDS = {"A100": "A100 SXM", "A100-80GB": "A100 SXM", "H100": "H100 SXM", "H100-MEGA": "H100 SXM"}
PRICE_DECIMALS = 5  # fetch_gcp.py's PRICE_ROUNDING: the sum of two such prices, without float noise


class GcpSpider(SkyPilotCatalogSpider):
    name = "gcp"
    cloud = "gcp"
    required = ("AcceleratorName", "AcceleratorCount", "Region", "AvailabilityZone", "Price")
    gpu_name_fields = ("AcceleratorName",)
    zone_column = "AvailabilityZone"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._hosts: dict[tuple[str, str], list[Mapping[str, Any]]] = {}

    def is_gpu_row(self, row: Mapping[str, Any]) -> bool:
        return super().is_gpu_row(row) and not str(row.get("AcceleratorName") or "").lower().startswith(
            "tpu-"
        )

    def complete_rows(
        self, response: Response, found: Sequence[Any]
    ) -> tuple[list[Mapping[str, Any]], list[RejectedOffer]]:
        self._hosts = skypilot.gcp_hosts_by_zone(found)
        return super().complete_rows(response, found)

    def row_offers(self, response: Response, row: Mapping[str, Any], count: int) -> Iterator[Result]:
        accelerator, region, zone = (
            str(row["AcceleratorName"]),
            str(row["Region"]),
            str(row["AvailabilityZone"]),
        )
        host = skypilot.gcp_host(accelerator, count, self._hosts.get((region.lower(), zone.lower()), ()))
        if host is None:
            yield self.reject(response, "host_missing", row)
            return
        parts = {
            "gpu_price_usd": parsing.number(row["Price"]),
            "gpu_spot_price_usd": parsing.number(row.get("SpotPrice")),
            "host_price_usd": parsing.number(host.get("Price")),
            "host_spot_price_usd": parsing.number(host.get("SpotPrice")),
        }
        names = [GCP_BOARDS.get(accelerator, ""), accelerator]
        gpu = gpu_names.identify_first(names, self.memory_gb(row, count))
        extra = {
            "zone": zone,
            "host_instance_type": host["InstanceType"],
            "host_vcpus": parsing.number(host.get("vCPUs")),
            "host_memory_gib": parsing.number(host.get("MemoryGiB")),
            **{key: value for key, value in parts.items() if value is not None},
        }
        yield from self.on_demand_and_spot(
            response,
            gpu,
            on_demand=combined(parts["gpu_price_usd"], parts["host_price_usd"]),
            spot=combined(parts["gpu_spot_price_usd"], parts["host_spot_price_usd"]),
            offer_id=f"{host['InstanceType']}+{accelerator}:{count}@{zone}",
            gpu_name_raw=accelerator,
            gpu_count=count,
            region=region,
            extra=extra,
        )


def combined(gpu: float | None, host: float | None) -> float | None:
    """The instance price: the GPUs' and the host's, when both are quoted and the GPUs' is a price."""
    if gpu is None or gpu <= 0 or host is None:
        return None
    return round(gpu + host, PRICE_DECIMALS)

"""SkyPilot catalog rows -> offers: the one reader of a cloud's `vms.csv`.

The catalog spiders (`scrapers/spiders/skypilot_catalog.py`, `gcp.py`) and `gpuplan import skypilot`
(`scrapers/history/skypilot.py`) both turn rows into offers here, so a file reads the same whichever
way it arrives. How the cells read (`GpuInfo`'s dialects, GCP's host VMs) is `scrapers.skypilot`.
As SkyPilot reads every table (skypilot-org/skypilot `sky/catalog/common.py`
`get_hourly_cost_impl`, `list_accelerators_impl` @ 005261080a6b8102f3d95ff2147a855250f40272):

- `Price` and `SpotPrice` are USD per hour of the whole instance of `AcceleratorCount` GPUs. An
  empty `SpotPrice` is no spot offer, one at or above `Price` neither (`parsing.spot_price`); a
  row with a `SpotPrice` and no `Price` (Prime Intellect's `__SPOT` types) is a spot offer alone.
  A row with neither makes an on-demand offer without a price, which the item checks reject.
- GPU memory: `GpuInfo`'s `SizeInMiB` / 1024 per GPU, unless a cloud's fetcher writes something
  else there (Shadeform, Prime Intellect, Vast: their tables below).
- Rows with no accelerator are no GPU offers (CPU instances; GCP's host VMs and TPUs): skipped.
- Stock: no table counts GPUs, so `available_gpus` is None (unknown).

A cloud with quirks has a `CatalogTable` subclass naming its `platform`; every other cloud reads
with the base (`CatalogTable.of`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from scrapers import parsing, rows, skypilot
from scrapers.items import OfferItem
from sizing import gpu_names
from sizing.gpu_names import GpuIdentity

CATALOG = "skypilot-catalog/v8"  # every offer's `catalog`: where it was read, not the cloud's own API


@dataclass(frozen=True)
class Refused:
    """A row read but not passed on as an offer: `reason` is the spiders' rejection code."""

    reason: str
    row: Mapping[str, Any]


Result = OfferItem | Refused
Build = Callable[..., OfferItem]


class CatalogTable:
    """One cloud's table as of one reading (`observed_at`, `source_url`): the generic reading."""

    platform: ClassVar[str | None] = None  # the platform slug a subclass reads; None: any other cloud
    required: ClassVar[tuple[str, ...]] = ("InstanceType", "AcceleratorName", "AcceleratorCount")
    # The card's name first (the raw name kept), then the machine's, which may state the form.
    gpu_name_fields: ClassVar[tuple[rows.Field, ...]] = ("AcceleratorName", "InstanceType")
    zone_column: ClassVar[str | None] = None  # a column more precise than `Region`, part of the id
    offer_fields: ClassVar[Mapping[str, Any]] = {
        "price_currency": "USD",
        "price_per": "instance",
        "billing_period": "hour",
        "catalog": CATALOG,
    }

    def __init__(
        self, platform: str, observed_at: str, source_url: str, build: Build | None = None, **fields: Any
    ) -> None:
        """`fields` are OfferItem fields every offer of this reading carries (an import's
        `catalog_date`); `build(gpu, **fields)` makes each offer (a spider's own `offer`, which
        stamps the answer), by default an OfferItem of `platform`, `observed_at` and `source_url`."""
        self.platform_name, self.observed_at, self.source_url = platform, observed_at, source_url
        self.fields = {**self.offer_fields, **fields}
        self.build = build or self.item

    @staticmethod
    def of(platform: str) -> type[CatalogTable]:
        """The table class that reads `platform`'s catalog: its own, else the generic one."""
        pending: list[type[CatalogTable]] = [CatalogTable]
        while pending:
            table = pending.pop()
            if table.platform == platform:
                return table
            pending.extend(table.__subclasses__())
        return CatalogTable

    def learn(self, found: Iterable[Mapping[str, Any]]) -> None:
        """What a row needs from the rest of the table (GCP's host VMs), from every row, before any
        `offers_of`. The generic table needs nothing."""

    def is_gpu_row(self, row: Mapping[str, Any]) -> bool:
        """A row that offers GPUs: it names an accelerator or counts some (one that counts some but
        names none is an incomplete GPU row, refused, not skipped)."""
        count = parsing.number(row.get("AcceleratorCount"))
        return bool(row.get("AcceleratorName")) or (count is not None and count > 0)

    def is_complete(self, row: Mapping[str, Any]) -> bool:
        """Whether a GPU row carries what `offers_of` reads (else it is refused `record_incomplete`)."""
        return rows.is_complete(row, self.required, self.gpu_name_fields)

    def read_gpu_row(self, row: Mapping[str, Any]) -> Iterator[Result]:
        """What one row that offers GPUs (`is_gpu_row`; the others are no offers, skipped and
        counted) is: its offers or why not. The importer's path; the spider kit checks completeness
        on its own (`split_complete`)."""
        if not self.is_complete(row):
            yield Refused("record_incomplete", row)
            return
        yield from self.offers_of(row)

    def offers_of(self, row: Mapping[str, Any]) -> Iterator[Result]:
        """The offers (and refusals) of one complete GPU row."""
        count = skypilot.gpu_count(row["AcceleratorCount"])
        if count is None:
            yield Refused("gpu_count_invalid", row)
            return
        yield from self.row_offers(row, count)

    def row_offers(self, row: Mapping[str, Any], count: int) -> Iterator[Result]:
        """The offers of one GPU row of `count` GPUs."""
        names = rows.named(row, self.gpu_name_fields)
        on_demand, spot = parsing.number(row.get("Price")), parsing.number(row.get("SpotPrice"))
        fields = {
            "offer_id": self.offer_id(row, str(row["InstanceType"])),
            "gpu_name_raw": names[0],
            "gpu_count": count,
            "region": row.get("Region") or None,
            "extra": self.extra_of(row),
        }
        gpu = self.identity(names, self.memory_gb(row, count))
        if on_demand is None and spot is not None:
            yield self.offer(gpu, price_amount=spot, pricing_type="spot", **fields)
        else:
            yield from self.on_demand_and_spot(gpu, on_demand, spot, **fields)

    def identity(self, names: Sequence[str], memory_gb: float | None) -> GpuIdentity:
        """The card, from its name with the form the machine names state (`parsing.form_in_name`),
        then from each name alone."""
        return _identity(tuple(names), memory_gb)

    def memory_gb(self, row: Mapping[str, Any], count: int) -> float | None:
        """Per-GPU memory: `SizeInMiB` is MiB per GPU (SkyPilot divides it by 1024)."""
        mib = skypilot.cell_memory_mib(row.get("GpuInfo"))
        return None if mib is None else mib / skypilot.MIB_PER_GIB

    def offer_id(self, row: Mapping[str, Any], unit: str) -> str:
        """`unit@region[/zone]`: a type repeats per region, some with other specs per region."""
        region, zone = row.get("Region"), row.get(self.zone_column) if self.zone_column else None
        return unit + (f"@{region}" if region else "") + (f"/{zone}" if zone else "")

    def extra_of(self, row: Mapping[str, Any]) -> dict[str, Any]:
        extra = {
            "instance_type": row.get("InstanceType"),
            "vcpus": parsing.number(row.get("vCPUs")),
            "memory_gib": parsing.number(row.get("MemoryGiB")),
            "zone": row.get(self.zone_column) if self.zone_column else None,
        }
        return {key: value for key, value in extra.items() if value is not None}

    def offer(self, gpu: GpuIdentity, **fields: Any) -> OfferItem:
        return self.build(gpu, **{**self.fields, **fields})

    def item(self, gpu: GpuIdentity, **fields: Any) -> OfferItem:
        return OfferItem(
            platform=self.platform_name,
            observed_at=self.observed_at,
            source_url=self.source_url,
            gpu_model=gpu.gpu_model,
            gpu_memory_gb=gpu.gpu_memory_gb,
            gpu_form=gpu.gpu_form,
            **fields,
        )

    def on_demand_and_spot(
        self, gpu: GpuIdentity, on_demand: float | None, spot: float | None, **fields: Any
    ) -> Iterator[OfferItem]:
        """On demand always (a missing price is the item checks' to reject), spot when
        `parsing.spot_price` says it is one."""
        yield self.offer(gpu, price_amount=on_demand, pricing_type="on_demand", **fields)
        spot = parsing.spot_price(on_demand, spot)
        if spot is not None:
            yield self.offer(gpu, price_amount=spot, pricing_type="spot", **fields)


# A catalog repeats each machine type over its regions and zones: its card is read once per
# distinct (names, memory). GpuIdentity is frozen, so the rows share one.
@functools.lru_cache(maxsize=65536)
def _identity(names: tuple[str, ...], memory_gb: float | None) -> GpuIdentity:
    form = parsing.form_in_name(*names)
    return gpu_names.identify_first([*([f"{names[0]} {form}"] if form else []), *names], memory_gb)


class ShadeformTable(CatalogTable):
    """Shadeform's fetcher (`fetch_shadeform.py` @ 6dd899d53b9623a37e9f34a452d0c8c924892eff) writes
    `'SizeInMiB': int(config['vram_per_gpu_in_gb'])`: GB in the field named MiB; `InstanceType` is
    `<cloud>_<type>`, and it keeps only types listed as available somewhere."""

    platform = "shadeform"
    LARGEST_GPU_GB = 1024  # no card has a terabyte: a figure above is a fixed fetcher's real MiB

    def memory_gb(self, row: Mapping[str, Any], count: int) -> float | None:
        size = skypilot.cell_memory_mib(row.get("GpuInfo"))
        if size is None:
            return None
        return size if size <= self.LARGEST_GPU_GB else size / skypilot.MIB_PER_GIB

    def extra_of(self, row: Mapping[str, Any]) -> dict[str, Any]:
        upstream = str(row.get("InstanceType") or "").partition("_")[0]
        return {**super().extra_of(row), "upstream_cloud": upstream, "listed_as_available": True}


class PrimeintellectTable(CatalogTable):
    """The stored v8 table (with `UpstreamCloudId`, `AvailabilityZone`: the data center) was written
    by a fetcher no longer public; its `Gpus[0].MemoryInfo.SizeInMiB` is the whole machine's GPU
    memory (655360 for 8 x 80 GB). The later fetcher (`fetch_primeintellect.py` @
    f00893d3287167e36bea67ac477d2bdfb5693828: "gpuMemory is the TOTAL across the box") writes the
    per-GPU figure in a top-level `MemoryInfo`, with no `Gpus` list: both are read."""

    platform = "primeintellect"
    gpu_name_fields = ("AcceleratorName", "InstanceType", "UpstreamCloudId")
    zone_column = "AvailabilityZone"

    def memory_gb(self, row: Mapping[str, Any], count: int) -> float | None:
        info = skypilot.gpu_info(row.get("GpuInfo"))
        if info is not None and "Gpus" in info:
            whole = skypilot.gpu_memory_mib(info)
            return None if whole is None else whole / count / skypilot.MIB_PER_GIB
        per_gpu = skypilot.gpu_memory_mib({"Gpus": [info]}) if info else None
        return None if per_gpu is None else per_gpu / skypilot.MIB_PER_GIB

    def extra_of(self, row: Mapping[str, Any]) -> dict[str, Any]:
        provider = str(row.get("InstanceType") or "").partition("__")[0]
        cloud_id = row.get("UpstreamCloudId")
        return {
            **super().extra_of(row),
            "provider": provider,
            **({"upstream_cloud_id": cloud_id} if cloud_id else {}),
        }


class SeewebTable(CatalogTable):
    """Seeweb's fetcher (`fetch_seeweb.py` @ 34de707e78bad96810f49d2813cf1dfd18155bf7):
    `price = float(plan.hourly_price)` from Seeweb's own API with no currency: read as EUR, the
    currency Seeweb bills in (assumed); a row per region the plan is available in, or one with an
    empty `Region` when there is none; `SizeInMiB` 0 for a card its VRAM table lacks."""

    platform = "seeweb"
    offer_fields: ClassVar[Mapping[str, Any]] = {**CatalogTable.offer_fields, "price_currency": "EUR"}

    def extra_of(self, row: Mapping[str, Any]) -> dict[str, Any]:
        return {**super().extra_of(row), **({} if row.get("Region") else {"no_region_listed": True})}


class VastTable(CatalogTable):
    """SkyPilot's Vast fetcher writes the whole instance's GPU memory into `SizeInMiB`
    (vast_vms_2026-04-29.csv: 1x RTX5090 32607 MiB, 2x 65214 MiB), where the catalog spec and
    Lambda's fetcher write it per GPU (lambda_vms: 1x and 8x H100 both 81920). Read by imports only:
    the `vastai` spider reads Vast's own API."""

    platform = "vastai"

    def memory_gb(self, row: Mapping[str, Any], count: int) -> float | None:
        per_instance = super().memory_gb(row, count)
        return None if per_instance is None else per_instance / count


# --- GCP: a GPU row priced with its host VM ---------------------------------------------

# The board GCP's machine types carry, which its accelerator names leave out. GCP's GPU platforms
# table (cloud.google.com/compute/docs/gpus; as copied into huggingface.co/spaces/Elfsong/gcp_allocator
# app.py, commit 3a1a5af) gives "H100 80GB | 80 GB HBM3 @ 3.35 TBps | NVLink Full Mesh @ 900 GBps" and
# "A100 40GB/80GB | ... | NVLink Full Mesh @ 600 GBps": HBM3 at 3.35 TB/s and a 900 GB/s NVLink mesh
# are the H100 SXM5 board's, a full NVLink mesh of A100s is NVSwitch, the SXM4 board's (PCIe cards
# pair by bridges only). H100-MEGA is the A3 Mega machine's H100 (same board). Memory: GpuInfo.
GCP_BOARDS = {"A100": "A100 SXM", "A100-80GB": "A100 SXM", "H100": "H100 SXM", "H100-MEGA": "H100 SXM"}
PRICE_DECIMALS = 5  # fetch_gcp.py's PRICE_ROUNDING: the sum of two such prices, without float noise


class GcpTable(CatalogTable):
    """GCP's table prices the GPUs and the VMs apart (skypilot-org/skypilot
    `sky/catalog/data_fetchers/fetch_gcp.py` @ 21fd55418804a41d20fe7563db9c808763159722): a VM row
    (`InstanceType`, vCPUs, memory, the CPU and RAM price of the machine type) and a GPU row
    (`AcceleratorName`, `AcceleratorCount`, `GpuInfo`, the price of the GPUs alone) per zone, with
    no `InstanceType`. What a user pays for the GPUs is both: SkyPilot picks the GPU row's host in
    the same region and zone (`scrapers.skypilot.gcp_host`) and adds the two `Price`s and the two
    `SpotPrice`s (no sum when either is missing). One offer per GPU row, `extra` keeping both
    parts; a GPU row whose zone lacks its host is refused `host_missing`, as SkyPilot drops it. A
    GPU part that is no positive price makes no offer: the host alone is no GPU quote. Host rows may
    cost 0 (fetch_gcp.py: "GCP does not have A4 instance in SKUs API yet"). TPU rows are no GPUs."""

    platform = "gcp"
    required = ("AcceleratorName", "AcceleratorCount", "Region", "AvailabilityZone", "Price")
    gpu_name_fields = ("AcceleratorName",)
    zone_column = "AvailabilityZone"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._hosts: dict[tuple[str, str], list[Mapping[str, Any]]] = {}

    def learn(self, found: Iterable[Mapping[str, Any]]) -> None:
        self._hosts = skypilot.gcp_hosts_by_zone(found)

    def is_gpu_row(self, row: Mapping[str, Any]) -> bool:
        return super().is_gpu_row(row) and not str(row.get("AcceleratorName") or "").lower().startswith(
            "tpu-"
        )

    def row_offers(self, row: Mapping[str, Any], count: int) -> Iterator[Result]:
        accelerator, region, zone = (
            str(row["AcceleratorName"]),
            str(row["Region"]),
            str(row["AvailabilityZone"]),
        )
        host = skypilot.gcp_host(accelerator, count, self._hosts.get((region.lower(), zone.lower()), ()))
        if host is None:
            yield Refused("host_missing", row)
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

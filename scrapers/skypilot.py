"""SkyPilot's hosted catalog files (`catalogs/v8/<cloud>/vms.csv`): how their cells read.

How the one reader of their rows (`scrapers/skypilot_offers.py`) reads a cell, as SkyPilot itself
reads the files (skypilot-org/skypilot `sky/catalog/common.py` and `gcp_catalog.py` @
005261080a6b8102f3d95ff2147a855250f40272):

- `GpuInfo` is written three ways by the clouds' fetchers: a Python dict literal (gcp, nebius,
  shadeform, jarvislabs, seeweb), that literal with `null` in it (hyperstack's fetcher swaps the
  quotes of `json.dumps` output, so `'Manufacturer': null` is no Python literal), and real JSON
  (primeintellect). `gpu_info` reads all three.
- GCP prices a GPU and the VM it is attached to on separate rows: `gcp_host` picks the host VM
  SkyPilot prices a GPU row with (`gcp_catalog.list_accelerators`, `_get_host_instance_type`).
"""

from __future__ import annotations

import ast
import functools
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from scrapers import parsing

MIB_PER_GIB = 1024  # SizeInMiB / 1024 is the per-GPU GiB SkyPilot shows (list_accelerators_impl)


def gpu_info(text: str | None) -> dict[str, Any] | None:
    """A `GpuInfo` cell as a dict, or None when the cell is empty or in none of its three dialects."""
    if not text or not text.strip():
        return None
    readers = (ast.literal_eval, json.loads, lambda cell: json.loads(cell.replace("'", '"')))
    for read in readers:
        try:
            value = read(text)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
        return value if isinstance(value, dict) else None
    return None


@functools.lru_cache(maxsize=4096)
def cell_memory_mib(text: str | None) -> float | None:
    """`gpu_memory_mib` of a `GpuInfo` cell, read once per distinct cell: a catalog repeats a few
    cells over thousands of rows, and reading one (`ast.literal_eval`) is most of a row's time."""
    return gpu_memory_mib(gpu_info(text))


def gpu_memory_mib(info: Mapping[str, Any] | None) -> float | None:
    """`Gpus[0].MemoryInfo.SizeInMiB` of a read `GpuInfo` (the figure SkyPilot divides by 1024);
    None when absent, not a number, or not positive (seeweb writes 0 for a card its fetcher has no
    memory for)."""
    gpus = info.get("Gpus") if info else None
    first = gpus[0] if isinstance(gpus, list) and gpus and isinstance(gpus[0], Mapping) else None
    memory = first.get("MemoryInfo") if first else None
    size = parsing.number(memory.get("SizeInMiB")) if isinstance(memory, Mapping) else None
    return size if size is not None and size > 0 else None


def gpu_count(value: Any) -> int | None:
    """`AcceleratorCount` as a whole number of GPUs ("8", "8.0": SkyPilot compares it as a float),
    or None for a missing, non-positive or fractional count (a GPU share is no GPU rental)."""
    count = parsing.number(value)
    if count is None or count <= 0 or not count.is_integer():
        return None
    return int(count)


# --- GCP: the host VM of a GPU row (gcp_catalog.py @ 005261080a6b8102f3d95ff2147a855250f40272) ---

# `_ACC_INSTANCE_TYPE_DICTS`: the accelerators GCP attaches to machine types of their own (A2 for
# A100, G2 for L4, A3 for H100/H200, A4 for B200), by GPU count.
GCP_FIXED_HOSTS: dict[str, dict[int, tuple[str, ...]]] = {
    "A100": {1: ("a2-highgpu-1g",), 2: ("a2-highgpu-2g",), 4: ("a2-highgpu-4g",), 8: ("a2-highgpu-8g",),
             16: ("a2-megagpu-16g",)},
    "A100-80GB": {1: ("a2-ultragpu-1g",), 2: ("a2-ultragpu-2g",), 4: ("a2-ultragpu-4g",),
                  8: ("a2-ultragpu-8g",)},
    "L4": {1: ("g2-standard-4", "g2-standard-8", "g2-standard-12", "g2-standard-16", "g2-standard-32"),
           2: ("g2-standard-24",), 4: ("g2-standard-48",), 8: ("g2-standard-96",)},
    "H100": {1: ("a3-highgpu-1g",), 2: ("a3-highgpu-2g",), 4: ("a3-highgpu-4g",), 8: ("a3-highgpu-8g",)},
    "H100-MEGA": {8: ("a3-megagpu-8g",)},
    "H200": {8: ("a3-ultragpu-8g",)},
    "B200": {8: ("a4-highgpu-8g",)},
}  # fmt: skip
# Every other GPU goes on an N1 machine (`_DEFAULT_HOST_VM_FAMILY`) with at least this many vCPUs
# (`_NUM_ACC_TO_NUM_CPU`, "based on" AWS's p2/p3/g4dn) and 4 GiB of memory per vCPU
# (`_DEFAULT_GPU_MEMORY_CPU_RATIO`).
GCP_N1_FAMILIES = ("n1-standard", "n1-highmem", "n1-highcpu")
GCP_N1_VCPUS: dict[str, dict[int, int]] = {
    "K80": {1: 4, 2: 8, 4: 16, 8: 32, 16: 64},
    "V100": {1: 8, 2: 16, 4: 32, 8: 64},
    "T4": {1: 4, 2: 8, 4: 48},
    "P100": {1: 8, 2: 16, 4: 32, 8: 64},
    "DEFAULT": {1: 8, 2: 16, 4: 32, 8: 64, 16: 128},
}
GCP_N1_MEMORY_GIB_PER_VCPU = 4


def gcp_hosts_by_zone(rows: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str], list[Mapping[str, Any]]]:
    """The VM rows of a GCP catalog (an `InstanceType`, no accelerator) by (region, zone), lower case
    as `_get_host_instance_type` compares them, in file order."""
    hosts: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for row in rows:
        if row.get("InstanceType") and not row.get("AcceleratorName"):
            zone = (str(row.get("Region") or "").lower(), str(row.get("AvailabilityZone") or "").lower())
            hosts.setdefault(zone, []).append(row)
    return hosts


def gcp_host(
    accelerator: str, count: int, zone_hosts: Sequence[Mapping[str, Any]]
) -> Mapping[str, Any] | None:
    """The host SkyPilot prices a GPU row of `count` `accelerator`s with, among the VM rows of its
    zone: the cheapest (the first of equals, as pandas' `idxmin`) of the machine types that take it,
    or None when the zone has none (SkyPilot drops the GPU row: "a2-megagpu-16g in asia-northeast1")."""
    if accelerator in GCP_FIXED_HOSTS:
        types = GCP_FIXED_HOSTS[accelerator].get(count, ())
        fits = [row for row in zone_hosts if row["InstanceType"] in types]
    else:
        vcpus = GCP_N1_VCPUS.get(accelerator, GCP_N1_VCPUS["DEFAULT"]).get(count)
        if vcpus is None:
            return None
        fits = [
            row
            for row in zone_hosts
            if str(row["InstanceType"]).startswith(GCP_N1_FAMILIES)
            and (parsing.number(row.get("vCPUs")) or 0) >= vcpus
            and (parsing.number(row.get("MemoryGiB")) or 0) >= vcpus * GCP_N1_MEMORY_GIB_PER_VCPU
        ]
    priced = [row for row in fits if parsing.number(row.get("Price")) is not None]
    return min(priced, key=lambda row: parsing.number(row["Price"]) or 0.0, default=None)

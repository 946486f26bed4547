"""scrapers/skypilot.py: the cells of SkyPilot's catalog files, and GCP's host rule, on the forms
the real files write (the catalog fixtures' rows, their README.md)."""

from __future__ import annotations

from typing import Any

import pytest

from scrapers import skypilot

GCP_INFO = "{'Gpus': [{'MemoryInfo': {'SizeInMiB': 40960}}]}"
HYPERSTACK_INFO = (  # json.dumps with its quotes swapped: `null` is no Python literal
    "{'Gpus': [{'Name': 'L40', 'Manufacturer': null, 'Count': 1, 'MemoryInfo': {'SizeInMiB': 49152}}], "
    "'TotalGpuMemoryInMiB': 49152}"
)
PRIMEINTELLECT_INFO = (
    '{"Gpus":[{"Name":"B200","Count":8,"MemoryInfo":{"SizeInMiB":1474560}}],"TotalGpuMemoryInMiB":11796480}'
)
SEEWEB_INFO = "{'Gpus': [{'Name': 'RTX PRO 6000 96GB', 'Count': 1.0, 'MemoryInfo': {'SizeInMiB': 0}}]}"


@pytest.mark.parametrize(
    ("cell", "mib"),
    [
        (GCP_INFO, 40960.0),
        (HYPERSTACK_INFO, 49152.0),
        (PRIMEINTELLECT_INFO, 1474560.0),
        (SEEWEB_INFO, None),  # 0: the fetcher had no figure
        ("tpu-v6e-1", None),  # GCP's TPU rows carry their name there
        ("", None),
        (None, None),
        ("{'Gpus': []}", None),
    ],
)
def test_gpu_info_reads_the_three_dialects(cell: str | None, mib: float | None) -> None:
    assert skypilot.gpu_memory_mib(skypilot.gpu_info(cell)) == mib


@pytest.mark.parametrize(
    ("value", "count"), [("8", 8), ("8.0", 8), (8.0, 8), ("0", None), ("0.5", None), ("", None), (None, None)]
)
def test_gpu_count_is_a_whole_positive_number(value: Any, count: int | None) -> None:
    assert skypilot.gpu_count(value) == count


def _vm(instance_type: str, vcpus: float, memory_gib: float, price: str | None) -> dict[str, Any]:
    return {
        "InstanceType": instance_type,
        "vCPUs": str(vcpus),
        "MemoryGiB": str(memory_gib),
        "Region": "us-central1",
        "AvailabilityZone": "us-central1-a",
        "Price": price,
    }


ZONE = [
    _vm("n2-highcpu-4", 4, 4, "0.14339"),  # cheapest, but GPUs go on N1 machines only
    _vm("n1-standard-4", 4, 15, "0.19"),  # under 4 GiB per vCPU
    _vm("n1-highmem-4", 4, 26, "0.23661"),
    _vm("n1-standard-8", 8, 30, "0.38"),
    _vm("n1-highmem-8", 8, 52, "0.47321"),
    _vm("n1-highcpu-64", 64, 57.6, None),  # no price: never a host
    _vm("g2-standard-8", 8, 32, "0.29358"),
    _vm("g2-standard-4", 4, 16, "0.14679"),
    _vm("a2-highgpu-1g", 12, 85, "0.73948"),
]


@pytest.mark.parametrize(
    ("accelerator", "count", "host"),
    [
        ("T4", 1, "n1-highmem-4"),  # 4 vCPUs, 16 GiB
        ("V100", 1, "n1-highmem-8"),  # 8 vCPUs, 32 GiB: n1-standard-8 has 30
        ("P4", 1, "n1-highmem-8"),  # no table of its own: DEFAULT
        ("T4", 4, None),  # 48 vCPUs: no such N1 machine in this zone
        ("T4", 8, None),  # GCP attaches no 8 T4s
        ("L4", 1, "g2-standard-4"),  # the cheapest of the five G2 shapes SkyPilot allows
        ("A100", 1, "a2-highgpu-1g"),
        ("A100", 16, None),  # no a2-megagpu-16g in the zone
        ("H100", 3, None),  # a count GCP does not sell
    ],
)
def test_gcp_host_is_the_cheapest_machine_type_that_takes_the_gpus(
    accelerator: str, count: int, host: str | None
) -> None:
    chosen = skypilot.gcp_host(accelerator, count, ZONE)
    assert (chosen["InstanceType"] if chosen else None) == host


def test_gcp_hosts_are_indexed_by_region_and_zone_without_gpu_rows() -> None:
    gpu_row = {
        "AcceleratorName": "T4",
        "AcceleratorCount": "1",
        "Region": "us-central1",
        "AvailabilityZone": "us-central1-a",
    }
    hosts = skypilot.gcp_hosts_by_zone([*ZONE, gpu_row])
    assert list(hosts) == [("us-central1", "us-central1-a")]
    assert len(hosts["us-central1", "us-central1-a"]) == len(ZONE)

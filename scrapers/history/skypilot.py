"""SkyPilot catalog `vms.csv` (one cloud, one dated version) -> offers.

Semantics (price-sources.md §2, samples/README.md):
- `Price` and `SpotPrice` are USD per hour for the whole instance (`AcceleratorCount`
  GPUs), not per GPU. An empty or zero `SpotPrice` means no spot offer (Vast writes 0.00).
- `Region` is the cloud's own region string (`us-east-1`, `"Texas, US, NA"`), kept as written.
- No row says anything about stock: SkyPilot writes Lambda rows for every region
  whatever the capacity, so `available_gpus` stays NULL (unknown, not zero).
- `GpuInfo` is a Python dict literal, or one of its two other dialects (`scrapers.skypilot.gpu_info`).
- Rows without an accelerator are CPU instances: skipped and counted.
- The raw GPU name is `InstanceType`, the cloud's own name for the offer: it keeps the form
  (`gpu_1x_h100_sxm5`, `1x-H100_NVL-...`) that `AcceleratorName` (`H100`) drops;
  `AcceleratorName` is the fallback and stays in `extra`.
- A file with a header and no rows is a broken catalog run: a failed day, not an empty one.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import numpy as np
import pandas as pd

from scrapers import skypilot
from scrapers.history.offers import (
    MAX_COUNT,
    ImportedFile,
    PlatformDay,
    canonical_gpus,
    first_failure,
    offer_frame,
    rejected_frame,
)
from scrapers.history.paths import midnight_utc, observation_day
from scrapers.history.platforms import platform_slug

FORMAT = "skypilot"
DESCRIPTION = (
    "SkyPilot catalog vms.csv of one cloud (price per instance-hour; date from --date or the file name)"
)

_REQUIRED = ("InstanceType", "AcceleratorName", "AcceleratorCount", "Price", "Region", "GpuInfo", "SpotPrice")
_CLOUD_IN_NAME = re.compile(r"^(?P<cloud>[A-Za-z0-9.-]+?)_vms(?:[_.-]|$)")
# Clouds whose SkyPilot fetcher writes the whole instance's GPU memory into GpuInfo's
# MemoryInfo.SizeInMiB (vast_vms_2026-04-29.csv: 1x RTX5090 32607 MiB, 2x 65214 MiB), where
# the catalog spec and Lambda's fetcher write it per GPU (lambda_vms: 1x and 8x H100 both 81920).
_GPU_INFO_MEMORY_PER_INSTANCE = frozenset({"vastai"})
# SkyPilot's Vast instance types are "{num_gpus}x-{gpu_name}-{cpu_cores}-{cpu_ram_mib}" (fetch_vast.py):
# the trailing CPU and RAM figures are not part of the GPU's name.
_CPU_RAM_SUFFIX = re.compile(r"(?:-\d+){2}$")
_MIB_PER_GB = 1024  # nameplate "80GB" cards report 81920 MiB: the catalog's GB are GiB


def read_offers(
    path: Path, *, observed_on: dt.date | None = None, platform: str | None = None
) -> ImportedFile:
    """Read one cloud's vms.csv; the cloud is `platform`, else the file's (lambda_vms_*.csv, vast/vms.csv)."""
    day = observation_day(path, observed_on)
    slug = platform_slug(platform) if platform else _platform_in_name(path)
    raw = pd.read_csv(path, dtype=str, keep_default_na=False)
    missing = [column for column in _REQUIRED if column not in raw.columns]
    if missing:
        raise ValueError(f"{path.name}: not a SkyPilot vms.csv, missing columns {missing}")
    days = (PlatformDay(slug, day),)
    gpu_rows = raw[raw["AcceleratorName"].str.strip() != ""]
    rows_not_gpu = len(raw) - len(gpu_rows)

    count = pd.to_numeric(gpu_rows["AcceleratorCount"], errors="coerce")
    price = pd.to_numeric(gpu_rows["Price"], errors="coerce")
    memory_mib = gpu_rows["GpuInfo"].map(_gpu_memory_mib)
    reasons = first_failure(
        [
            (count.isna() | (count <= 0), "AcceleratorCount is not a positive number"),
            (
                count.notna() & (count % 1 != 0),
                "AcceleratorCount is fractional (a GPU share, not a GPU rental)",
            ),
            (count > MAX_COUNT, f"AcceleratorCount is over {MAX_COUNT}"),
            (price.isna(), "Price is not a number"),
            (price <= 0, "Price is not positive"),
        ],
        gpu_rows.index,
    )
    good = reasons.isna()
    rows, count, price, memory_mib = gpu_rows[good], count[good].astype(int), price[good], memory_mib[good]
    if slug in _GPU_INFO_MEMORY_PER_INSTANCE:
        memory_mib = memory_mib / count
    memory_gb = (memory_mib / _MIB_PER_GB).round(1)
    gpu = canonical_gpus(
        [rows["InstanceType"].str.replace(_CPU_RAM_SUFFIX, "", regex=True), rows["AcceleratorName"]],
        memory_gb,
    )
    spot_price = pd.to_numeric(rows["SpotPrice"], errors="coerce")

    common = {
        "platform": slug,
        "offer_id": rows["InstanceType"] + "@" + rows["Region"],
        "gpu_name_raw": rows["InstanceType"],
        "gpu_count": count,
        "price_currency": "USD",
        "price_per": "instance",
        "billing_period": "hour",
        "observed_at": midnight_utc(day),
        "source_url": path.resolve().as_uri(),
        "gpu_model": gpu["gpu_model"],
        "gpu_memory_gb": gpu["gpu_memory_gb"],
        "gpu_form": gpu["gpu_form"],
        "region": rows["Region"].where(rows["Region"].str.strip() != ""),
        "extra": pd.Series(
            pd.DataFrame(
                {
                    "instance_type": rows["InstanceType"],
                    "accelerator_name": rows["AcceleratorName"],
                    "vcpus": pd.to_numeric(rows.get("vCPUs", ""), errors="coerce"),
                    "memory_gib": pd.to_numeric(rows.get("MemoryGiB", ""), errors="coerce"),
                }
            ).to_dict(orient="records"),
            index=rows.index,
        ),
    }
    on_demand = offer_frame({**common, "price_amount": price, "pricing_type": "on_demand"}, rows.index)
    has_spot = (spot_price > 0).fillna(False)
    spot = offer_frame(
        {**_subset(common, has_spot), "price_amount": spot_price[has_spot], "pricing_type": "spot"},
        rows.index[has_spot],
    )
    items = pd.concat([on_demand, spot], ignore_index=True)
    return ImportedFile(
        path=path,
        format=FORMAT,
        items=items,
        days=days,
        rows_read=len(raw),
        rows_not_gpu=rows_not_gpu,
        rejected=rejected_frame(gpu_rows[~good], reasons, slug, day),
        problem=_problem(path, raw, rows_not_gpu),
    )


def _platform_in_name(path: Path) -> str:
    if path.name == "vms.csv":
        return platform_slug(path.parent.name)
    match = _CLOUD_IN_NAME.match(path.name)
    if match is None:
        raise ValueError(f"{path.name}: cannot tell the cloud from the file name; pass --platform")
    return platform_slug(match["cloud"])


def _gpu_memory_mib(gpu_info: str) -> float:
    """`MemoryInfo.SizeInMiB` of the first GPU in a GpuInfo cell, NaN when absent or unreadable."""
    mib = skypilot.gpu_memory_mib(skypilot.gpu_info(gpu_info))
    return np.nan if mib is None else mib


def _subset(columns: dict, mask: pd.Series) -> dict:
    return {name: value[mask] if isinstance(value, pd.Series) else value for name, value in columns.items()}


def _problem(path: Path, raw: pd.DataFrame, rows_not_gpu: int) -> str | None:
    if raw.empty:
        return (
            f"{path.name} has a header and no rows: a broken catalog run, not a sold-out cloud; "
            "the offers seen before stay current"
        )
    if rows_not_gpu == len(raw):
        return f"{path.name} lists only CPU instance types, no GPU offer"
    return None
